// mkseq.mjs OUTDIR: hand-made models for tests/bats/sequences.bats (issue 9: run-time
// sequences as graph inputs and outputs), with backend-test data sets (SequenceProto files,
// onnx-data.proto) whose expected outputs are computed here:
//   seq_ops.onnx   s: sequence(float [2]) input, p: int64 scalar; outputs
//                  a = SequenceAt(s, p) [2], n = SequenceLength(s), e = SequenceErase(s, p)
//                  data_ok/ (3 items, p = -1), data_badpos/ (p = 3: outside, P_run -2),
//                  data_badshape/ (the item at p has shape [3], not [2]: P_run -2)
//   seq_relu.onnx  Relu of a sequence input: refused by onnx2ecg naming the node
//   if_opt.onnx    c: bool; o: optional(sequence(float [2])) from an If whose then-branch is
//                  the empty Optional of that type and whose else-branch is
//                  Optional(SequenceConstruct(k)): data_then/ (empty), data_else/ (present)
//   loop_seq.onnx  x: float [2, 4], m: int64 trip count, s: sequence(float) carried through a
//                  Loop whose body inserts, at the front, x[:, i : i+2] sliced with run-time
//                  starts/ends (extents 2, 2, 2, 1, 0, 0, ...: they change per iteration);
//                  data_m3/ (s starts with one item), data_m6/ (s starts empty)
//   loop_optseq.onnx  o: optional(sequence(float)) carried through a Loop (body: an If on its
//                  flag starts a sequence [x[0]] or takes the element, then appends
//                  x[0 : i+1]); data_none/, data_some/
//   loop_seq_sum.onnx  loop_seq's slice also read by a ReduceSum: refused naming the node
import path from 'node:path';
import { createRequire } from 'node:module';
import { onnxRoot, irVersionFor, encodeTensor, tensorProto, writeAtomic, FLOAT, INT64, BOOL } from '../../tools/bench/onnx_build.mjs';

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
function save(file, g, opset = 13) {
  const M = root.lookupType('onnx.ModelProto');
  writeAtomic(path.join(out, file), M.encode(M.create({ irVersion: irVersionFor(opset), producerName: 'ecg-mkseq', opsetImport: [{ domain: '', version: opset }], graph: g })).finish());
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

// ---- optionals across If, sequences carried through Loop (items of changing shapes)
root.lookupType('onnx.ModelProto'); // (types resolved)
require('protobufjs').parse('syntax = "proto2"; package onnx; message OptionalProto { optional string name = 1; '
  + 'optional int32 elem_type = 2; optional TensorProto tensor_value = 3; optional SequenceProto sequence_value = 5; }', root);
const OptP = root.lookupType('onnx.OptionalProto');
const optSeqFile = (name, items) => OptP.encode(OptP.create(items === null ? { name, elemType: 3 }
  : { name, elemType: 3, sequenceValue: { name, elemType: 1, tensorValues: items.map(([d, v]) => tensorProto('', FLOAT, d, v)) } })).finish();
const optT = (t) => ({ optionalType: { elemType: t } });
const c = (name, code, dims, vals) => ({ opType: 'Constant', output: [name], attribute: [{ name: 'value', type: 4, t: tensorProto('', code, dims, vals) }] });
const g = (name, node, input, output) => ({ name, node, input, output });

save('if_opt.onnx', g('if_opt', [{ opType: 'If', input: ['c'], output: ['o'], name: 'if', attribute: [
  { name: 'then_branch', type: 5, g: g('then', [{ opType: 'Optional', output: ['e'], name: 'none',
    attribute: [{ name: 'type', type: 13, tp: seqT(FLOAT, [2]) }] }], [], [vi('e', optT(seqT(FLOAT, [2])))]) },
  { name: 'else_branch', type: 5, g: g('else', [c('k', FLOAT, [2], [7, -8]), { opType: 'SequenceConstruct', input: ['k'], output: ['s'] },
    { opType: 'Optional', input: ['s'], output: ['p'] }], [], [vi('p', optT(seqT(FLOAT, [2])))]) }] }],
  [vi('c', tensorT(BOOL, []))], [vi('o', optT(seqT(FLOAT, [2])))]), 16);
for (const [dir, cv, o] of [['data_then', 1, null], ['data_else', 0, [[[2], [7, -8]]]]]) {
  writeAtomic(path.join(out, 'if_opt', dir, 'input_0.pb'), encodeTensor('c', BOOL, [], [cv]));
  writeAtomic(path.join(out, 'if_opt', dir, 'output_0.pb'), optSeqFile('o', o));
}

// the body of loop_seq: sl = x[:, i : i+2] (starts and ends from the iteration number), s' = [sl] + s
const sliceBody = (seqIn, extra = []) => [
  { opType: 'Identity', input: ['ci'], output: ['co'] },
  c('one', INT64, [1], [1]), c('two', INT64, [1], [2]), c('ax', INT64, [1], [1]), c('zero', INT64, [], [0]),
  { opType: 'Reshape', input: ['i', 'one'], output: ['st'] },
  { opType: 'Add', input: ['st', 'two'], output: ['en'] },
  { opType: 'Slice', input: ['x', 'st', 'en', 'ax'], output: ['sl'], name: 'slice' },
  { opType: 'SequenceInsert', input: [seqIn, 'sl', 'zero'], output: ['so'] }, ...extra];
// acc: a float loop-carried value too, acc' = acc + ReduceSum(sl) (the slice read by a tensor operator)
function loopSeq(file, acc = false) {
  const bi = [vi('i', tensorT(INT64, [])), vi('ci', tensorT(BOOL, [])), vi('si', seqT(FLOAT, null))];
  const bo = [vi('co', tensorT(BOOL, [])), vi('so', seqT(FLOAT, null))];
  const extra = acc ? [{ opType: 'ReduceSum', input: ['sl'], output: ['rs'], name: 'sum', attribute: [{ name: 'keepdims', type: 2, i: 0 }] },
    { opType: 'Add', input: ['ai', 'rs'], output: ['ao'] }] : [];
  if (acc) { bi.push(vi('ai', tensorT(FLOAT, []))); bo.push(vi('ao', tensorT(FLOAT, []))); }
  save(file, g(file, [{ opType: 'Loop', input: ['m', '', 's', ...(acc ? ['a'] : [])], output: ['y', ...(acc ? ['a_out'] : [])], name: 'loop',
    attribute: [{ name: 'body', type: 5, g: g('body', sliceBody('si', extra), bi, bo) }] }],
  [vi('x', tensorT(FLOAT, [2, 4])), vi('m', tensorT(INT64, [])), vi('s', seqT(FLOAT, null)), ...(acc ? [vi('a', tensorT(FLOAT, []))] : [])],
  [vi('y', seqT(FLOAT, null)), ...(acc ? [vi('a_out', tensorT(FLOAT, []))] : [])]));
}
loopSeq('loop_seq.onnx');
loopSeq('loop_seq_sum.onnx', true);
const X = [1, 2, 3, 4, 5, 6, 7, 8]; // x [2, 4]
const cols = (a, b) => { // x[:, a:b] clamped to the 4 columns
  const lo = Math.min(a, 4), hi = Math.min(b, 4), v = [];
  for (let r = 0; r < 2; r++) for (let k = lo; k < hi; k++) v.push(X[r * 4 + k]);
  return [[2, hi - lo], v];
};
for (const [dir, m, init] of [['data_m3', 3, [[[1], [9]]]], ['data_m6', 6, []]]) {
  let seq = init.slice();
  for (let i = 0; i < m; i++) seq = [cols(i, i + 2), ...seq];
  writeAtomic(path.join(out, 'loop_seq', dir, 'input_0.pb'), encodeTensor('x', FLOAT, [2, 4], X));
  writeAtomic(path.join(out, 'loop_seq', dir, 'input_1.pb'), encodeTensor('m', INT64, [], [m]));
  writeAtomic(path.join(out, 'loop_seq', dir, 'input_2.pb'), seqFile('s', FLOAT, init));
  writeAtomic(path.join(out, 'loop_seq', dir, 'output_0.pb'), seqFile('y', FLOAT, seq));
}

// loop_optseq: an optional sequence carried; the body gives a plain sequence
{
  const b = { input: [vi('i', tensorT(INT64, [])), vi('ci', tensorT(BOOL, [])), vi('oi', optT(seqT(FLOAT, null)))],
    output: [vi('co', tensorT(BOOL, [])), vi('so', seqT(FLOAT, null))] };
  const node = [
    { opType: 'Identity', input: ['ci'], output: ['co'] },
    { opType: 'OptionalHasElement', input: ['oi'], output: ['has'] },
    { opType: 'If', input: ['has'], output: ['cur'], name: 'pick', attribute: [
      { name: 'then_branch', type: 5, g: g('take', [{ opType: 'OptionalGetElement', input: ['oi'], output: ['el'] }], [], [vi('el', seqT(FLOAT, null))]) },
      { name: 'else_branch', type: 5, g: g('start', [c('z', INT64, [1], [0]), c('o1', INT64, [1], [1]),
        { opType: 'Slice', input: ['x', 'z', 'o1'], output: ['x0'] }, { opType: 'SequenceConstruct', input: ['x0'], output: ['fresh'] }], [], [vi('fresh', seqT(FLOAT, null))]) }] },
    c('one', INT64, [1], [1]), c('z0', INT64, [1], [0]),
    { opType: 'Reshape', input: ['i', 'one'], output: ['i1'] },
    { opType: 'Add', input: ['i1', 'one'], output: ['en'] },
    { opType: 'Slice', input: ['x', 'z0', 'en', 'one'], output: ['sl'] },
    { opType: 'SequenceInsert', input: ['cur', 'sl'], output: ['so'] }];
  save('loop_optseq.onnx', g('loop_optseq', [{ opType: 'Loop', input: ['m', '', 'o'], output: ['y'], name: 'loop',
    attribute: [{ name: 'body', type: 5, g: g('body', node, b.input, b.output) }] }],
  [vi('x', tensorT(FLOAT, [2, 4])), vi('m', tensorT(INT64, [])), vi('o', optT(seqT(FLOAT, null)))], [vi('y', seqT(FLOAT, null))]), 16);
  const prefix = (k) => { const v = []; for (let r = 0; r < 2; r++) for (let j = 0; j < Math.min(k, 4); j++) v.push(X[r * 4 + j]); return [[2, Math.min(k, 4)], v]; };
  for (const [dir, init] of [['data_none', null], ['data_some', [[[3], [5, 6, 7]]]]]) {
    const m = 5;
    let seq = init === null ? [[[1, 4], [1, 2, 3, 4]]] : init.slice();
    for (let i = 0; i < m; i++) seq.push(prefix(i + 1));
    writeAtomic(path.join(out, 'loop_optseq', dir, 'input_0.pb'), encodeTensor('x', FLOAT, [2, 4], X));
    writeAtomic(path.join(out, 'loop_optseq', dir, 'input_1.pb'), encodeTensor('m', INT64, [], [m]));
    writeAtomic(path.join(out, 'loop_optseq', dir, 'input_2.pb'), optSeqFile('o', init));
    writeAtomic(path.join(out, 'loop_optseq', dir, 'output_0.pb'), seqFile('y', FLOAT, seq));
  }
}

// ---- SequenceMap over items of different shapes (run-time shapes in the body)
//   seqmap.onnx  x, z: sequence(float, rank 2), t: float [1]; body (in0, in1, in2) ->
//                a = in0 + in2, b = in0 * in1 (numpy broadcasting of the items' dims), s = Shape(in0)
//                data_ok/, data_badlen/ (z one item shorter: P_run -2), data_nobcast/ ([2,3] * [2,2]: -2)
//   seqmap_relu.onnx  a Relu on an item: refused naming the node
{
  const symT = (code, names) => ({ tensorType: { elemType: code, shape: { dim: names.map((p) => ({ dimParam: p })) } } });
  const body = (nodes, outs) => g('map', nodes, [vi('in0', symT(FLOAT, ['R', 'C'])), vi('in1', symT(FLOAT, ['P', 'Q'])), vi('in2', tensorT(FLOAT, [1]))], outs);
  const io = [[vi('x', seqT(FLOAT, null)), vi('z', seqT(FLOAT, null)), vi('t', tensorT(FLOAT, [1]))]];
  save('seqmap.onnx', g('seqmap', [{ opType: 'SequenceMap', input: ['x', 'z', 't'], output: ['a', 'b', 's'], name: 'map',
    attribute: [{ name: 'body', type: 5, g: body([
      { opType: 'Add', input: ['in0', 'in2'], output: ['o0'] }, { opType: 'Mul', input: ['in0', 'in1'], output: ['o1'] },
      { opType: 'Shape', input: ['in0'], output: ['o2'] }], [vi('o0', tensorT(FLOAT, null)), vi('o1', tensorT(FLOAT, null)), vi('o2', tensorT(INT64, [2]))]) }] }],
  io[0], [vi('a', seqT(FLOAT, null)), vi('b', seqT(FLOAT, null)), vi('s', seqT(INT64, [2]))]), 17);
  save('seqmap_relu.onnx', g('seqmap_relu', [{ opType: 'SequenceMap', input: ['x', 'z', 't'], output: ['a'], name: 'map',
    attribute: [{ name: 'body', type: 5, g: body([{ opType: 'Relu', input: ['in0'], output: ['o0'], name: 'relu' }], [vi('o0', tensorT(FLOAT, null))]) }] }],
  io[0], [vi('a', seqT(FLOAT, null))]), 17);
  // items [dims, values]; numpy broadcasting of two items (null: they do not broadcast)
  const numel = (d) => d.reduce((p, v) => p * v, 1);
  const item = (d, f) => [d, Array.from({ length: numel(d) }, (_, i) => f(i))];
  function bcast(op, [da, va], [db, vb]) {
    const r = Math.max(da.length, db.length), pa = [...Array(r - da.length).fill(1), ...da], pb = [...Array(r - db.length).fill(1), ...db];
    const dy = pa.map((a, k) => (a === pb[k] || pb[k] === 1 ? a : a === 1 ? pb[k] : -1));
    if (dy.includes(-1)) return null;
    const idx = (d, co) => co.reduce((o, c, k) => o * d[k] + (d[k] === 1 ? 0 : c), 0);
    const out = [];
    for (let j = 0; j < numel(dy); j++) {
      const co = []; let rem = j;
      for (let k = r - 1; k >= 0; k--) { co[k] = rem % dy[k]; rem = Math.floor(rem / dy[k]); }
      out.push(Math.fround(op(va[idx(pa, co)], vb[idx(pb, co)])));
    }
    return [dy, out];
  }
  const T = [[1], [0.5]];
  const X = [item([2, 3], (i) => i + 1), item([1, 4], (i) => -i), item([3, 1], (i) => 2 * i + 1)];
  const Z = [item([1, 3], (i) => 10 * (i + 1)), item([1, 1], () => 3), item([3, 5], (i) => i - 7)];
  function data(dir, xs, zs, ok) {
    const d = path.join(out, 'seqmap', dir);
    writeAtomic(path.join(d, 'input_0.pb'), seqFile('x', FLOAT, xs));
    writeAtomic(path.join(d, 'input_1.pb'), seqFile('z', FLOAT, zs));
    writeAtomic(path.join(d, 'input_2.pb'), encodeTensor('t', FLOAT, T[0], T[1]));
    const A = xs.map((x) => bcast((p, q) => p + q, x, T)), B = ok ? xs.map((x, i) => bcast((p, q) => p * q, x, zs[i])) : [];
    writeAtomic(path.join(d, 'output_0.pb'), seqFile('a', FLOAT, A));
    writeAtomic(path.join(d, 'output_1.pb'), seqFile('b', FLOAT, B));
    writeAtomic(path.join(d, 'output_2.pb'), seqFile('s', INT64, xs.map(([dd]) => [[dd.length], dd])));
  }
  data('data_ok', X, Z, true);
  data('data_badlen', X, Z.slice(0, 2), false);
  data('data_nobcast', X, [item([2, 2], (i) => i), Z[1], Z[2]], false);
}

// ---- a tensor of symbolic dims beside the sequences (a dynamic build): one compiled model, two sizes
//   seqmap_dyn.onnx  x: sequence(float ['N']), t: float ['K']; SequenceMap body in0 + in1 (numpy broadcasting)
//   loop_dyn.onnx    the same as a Loop over SequenceAt(x, i) reading t as a capture
//                    data_k3/ (t [3]), data_k1/ (t [1]) for both
//   loop_dyn_cap.onnx  the Loop reading Relu(t) (an intermediate of run-time size): refused
{
  const symT = (code, names) => ({ tensorType: { elemType: code, shape: { dim: names.map((p) => ({ dimParam: p })) } } });
  const io = [vi('x', { sequenceType: { elemType: symT(FLOAT, ['N']) } }), vi('t', symT(FLOAT, ['K']))];
  save('seqmap_dyn.onnx', g('seqmap_dyn', [{ opType: 'SequenceMap', input: ['x', 't'], output: ['y'], name: 'map',
    attribute: [{ name: 'body', type: 5, g: g('map', [{ opType: 'Add', input: ['in0', 'in1'], output: ['o'] }],
      [vi('in0', symT(FLOAT, ['N'])), vi('in1', symT(FLOAT, ['K']))], [vi('o', symT(FLOAT, ['N']))]) }] }],
  io, [vi('y', seqT(FLOAT, null))]), 17);
  save('loop_dyn.onnx', g('loop_dyn', [
    { opType: 'SequenceLength', input: ['x'], output: ['n'] },
    { opType: 'SequenceEmpty', output: ['e'], attribute: [{ name: 'dtype', type: 2, i: FLOAT }] },
    { opType: 'Loop', input: ['n', '', 'e'], output: ['y'], name: 'loop', attribute: [{ name: 'body', type: 5, g: g('body', [
      { opType: 'Identity', input: ['ci'], output: ['co'] },
      { opType: 'SequenceAt', input: ['x', 'i'], output: ['it'] },
      { opType: 'Add', input: ['it', 't'], output: ['s'] },
      { opType: 'SequenceInsert', input: ['si', 's'], output: ['so'] }],
      [vi('i', tensorT(INT64, [])), vi('ci', tensorT(BOOL, [])), vi('si', seqT(FLOAT, null))],
      [vi('co', tensorT(BOOL, [])), vi('so', seqT(FLOAT, null))]) }] }],
  io, [vi('y', seqT(FLOAT, null))]), 17);
  // loop_dyn_cap.onnx: the body reads Relu(t), an intermediate of symbolic dims: refused naming the Loop
  save('loop_dyn_cap.onnx', g('loop_dyn_cap', [
    { opType: 'Relu', input: ['t'], output: ['rt'] },
    { opType: 'SequenceLength', input: ['x'], output: ['n'] },
    { opType: 'SequenceEmpty', output: ['e'], attribute: [{ name: 'dtype', type: 2, i: FLOAT }] },
    { opType: 'Loop', input: ['n', '', 'e'], output: ['y'], name: 'loop', attribute: [{ name: 'body', type: 5, g: g('body', [
      { opType: 'Identity', input: ['ci'], output: ['co'] },
      { opType: 'SequenceAt', input: ['x', 'i'], output: ['it'] },
      { opType: 'Add', input: ['it', 'rt'], output: ['s'] },
      { opType: 'SequenceInsert', input: ['si', 's'], output: ['so'] }],
      [vi('i', tensorT(INT64, [])), vi('ci', tensorT(BOOL, [])), vi('si', seqT(FLOAT, null))],
      [vi('co', tensorT(BOOL, [])), vi('so', seqT(FLOAT, null))]) }] }],
  io, [vi('y', seqT(FLOAT, null))]), 17);
  for (const [dir, tv, items] of [['data_k3', [0.5, -1, 2], [[[3], [1, 2, 3]], [[1], [10]], [[3], [4, 5, 6]]]],
    ['data_k1', [100], [[[2], [1, 2]], [[5], [1, 2, 3, 4, 5]], [[1], [7]]]]]) {
    const ys = items.map(([d, v]) => {
      const n = Math.max(d[0], tv.length);
      return [[n], Array.from({ length: n }, (_, j) => Math.fround(v[d[0] === 1 ? 0 : j] + tv[tv.length === 1 ? 0 : j]))];
    });
    for (const m of ['seqmap_dyn', 'loop_dyn']) {
      writeAtomic(path.join(out, m, dir, 'input_0.pb'), seqFile('x', FLOAT, items));
      writeAtomic(path.join(out, m, dir, 'input_1.pb'), encodeTensor('t', FLOAT, [tv.length], tv));
      writeAtomic(path.join(out, m, dir, 'output_0.pb'), seqFile('y', FLOAT, ys));
    }
  }
}
