// mkbias.mjs OUTDIR: MatMul/Gemm + bias Add models for tests/bats/bias.bats (opset 13),
// x float32 [2, 7, 24] (Gemm: [14, 24]), W [24, 40] constant:
//   bias.onnx        y = x W + b, b [40]: the block's whole epilogue is the bias (bias_n)
//   bias_relu.onnx   y = Relu(x W + b): bias_n, then the runtime's Relu on the accumulators
//   bias_res.onnx    y = (b1 + x W) + r, b1 [1, 40] on the left, r an input [2, 7, 40]:
//                    bias_n, then a generated epilogue adding r
//   bias_both.onnx   y1 = x W + b and y2 = Relu(y1), both graph outputs: y1 must be stored,
//                    so the bias stays in the generated epilogue
//   full.onnx        y = x W + c, c [7, 40]: no row vector, the generated epilogue adds it
//   bias_reuse.onnx  y = (x W + b) + x W: the unbiased product is read again after the bias
//                    Add, so the bias stays in the generated epilogue
//   gemm.onnx        y = Relu(Gemm(x2, W) + b), x2 [14, 24]: bias_n on the packed Gemm
import path from 'node:path';
import { encodeModel, writeAtomic, FLOAT } from '../../tools/bench/onnx_build.mjs';

const out = process.argv[2];
if (!out) { console.error('usage: mkbias.mjs OUTDIR'); process.exit(2); }
const vals = (n, s) => Float32Array.from({ length: n }, (_, i) => (((i * s) % 17) - 8) / 16);
const W = ['W', FLOAT, [24, 40], vals(24 * 40, 5)];
const b = ['b', FLOAT, [40], vals(40, 3)];
const x = ['x', FLOAT, [2, 7, 24]];
const y = ['y', FLOAT, [2, 7, 40]];
const model = (name, spec) => writeAtomic(path.join(out, name), encodeModel({ opset: 13, ...spec }));
model('bias.onnx', { inputs: [x], outputs: [y], inits: [W, b], nodes: [['MatMul', ['x', 'W'], ['m']], ['Add', ['m', 'b'], ['y']]] });
model('bias_relu.onnx', { inputs: [x], outputs: [y], inits: [W, b],
  nodes: [['MatMul', ['x', 'W'], ['m']], ['Add', ['m', 'b'], ['a']], ['Relu', ['a'], ['y']]] });
model('bias_res.onnx', { inputs: [x, ['r', FLOAT, [2, 7, 40]]], outputs: [y], inits: [W, ['b1', FLOAT, [1, 40], vals(40, 7)]],
  nodes: [['MatMul', ['x', 'W'], ['m']], ['Add', ['b1', 'm'], ['a']], ['Add', ['a', 'r'], ['y']]] });
model('bias_both.onnx', { inputs: [x], outputs: [['y1', FLOAT, [2, 7, 40]], ['y2', FLOAT, [2, 7, 40]]], inits: [W, b],
  nodes: [['MatMul', ['x', 'W'], ['m']], ['Add', ['m', 'b'], ['y1']], ['Relu', ['y1'], ['y2']]] });
model('bias_reuse.onnx', { inputs: [x], outputs: [y], inits: [W, b],
  nodes: [['MatMul', ['x', 'W'], ['m']], ['Add', ['m', 'b'], ['a']], ['Add', ['a', 'm'], ['y']]] });
model('full.onnx', { inputs: [x], outputs: [y], inits: [W, ['c', FLOAT, [7, 40], vals(280, 3)]],
  nodes: [['MatMul', ['x', 'W'], ['m']], ['Add', ['m', 'c'], ['y']]] });
model('gemm.onnx', { inputs: [['x2', FLOAT, [14, 24]]], outputs: [['y', FLOAT, [14, 40]]], inits: [W, b],
  nodes: [['Gemm', ['x2', 'W'], ['m']], ['Add', ['m', 'b'], ['a']], ['Relu', ['a'], ['y']]] });
