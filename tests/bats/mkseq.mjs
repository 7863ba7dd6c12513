// mkseq.mjs OUTDIR: hand-made models for tests/bats/sequences.bats (issue 9: run-time
// sequences as graph inputs and outputs), with backend-test data sets (SequenceProto files,
// onnx-data.proto) whose expected outputs are computed here:
//   seq_ops.onnx   s: sequence(float [2]) input, p: int64 scalar; outputs
//                  a = SequenceAt(s, p) [2], n = SequenceLength(s), e = SequenceErase(s, p)
//                  data_ok/ (3 items, p = -1), data_badpos/ (p = 3: outside, P_run -2),
//                  data_badshape/ (the item at p has shape [3], not [2]: P_run -2)
//   seq_relu.onnx  Relu of a sequence input: refused by onnx2ecg naming the node
import path from 'node:path';
import { createRequire } from 'node:module';
import { onnxRoot, irVersionFor, encodeTensor, tensorProto, writeAtomic, FLOAT, INT64 } from '../../tools/bench/onnx_build.mjs';

const out = process.argv[2];
if (!out) { console.error('usage: mkseq.mjs OUTDIR'); process.exit(2); }
const root = onnxRoot();
// SequenceProto (onnx-data.proto, which Debian's libonnx-dev does not ship): the fields used
const require = createRequire(new URL('../../tools/bench/onnx_build.mjs', import.meta.url));
require('protobufjs').parse('syntax = "proto2"; package onnx; message SequenceProto { optional string name = 1; '
  + 'optional int32 elem_type = 2; repeated TensorProto tensor_values = 3; }', root);
const SeqP = root.lookupType('onnx.SequenceProto');
const seqFile = (name, code, items) => SeqP.encode(SeqP.create({ name, elemType: 1, tensorValues: items.map(([d, v]) => tensorProto('', code, d, v)) })).finish();

const tensorT = (code, dims) => ({ tensorType: { elemType: code, ...(dims ? { shape: { dim: dims.map((d) => ({ dimValue: d })) } } : {}) } });
const vi = (name, type) => ({ name, type });
const seqT = (code, dims) => ({ sequenceType: { elemType: tensorT(code, dims) } });
function save(file, g) {
  const M = root.lookupType('onnx.ModelProto');
  writeAtomic(path.join(out, file), M.encode(M.create({ irVersion: irVersionFor(13), producerName: 'ecg-mkseq', opsetImport: [{ domain: '', version: 13 }], graph: g })).finish());
}
save('seq_ops.onnx', { name: 'seq_ops', node: [
  { opType: 'SequenceAt', input: ['s', 'p'], output: ['a'], name: 'at' },
  { opType: 'SequenceLength', input: ['s'], output: ['n'], name: 'len' },
  { opType: 'SequenceErase', input: ['s', 'p'], output: ['e'], name: 'erase' }],
  input: [vi('s', seqT(FLOAT, [2])), vi('p', tensorT(INT64, []))],
  output: [vi('a', tensorT(FLOAT, [2])), vi('n', tensorT(INT64, [])), vi('e', seqT(FLOAT, [2]))] });
save('seq_relu.onnx', { name: 'seq_relu', node: [{ opType: 'Relu', input: ['s'], output: ['y'], name: 'relu' }],
  input: [vi('s', seqT(FLOAT, null))], output: [vi('y', seqT(FLOAT, null))] });

const items = [[[2], [1, 2]], [[2], [3, 4]], [[2], [5, -6]]];
function data(dir, its, p, a, e) {
  writeAtomic(path.join(out, dir, 'input_0.pb'), seqFile('s', FLOAT, its));
  writeAtomic(path.join(out, dir, 'input_1.pb'), encodeTensor('p', INT64, [], [p]));
  writeAtomic(path.join(out, dir, 'output_0.pb'), encodeTensor('a', FLOAT, [2], a));
  writeAtomic(path.join(out, dir, 'output_1.pb'), encodeTensor('n', INT64, [], [its.length]));
  writeAtomic(path.join(out, dir, 'output_2.pb'), seqFile('e', FLOAT, e));
}
data('seq_ops/data_ok', items, -1, [5, -6], items.slice(0, 2));
data('seq_ops/data_badpos', items, 3, [0, 0], items);
data('seq_ops/data_badshape', [[[2], [1, 2]], [[3], [7, 8, 9]]], 1, [0, 0], [[[2], [1, 2]]]);
