// mkreduce.mjs OUTDIR: Reduce* models for tests/bats/reduce.bats (opset 11: axes as an
// attribute on every Reduce*), x float32 [3, 5, 13]:
//   OP_trail.onnx   axes [1, 2], keepdims 1: the reduced axes are the trailing ones, 65
//                   elements per output (ecg-lower's reduce_rows: four partial accumulators)
//   OP_last.onnx    axes [2], keepdims 0: 13 per output (reduce_rows, a tail of 1)
//   OP_lead.onnx    axes [0, 1], keepdims 1: not trailing (the loop nest accumulating in y)
// for OP in ReduceSum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSumExp; and
//   max_nan.onnx    ReduceMax over axes [1] of x [2, 13] with a data set (max_nan/data)
//                   whose first row holds a NaN at column 1 (the second partial accumulator):
//                   y = [NaN, 0.9] (Max propagates NaN, as ONNX Runtime and numpy do)
import path from 'node:path';
import { encodeModel, tensorProto, onnxRoot, writeAtomic, FLOAT } from '../../tools/bench/onnx_build.mjs';

const out = process.argv[2];
if (!out) { console.error('usage: mkreduce.mjs OUTDIR'); process.exit(2); }
const ops = ['ReduceSum', 'ReduceMean', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1', 'ReduceL2', 'ReduceSumSquare',
  'ReduceLogSumExp'];
const shapes = { trail: [[1, 2], 1, [3, 1, 1]], last: [[2], 0, [3, 5]], lead: [[0, 1], 1, [1, 1, 13]] };
for (const op of ops)
  for (const [k, [axes, keepdims, yd]] of Object.entries(shapes))
    writeAtomic(path.join(out, `${op}_${k}.onnx`), encodeModel({ opset: 11, inputs: [['x', FLOAT, [3, 5, 13]]],
      outputs: [['y', FLOAT, yd]], nodes: [[op, ['x'], ['y'], { axes, keepdims }]] }));
const T = onnxRoot().lookupType('onnx.TensorProto');
const enc = (name, dims, vals) => T.encode(T.create(tensorProto(name, FLOAT, dims, vals))).finish();
const x = new Float32Array(26);
for (let i = 0; i < 26; i++) x[i] = ((i * 7) % 13) / 20 - 0.3;
x[1] = NaN;
x[13 + 5] = 0.9;
const row1 = Math.max(...x.slice(13));
writeAtomic(path.join(out, 'max_nan.onnx'), encodeModel({ opset: 11, inputs: [['x', FLOAT, [2, 13]]], outputs: [['y', FLOAT, [2]]],
  nodes: [['ReduceMax', ['x'], ['y'], { axes: [1], keepdims: 0 }]] }));
writeAtomic(path.join(out, 'max_nan/data/input_0.pb'), enc('x', [2, 13], x));
writeAtomic(path.join(out, 'max_nan/data/output_0.pb'), enc('y', [2], new Float32Array([NaN, row1])));
