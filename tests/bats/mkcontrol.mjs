// mkcontrol.mjs OUTDIR: hand-made control-flow models for tests/bats/control.bats (issue 9
// item 4), built with the project's ONNX builder (tools/bench/onnx_build.mjs) plus GRAPH
// attributes, with backend-test data sets whose expected outputs are computed here:
//   if_branches.onnx  y = If(c, then: x * 2 (reads outer x), else: x - 1), x [2,3];
//                     data_true/, data_false/
//   if_guard.onnx     y = If(c, then: x * 2, else: a Loop of 10^12 iterations adding 1),
//                     data_true/ only: the else branch would run for hours if it ran at all
//   if_mismatch.onnx  the branches give [3] and [2]: refused by the static lowering
//   if_dyn.onnx       x [N] symbolic, y [N+2] = If(c, then: Pad(x, 1 each side, reflect),
//                     else: Concat(x[0:1], x, x[-1:]) - 1): a dynamic-shape build of one If
//                     (both branches flattened under guards); data_N_true/false, N 3 and 5
//   if_dyn_mismatch.onnx  the same If with the else branch Concat(x, x[0:1]) ([N+1]): refused
//   if_dyn_nested.onnx  If(c, then: If(max(x) > 0, then: Pad reflect, else: Concat - 1),
//                     else: Pad with zeros): nested guards, the inner condition computed in
//                     the outer branch; data_pos_true/false, data_neg_true (N 3)
//   scale_dyn.onnx    x [N, M] symbolic, k [1] (a run-time scalar), y = k * x + k: a One-to-One
//                     kernel over two symbols with a scalar operand (its local once shadowed
//                     the second symbol: the loop ran N * k elements); data_3x5 (k 2.5)
//   scan_rev.onnx     Scan-11 over x [2,4,3] along axis 1 in reverse: running sum state
//                     [2,3] (scan input axis 1 -> slices [2,3]) and the partial sums
//                     written along output axis 1 ([2,4,3]), plus a value read from outside;
//                     then Relu and Sigmoid on the scan output (a block for ecg-fuse)
//   scan8_batch.onnx  Scan-8, batch 2, reversed; both Scan models are checked against ORT
//   loop_nested.onnx  Loop (constant M) with an If per iteration; loop_dyn.onnx: run-time M
//   if_undef.onnx     a branch reading a name no scope defines
//   seq_static.onnx   Construct/Insert/Erase/ConcatFromSequence(new_axis)/Length, static
//   seq_runtime_pos.onnx  SequenceAt at a position known only at run time
import path from 'node:path';
import { onnxRoot, attr, tensorProto, irVersionFor, encodeTensor, writeAtomic, FLOAT, BOOL, INT64 } from '../../tools/bench/onnx_build.mjs';

const out = process.argv[2];
if (!out) { console.error('usage: mkcontrol.mjs OUTDIR'); process.exit(2); }
const GRAPH = 5;
const vi = (name, code, dims) => ({ name, type: { tensorType: { elemType: code, ...(dims ? { shape: { dim: dims.map((d) => ({ dimValue: d })) } } : {}) } } });
const node = (op, input, output, attrs = {}, graphs = {}) => ({
  opType: op, input, output, name: `${op}_${output[0]}`,
  attribute: [...Object.entries(attrs).map(([n, v]) => attr(n, v)), ...Object.entries(graphs).map(([n, g]) => ({ name: n, type: GRAPH, g }))],
});
const cst = (name, code, dims, values) => ({
  opType: 'Constant', input: [], output: [name], name: `c_${name}`, attribute: [{ name: 'value', type: 4, t: tensorProto(name, code, dims, values) }],
});
const graph = (name, nodes, inputs, outputs, inits = []) => ({ name, node: nodes, input: inputs, output: outputs, initializer: inits });

function save(file, opset, g) {
  const M = onnxRoot().lookupType('onnx.ModelProto');
  writeAtomic(path.join(out, file), M.encode(M.create({ irVersion: irVersionFor(opset), producerName: 'ecg-mkcontrol', opsetImport: [{ domain: '', version: opset }], graph: g })).finish());
}
function data(dir, ins, outs) {
  ins.forEach(([n, c, d, v], k) => writeAtomic(path.join(out, dir, `input_${k}.pb`), encodeTensor(n, c, d, v)));
  outs.forEach(([n, c, d, v], k) => writeAtomic(path.join(out, dir, `output_${k}.pb`), encodeTensor(n, c, d, v)));
}

const x = [0.5, -1, 2, 3.25, -0.75, 10];
const thenG = graph('then_g', [cst('two', FLOAT, [], [2]), node('Mul', ['x', 'two'], ['t_out'])], [], [vi('t_out', FLOAT, [2, 3])]);
const elseG = graph('else_g', [cst('one', FLOAT, [], [1]), node('Sub', ['x', 'one'], ['e_out'])], [], [vi('e_out', FLOAT, [2, 3])]);
save('if_branches.onnx', 13, graph('if_branches', [node('If', ['c'], ['y'], {}, { then_branch: thenG, else_branch: elseG })],
  [vi('x', FLOAT, [2, 3]), vi('c', BOOL, [])], [vi('y', FLOAT, [2, 3])]));
data('if_branches/data_true', [['x', FLOAT, [2, 3], x], ['c', BOOL, [], [1]]], [['y', FLOAT, [2, 3], x.map((v) => v * 2)]]);
data('if_branches/data_false', [['x', FLOAT, [2, 3], x], ['c', BOOL, [], [0]]], [['y', FLOAT, [2, 3], x.map((v) => v - 1)]]);

// else: Loop M = 10^12 (constant), no condition, state s = x, body s + 1
const body = graph('slow_body', [cst('one', FLOAT, [], [1]), node('Add', ['s_in', 'one'], ['s_out']), node('Identity', ['cond_in'], ['cond_out'])],
  [vi('i', INT64, []), vi('cond_in', BOOL, []), vi('s_in', FLOAT, [2, 3])], [vi('cond_out', BOOL, []), vi('s_out', FLOAT, [2, 3])]);
const slowG = graph('slow_else', [cst('big', INT64, [], [1e12]), node('Loop', ['big', '', 'x'], ['slow'], {}, { body })], [], [vi('slow', FLOAT, [2, 3])]);
save('if_guard.onnx', 13, graph('if_guard', [node('If', ['c'], ['y'], {}, { then_branch: thenG, else_branch: slowG })],
  [vi('x', FLOAT, [2, 3]), vi('c', BOOL, [])], [vi('y', FLOAT, [2, 3])]));
data('if_guard/data_true', [['x', FLOAT, [2, 3], x], ['c', BOOL, [], [1]]], [['y', FLOAT, [2, 3], x.map((v) => v * 2)]]);
data('if_guard/data_false', [['x', FLOAT, [2, 3], x], ['c', BOOL, [], [0]]], [['y', FLOAT, [2, 3], x.map((v) => v + 1e12)]]);

// a symbolic N: the branches compute N+2 values with Pad and with Slices along N
const vs = (name, code, dims) => ({ name, type: { tensorType: { elemType: code, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } } });
const padG = graph('pad_g', [cst('pads', INT64, [2], [1, 1]), node('Pad', ['xs', 'pads'], ['p_out'], { mode: 'reflect' })], [], [vs('p_out', FLOAT, ['M'])]);
const catG = graph('cat_g', [cst('s0', INT64, [1], [0]), cst('e1', INT64, [1], [1]), cst('sm', INT64, [1], [-1]), cst('big', INT64, [1], [1e18]),
  cst('one1', FLOAT, [], [1]), node('Slice', ['xs', 's0', 'e1'], ['head']), node('Slice', ['xs', 'sm', 'big'], ['tail']),
  node('Concat', ['head', 'xs', 'tail'], ['cat'], { axis: 0 }), node('Sub', ['cat', 'one1'], ['c_out'])], [], [vs('c_out', FLOAT, ['M'])]);
save('if_dyn.onnx', 13, graph('if_dyn', [node('If', ['c'], ['y'], {}, { then_branch: padG, else_branch: catG })],
  [vs('xs', FLOAT, ['N']), vi('c', BOOL, [])], [vs('y', FLOAT, ['M'])]));
const shortG = graph('short_g', [cst('s0', INT64, [1], [0]), cst('e1', INT64, [1], [1]), node('Slice', ['xs', 's0', 'e1'], ['head']),
  node('Concat', ['xs', 'head'], ['s_out'], { axis: 0 })], [], [vs('s_out', FLOAT, ['M'])]);
save('if_dyn_mismatch.onnx', 13, graph('if_dyn_mismatch', [node('If', ['c'], ['y'], {}, { then_branch: padG, else_branch: shortG })],
  [vs('xs', FLOAT, ['N']), vi('c', BOOL, [])], [vs('y', FLOAT, ['M'])]));
const zpadG = graph('zpad_g', [cst('zp', INT64, [2], [1, 1]), node('Pad', ['xs', 'zp'], ['z_out'])], [], [vs('z_out', FLOAT, ['M'])]);
const innerG = graph('inner_g', [node('ReduceMax', ['xs'], ['mx'], { keepdims: 0 }), cst('zero_f', FLOAT, [], [0]), node('Greater', ['mx', 'zero_f'], ['pos']),
  node('If', ['pos'], ['i_out'], {}, { then_branch: padG, else_branch: catG })], [], [vs('i_out', FLOAT, ['M'])]);
save('if_dyn_nested.onnx', 13, graph('if_dyn_nested', [node('If', ['c'], ['y'], {}, { then_branch: innerG, else_branch: zpadG })],
  [vs('xs', FLOAT, ['N']), vi('c', BOOL, [])], [vs('y', FLOAT, ['M'])]));
{
  const xp = x.slice(0, 3), xn = xp.map((v) => -Math.abs(v) - 0.25);
  data('if_dyn_nested/data_pos_true', [['xs', FLOAT, [3], xp], ['c', BOOL, [], [1]]], [['y', FLOAT, [5], [xp[1], ...xp, xp[1]]]]);
  data('if_dyn_nested/data_neg_true', [['xs', FLOAT, [3], xn], ['c', BOOL, [], [1]]], [['y', FLOAT, [5], [xn[0], ...xn, xn[2]].map((v) => v - 1)]]);
  data('if_dyn_nested/data_pos_false', [['xs', FLOAT, [3], xp], ['c', BOOL, [], [0]]], [['y', FLOAT, [5], [0, ...xp, 0]]]);
}
for (const n of [3, 5]) {
  const xv = x.slice(0, n);
  data(`if_dyn/data_${n}_true`, [['xs', FLOAT, [n], xv], ['c', BOOL, [], [1]]], [['y', FLOAT, [n + 2], [xv[1], ...xv, xv[n - 2]]]]);
  data(`if_dyn/data_${n}_false`, [['xs', FLOAT, [n], xv], ['c', BOOL, [], [0]]], [['y', FLOAT, [n + 2], [xv[0], ...xv, xv[n - 1]].map((v) => v - 1)]]);
}

save('scale_dyn.onnx', 13, graph('scale_dyn', [node('Mul', ['k', 'xs'], ['t']), node('Add', ['t', 'k'], ['y'])],
  [vs('xs', FLOAT, ['N', 'M']), vi('k', FLOAT, [1])], [vs('y', FLOAT, ['N', 'M'])]));
{
  const xv = Array.from({ length: 15 }, (_, i) => (i % 7) - 2.5);
  data('scale_dyn/data_3x5', [['xs', FLOAT, [3, 5], xv], ['k', FLOAT, [1], [2.5]]], [['y', FLOAT, [3, 5], xv.map((v) => v * 2.5 + 2.5)]]);
}

const a3 = graph('a3', [cst('a', FLOAT, [3], [1, 2, 3])], [], [vi('a', FLOAT, [3])]);
const b2 = graph('b2', [cst('b', FLOAT, [2], [1, 2])], [], [vi('b', FLOAT, [2])]);
save('if_mismatch.onnx', 13, graph('if_mismatch', [node('If', ['c'], ['y'], {}, { then_branch: a3, else_branch: b2 })], [vi('c', BOOL, [])], [vi('y', FLOAT, null)]));

// a branch reading 'nowhere', which no scope defines
const undefG = graph('undef_g', [node('Add', ['nowhere', 'x'], ['u_out'])], [], [vi('u_out', FLOAT, [2, 3])]);
save('if_undef.onnx', 13, graph('if_undef', [node('If', ['c'], ['y'], {}, { then_branch: undefG, else_branch: elseG })],
  [vi('x', FLOAT, [2, 3]), vi('c', BOOL, [])], [vi('y', FLOAT, [2, 3])]));

// Loop-13, M = 4 (an initializer), body: If(float(i) < 2, then s + 1, else s * 2) reading
// the body's own input s (captures at depth 2), scan output the new s: [4, 3]
const lthen = graph('l_then', [cst('one', FLOAT, [], [1]), node('Add', ['s_in', 'one'], ['lt'])], [], [vi('lt', FLOAT, [3])]);
const lelse = graph('l_else', [cst('two', FLOAT, [], [2]), node('Mul', ['s_in', 'two'], ['le'])], [], [vi('le', FLOAT, [3])]);
const lbody = graph('l_body', [node('Cast', ['i'], ['fi'], { to: FLOAT }), cst('lim', FLOAT, [], [2]), node('Less', ['fi', 'lim'], ['c']),
  node('If', ['c'], ['s_out'], {}, { then_branch: lthen, else_branch: lelse }), node('Identity', ['cond_in'], ['cond_out']), node('Identity', ['s_out'], ['row'])],
  [vi('i', INT64, []), vi('cond_in', BOOL, []), vi('s_in', FLOAT, [3])], [vi('cond_out', BOOL, []), vi('s_out', FLOAT, [3]), vi('row', FLOAT, [3])]);
save('loop_nested.onnx', 13, { name: 'loop_nested', node: [node('Loop', ['m', '', 'x'], ['s_final', 'rows'], {}, { body: lbody })],
  input: [vi('x', FLOAT, [3])], output: [vi('s_final', FLOAT, [3]), vi('rows', FLOAT, [4, 3])], initializer: [tensorProto('m', INT64, [], [4])] });

// Loop-13 with a run-time M: the scan output is compiled for the 5 rows the model declares
const dbody = graph('d_body', [cst('one', FLOAT, [], [1]), node('Add', ['s_in', 'one'], ['s_out']), node('Identity', ['cond_in'], ['cond_out']), node('Identity', ['s_out'], ['row'])],
  [vi('i', INT64, []), vi('cond_in', BOOL, []), vi('s_in', FLOAT, [3])], [vi('cond_out', BOOL, []), vi('s_out', FLOAT, [3]), vi('row', FLOAT, [3])]);
save('loop_dyn.onnx', 13, graph('loop_dyn', [node('Loop', ['M', '', 'x'], ['s_final', 'rows'], {}, { body: dbody })],
  [vi('M', INT64, []), vi('x', FLOAT, [3])], [vi('s_final', FLOAT, [3]), vi('rows', FLOAT, [5, 3])]));
const x3 = [1, -2, 0.5];
data('loop_dyn/data_5', [['M', INT64, [], [5]], ['x', FLOAT, [3], x3]],
  [['s_final', FLOAT, [3], x3.map((v) => v + 5)], ['rows', FLOAT, [5, 3], [1, 2, 3, 4, 5].flatMap((k) => x3.map((v) => v + k))]]);
data('loop_dyn/data_3', [['M', INT64, [], [3]], ['x', FLOAT, [3], x3]],
  [['s_final', FLOAT, [3], x3.map((v) => v + 3)], ['rows', FLOAT, [5, 3], new Array(15).fill(0)]]);

// Scan-8 with batch 2: state [2,3] per batch row, x [2,4,3] (batch, sequence, ...), reverse
const s8body = graph('s8_body', [node('Add', ['s', 'xs'], ['s2']), node('Mul', ['s2', 's2'], ['sq'])],
  [vi('s', FLOAT, [3]), vi('xs', FLOAT, [3])], [vi('s2', FLOAT, [3]), vi('sq', FLOAT, [3])]);
save('scan8_batch.onnx', 8, graph('scan8_batch', [node('Scan', ['', 's0', 'xx'], ['s_final', 'rows'], { num_scan_inputs: 1, directions: [1] }, { body: s8body })],
  [vi('s0', FLOAT, [2, 3]), vi('xx', FLOAT, [2, 4, 3])], [vi('s_final', FLOAT, [2, 3]), vi('rows', FLOAT, [2, 4, 3])]));

// sequences of static length: [x, x*2] (Construct), insert x+1 at 1 (constant position),
// erase the last, stack along a new axis 1 (ConcatFromSequence new_axis), and the length
save('seq_static.onnx', 13, { name: 'seq_static', node: [node('Mul', ['x', 'two'], ['x2']), node('Add', ['x', 'one'], ['x1']),
  node('SequenceConstruct', ['x', 'x2'], ['s1']), node('SequenceInsert', ['s1', 'x1', 'p1'], ['s2']), node('SequenceErase', ['s2'], ['s3']),
  node('ConcatFromSequence', ['s3'], ['y'], { axis: 1, new_axis: 1 }), node('SequenceLength', ['s3'], ['n'])],
  input: [vi('x', FLOAT, [2, 3])], output: [vi('y', FLOAT, [2, 2, 3]), vi('n', INT64, [])],
  initializer: [tensorProto('two', FLOAT, [], [2]), tensorProto('one', FLOAT, [], [1]), tensorProto('p1', INT64, [], [1])] });

// SequenceAt with a run-time position: not static, refused
save('seq_runtime_pos.onnx', 13, graph('seq_runtime_pos', [node('SequenceConstruct', ['x', 'x'], ['sq']), node('SequenceAt', ['sq', 'pos'], ['y'])],
  [vi('x', FLOAT, [2, 3]), vi('pos', INT64, [])], [vi('y', FLOAT, [2, 3])]));

// Scan-11: x [2,4,3], scan axis 1 reversed; state s [2,3]; body: s' = s + slice * w (w read
// from the outer graph), scan output s' along output axis 1
const sbody = graph('scan_body', [node('Mul', ['xs', 'w'], ['xw']), node('Add', ['s', 'xw'], ['s2']), node('Identity', ['s2'], ['row'])],
  [vi('s', FLOAT, [2, 3]), vi('xs', FLOAT, [2, 3])], [vi('s2', FLOAT, [2, 3]), vi('row', FLOAT, [2, 3])]);
save('scan_rev.onnx', 11, graph('scan_rev', [node('Scan', ['s0', 'xx'], ['s_final', 'rows'], { num_scan_inputs: 1, scan_input_axes: [1], scan_input_directions: [1], scan_output_axes: [1] }, { body: sbody }),
  node('Relu', ['rows'], ['rows_relu']), node('Sigmoid', ['rows_relu'], ['rows_sig'])],
  [vi('s0', FLOAT, [2, 3]), vi('xx', FLOAT, [2, 4, 3]), vi('w', FLOAT, [3])], [vi('s_final', FLOAT, [2, 3]), vi('rows_sig', FLOAT, [2, 4, 3])]));
