// mkvaluedims.mjs OUTDIR: hand-made models for tests/bats/valuedims.bats (issue 9: sizes
// that depend on input values, SOD²'s ISVDOS class), with backend-test data sets whose
// expected outputs are computed here:
//   range_decl.onnx  y = Range(0, n, 1) * 2 + 1 (n a float scalar input), y declared [4]:
//                    RDP binds the Range's value-determined length to 4;
//                    data_4/ (n = 4: right), data_6/ (n = 6: the run fails, P_run -2)
//   range_open.onnx  the same without a declared dim: refused by ecg-lower (not static)
//   slice_decl.onnx  y = Slice(x [5], s, e) + 1 with run-time s, e (int64 [1]), y declared [2]:
//                    data_13/ (s = 1, e = 3: right), data_14/ (e = 4: 3 elements, P_run -2)
import path from 'node:path';
import { onnxRoot, irVersionFor, tensorProto, encodeTensor, writeAtomic, FLOAT, INT64 } from '../../tools/bench/onnx_build.mjs';

const out = process.argv[2];
if (!out) { console.error('usage: mkvaluedims.mjs OUTDIR'); process.exit(2); }
const vi = (name, code, dims) => ({ name, type: { tensorType: { elemType: code, ...(dims ? { shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } : {}) } } });
const node = (op, input, output) => ({ opType: op, input, output, name: `${op}_${output[0]}` });
function save(file, g) {
  const M = onnxRoot().lookupType('onnx.ModelProto');
  writeAtomic(path.join(out, file), M.encode(M.create({ irVersion: irVersionFor(17), producerName: 'ecg-mkvaluedims', opsetImport: [{ domain: '', version: 17 }], graph: g })).finish());
}
const body = [node('Range', ['zero', 'n', 'one'], ['r']), node('Mul', ['r', 'two'], ['r2']), node('Add', ['r2', 'one'], ['y'])];
const inits = [tensorProto('zero', FLOAT, [], [0]), tensorProto('one', FLOAT, [], [1]), tensorProto('two', FLOAT, [], [2])];
save('range_decl.onnx', { name: 'range_decl', node: body, input: [vi('n', FLOAT, [])], output: [vi('y', FLOAT, [4])], initializer: inits });
save('range_open.onnx', { name: 'range_open', node: body, input: [vi('n', FLOAT, [])], output: [vi('y', FLOAT, ['L'])], initializer: inits });
for (const n of [4, 6]) {
  writeAtomic(path.join(out, `range_decl/data_${n}/input_0.pb`), encodeTensor('n', FLOAT, [], [n]));
  const y = Array.from({ length: 4 }, (_, i) => 2 * i + 1); // what a run compiled for 4 gives
  writeAtomic(path.join(out, `range_decl/data_${n}/output_0.pb`), encodeTensor('y', FLOAT, [4], y));
}

const xs = [10, 20, 30, 40, 50];
save('slice_decl.onnx', { name: 'slice_decl', node: [node('Slice', ['x', 's', 'e'], ['sl']), node('Add', ['sl', 'one'], ['y'])],
  input: [vi('x', FLOAT, [5]), vi('s', INT64, [1]), vi('e', INT64, [1])], output: [vi('y', FLOAT, [2])], initializer: [tensorProto('one', FLOAT, [], [1])] });
for (const [s, e] of [[1, 3], [1, 4]]) {
  const dir = `slice_decl/data_${s}${e}`;
  writeAtomic(path.join(out, dir, 'input_0.pb'), encodeTensor('x', FLOAT, [5], xs));
  writeAtomic(path.join(out, dir, 'input_1.pb'), encodeTensor('s', INT64, [1], [s]));
  writeAtomic(path.join(out, dir, 'input_2.pb'), encodeTensor('e', INT64, [1], [e]));
  writeAtomic(path.join(out, dir, 'output_0.pb'), encodeTensor('y', FLOAT, [2], [21, 31]));
}
