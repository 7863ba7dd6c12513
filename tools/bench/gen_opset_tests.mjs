#!/usr/bin/env node
// gen_opset_tests.mjs: small ONNX models at opsets 18-23 (one or a few nodes, static shapes,
// edge cases) with expected outputs from ONNX Runtime, in the layout of ONNX's backend tests,
// so tools/bench/conformance.sh runs them like Debian's data (issue 17 item 4).
//
//   node gen_opset_tests.mjs --out DIR [--only REGEX] [--list]
//
// Writes DIR/opset/<test>/model.onnx, test_data_set_0/input_K.pb, output_K.pb (seeded inputs:
// floats uniform in [-1,1) from mulberry32, or the case's own values) and a file `tolerance`
// ("1e-3 1e-4", the issue's rtol/atol; conformance.sh reads it).  The model's graph outputs
// carry the shapes ONNX Runtime produced, as exporters write them.
// Cases that must be refused go to DIR/opset-refused/<test>/ with model.onnx and a file
// `expect` holding the text onnx2ecg's message must contain (no ORT run).
// A case ONNX Runtime itself cannot run is reported on stderr ("ort cannot run: ...") and
// skipped.  Exit: 0 ok (skips included), 1 error, 2 usage.

import path from 'node:path';
import fs from 'node:fs';
import { parseArgs, loadOrt, runMain, dtypeByCode, UsageError } from './common.mjs';
import { FLOAT, UINT8, INT8, INT32, INT64, BOOL, FLOAT16, FLOAT8E4M3FN, encodeModel, encodeTensor, typedArray, randomValues, mulberry32, writeAtomic } from './onnx_build.mjs';

const USAGE = `usage: node gen_opset_tests.mjs --out DIR [--only REGEX] [--list]
`;

// ---------------------------------------------------------------- the cases
// case: {name, opset, inputs: [[name, code, dims]], inits, nodes, outputs: [[name, code]],
//        data: {input: values}, refuse: 'text'}
const cases = [];
const add = (c) => cases.push(c);
const i64 = (name, values, dims = [values.length]) => [name, INT64, dims, values];

// One node over x (float [dims]) and extra initializers; output y (float unless ycode).
function unary(name, opset, op, dims, attrs = {}, inits = [], ycode = FLOAT, extra = {}) {
  add({ name, opset, inputs: [['x', extra.xcode ?? FLOAT, dims]], inits,
        nodes: [[op, ['x', ...inits.map((t) => t[0])], ['y'], attrs]], outputs: [['y', ycode]], ...extra });
}

// Reduce* 18: axes as an optional input (constant or run-time), noop_with_empty_axes.
const REDUCES = ['ReduceMean', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1', 'ReduceL2', 'ReduceLogSum', 'ReduceLogSumExp', 'ReduceSumSquare'];
for (const op of REDUCES) {
  const s = op.replace('Reduce', '').toLowerCase();
  // LogSum needs positive sums: take |x| + 0.1 first.
  const pos = op === 'ReduceLogSum';
  const wrap = (c) => {
    if (!pos) return c;
    c.inits = [...(c.inits || []), ['eps', FLOAT, [], [0.1]]];
    c.nodes = [['Abs', ['x'], ['ax']], ['Add', ['ax', 'eps'], ['xp']], ...c.nodes.map(([o, ins, outs, a]) => [o, ins.map((t) => (t === 'x' ? 'xp' : t)), outs, a])];
    return c;
  };
  const r = (name, opset, dims, attrs, axes, extra = {}) => {
    const inits = axes === undefined ? [] : [i64('axes', axes)];
    const c = { name, opset, inputs: [['x', FLOAT, dims]], inits, nodes: [[op, ['x', ...(axes === undefined ? [] : ['axes'])], ['y'], attrs]], outputs: [['y', FLOAT]], ...extra };
    add(wrap(c));
  };
  r(`reduce_${s}_axes_neg_keep`, 18, [2, 3, 4], { keepdims: 1 }, [-1]);
  r(`reduce_${s}_axes_two_nokeep`, 18, [2, 3, 4], { keepdims: 0 }, [0, -1]);
  r(`reduce_${s}_no_axes_scalar`, 18, [2, 3, 4], { keepdims: 0 });
  r(`reduce_${s}_empty_axes_noop`, 18, [2, 3], { keepdims: 1, noop_with_empty_axes: 1 }, []);
  r(`reduce_${s}_no_axes_noop`, 18, [2, 3], { keepdims: 0, noop_with_empty_axes: 1 });
  r(`reduce_${s}_empty_axes_all`, 18, [2, 3], { keepdims: 1 }, []);
  r(`reduce_${s}_opset23`, 23, [3, 5], { keepdims: 0 }, [1]);
  // axes known at run time (a graph input), keepdims=1 so the rank is known
  const c = { name: `reduce_${s}_runtime_axes`, opset: 18, inputs: [['x', FLOAT, [2, 3, 4]], ['axes', INT64, [2]]],
              nodes: [[op, ['x', 'axes'], ['y'], { keepdims: 1 }]], outputs: [['y', FLOAT]], data: { axes: [0, -1] } };
  add(wrap(c));
}
// ReduceMax/ReduceMin 20 on bool; integer extremes.
for (const op of ['ReduceMax', 'ReduceMin']) {
  const s = op.replace('Reduce', '').toLowerCase();
  add({ name: `reduce_${s}_bool_opset20`, opset: 20, inputs: [['x', BOOL, [3, 4]]], inits: [i64('axes', [1])],
        nodes: [[op, ['x', 'axes'], ['y'], { keepdims: 0 }]], outputs: [['y', BOOL]],
        data: { x: [0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 1, 1] } });
  add({ name: `reduce_${s}_int32_negative`, opset: 18, inputs: [['x', INT32, [2, 3]]], inits: [i64('axes', [1])],
        nodes: [[op, ['x', 'axes'], ['y'], { keepdims: 1 }]], outputs: [['y', INT32]],
        data: { x: [-5, -7, -2, 9, 300, -400] } });
}

// Split 18: num_outputs (uneven last chunk), negative axis; split as an input still works.
add({ name: 'split_num_outputs_uneven', opset: 18, inputs: [['x', FLOAT, [2, 7]]],
      nodes: [['Split', ['x'], ['a', 'b', 'c'], { axis: -1, num_outputs: 3 }]], outputs: [['a', FLOAT], ['b', FLOAT], ['c', FLOAT]] });
add({ name: 'split_num_outputs_even_axis0', opset: 18, inputs: [['x', FLOAT, [4, 3]]],
      nodes: [['Split', ['x'], ['a', 'b'], { num_outputs: 2 }]], outputs: [['a', FLOAT], ['b', FLOAT]] });
add({ name: 'split_num_outputs_last_one', opset: 18, inputs: [['x', FLOAT, [5, 2]]],
      nodes: [['Split', ['x'], ['a', 'b', 'c'], { axis: 0, num_outputs: 3 }]], outputs: [['a', FLOAT], ['b', FLOAT], ['c', FLOAT]] });
add({ name: 'split_input_opset18', opset: 18, inputs: [['x', FLOAT, [2, 6]]], inits: [i64('split', [1, 5])],
      nodes: [['Split', ['x', 'split'], ['a', 'b'], { axis: 1 }]], outputs: [['a', FLOAT], ['b', FLOAT]] });

// Pad 18 (axes input) and 19 (wrap).
const pad = (name, opset, dims, pads, mode, axes, value) => {
  const inits = [i64('pads', pads)];
  const ins = ['x', 'pads'];
  if (value !== undefined || axes) { inits.push(['cv', FLOAT, [], [value ?? 0]]); ins.push('cv'); }
  if (axes) { inits.push(i64('axes', axes)); ins.push('axes'); }
  add({ name, opset, inputs: [['x', FLOAT, dims]], inits, nodes: [['Pad', ins, ['y'], { mode }]], outputs: [['y', FLOAT]] });
};
pad('pad_axes_constant', 18, [2, 3, 4], [1, 2], 'constant', [1], 0.5);
pad('pad_axes_negative', 18, [2, 3, 4], [0, 1, 2, 1], 'constant', [-1, 0], -1.5);
pad('pad_axes_reflect', 18, [2, 3, 4], [2, 1], 'reflect', [2]);
pad('pad_axes_edge_crop', 18, [2, 3, 4], [1, -1], 'edge', [1]);
pad('pad_wrap', 19, [2, 3], [1, 2, 1, 3], 'wrap');
pad('pad_wrap_axes', 19, [2, 3, 4], [3, 2], 'wrap', [-1]);
pad('pad_opset23_constant', 23, [3, 4], [1, 0, 0, 2], 'constant');

// ScatterElements / ScatterND 18: reduction max / min (duplicate indices).
for (const red of ['max', 'min']) {
  add({ name: `scatter_elements_${red}`, opset: 18, inputs: [['x', FLOAT, [3, 4]], ['u', FLOAT, [2, 4]]],
        inits: [i64('idx', [0, 2, 0, 1, 0, 2, 1, 1], [2, 4])],
        nodes: [['ScatterElements', ['x', 'idx', 'u'], ['y'], { axis: 0, reduction: red }]], outputs: [['y', FLOAT]] });
  add({ name: `scatter_nd_${red}`, opset: 18, inputs: [['x', FLOAT, [4, 3]], ['u', FLOAT, [3, 3]]],
        inits: [i64('idx', [1, 3, 1], [3, 1])],
        nodes: [['ScatterND', ['x', 'idx', 'u'], ['y'], { reduction: red }]], outputs: [['y', FLOAT]] });
}

// AveragePool 19: dilations.
unary('averagepool_dilations', 19, 'AveragePool', [1, 2, 7, 7], { kernel_shape: [3, 3], dilations: [2, 2] });
unary('averagepool_dilations_pads_strides', 19, 'AveragePool', [1, 1, 8, 9], { kernel_shape: [2, 3], dilations: [2, 1], strides: [2, 2], pads: [1, 1, 1, 1] });
unary('averagepool_dilations_pads_count_include', 19, 'AveragePool', [1, 1, 8, 8], { kernel_shape: [3, 3], dilations: [2, 2], pads: [2, 2, 2, 2], count_include_pad: 1 });
unary('averagepool_opset22', 22, 'AveragePool', [1, 2, 6, 6], { kernel_shape: [2, 2], strides: [2, 2] });

// Cast 19/21/23 (saturate only concerns float8, which is refused); CastLike 19.
unary('cast_saturate_float_to_int32', 19, 'Cast', [2, 3], { to: INT32, saturate: 1 }, [], INT32, { data: { x: [1.5, -2.5, 7.9, -0.1, 100.2, 3] } });
unary('cast_float_to_float16_opset21', 21, 'Cast', [2, 3], { to: FLOAT16 }, [], FLOAT16);
unary('cast_int64_to_float_opset23', 23, 'Cast', [4], { to: FLOAT }, [], FLOAT, { xcode: INT64, data: { x: [-3, 0, 5, 1234567] } });
add({ name: 'castlike_opset19', opset: 19, inputs: [['x', FLOAT, [2, 2]]], inits: [['like', INT64, [1], [0]]],
      nodes: [['CastLike', ['x', 'like'], ['y'], { saturate: 1 }]], outputs: [['y', INT64]], data: { x: [1.7, -1.7, 20, 0] } });

// Opsets 21-23: the bumps that only widen types, on the types we support.
add({ name: 'shape_ops_opset21', opset: 21, inputs: [['x', FLOAT, [2, 3, 4]]], inits: [i64('shape', [6, 4]), i64('ax', [0])],
      nodes: [['Reshape', ['x', 'shape'], ['r']], ['Transpose', ['r'], ['t'], { perm: [1, 0] }], ['Unsqueeze', ['t', 'ax'], ['u']],
              ['Squeeze', ['u', 'ax'], ['s']], ['Flatten', ['s'], ['y'], { axis: 1 }]], outputs: [['y', FLOAT]] });
add({ name: 'shape_ops_opset23', opset: 23, inputs: [['x', FLOAT, [2, 3, 4]]], inits: [i64('shape', [3, -1])],
      nodes: [['Reshape', ['x', 'shape'], ['r']], ['Transpose', ['r'], ['y'], { perm: [1, 0] }], ['Shape', ['x'], ['s']],
              ['Size', ['x'], ['n']], ['ConstantOfShape', ['s'], ['z'], {}]], outputs: [['y', FLOAT], ['s', INT64], ['n', INT64], ['z', FLOAT]] });
add({ name: 'conv_relu_pool_opset22', opset: 22, inputs: [['x', FLOAT, [1, 2, 6, 6]], ['w', FLOAT, [3, 2, 3, 3]]],
      nodes: [['Conv', ['x', 'w'], ['c'], { pads: [1, 1, 1, 1] }], ['Elu', ['c'], ['e']], ['MaxPool', ['e'], ['m'], { kernel_shape: [2, 2], strides: [2, 2] }],
              ['GlobalAveragePool', ['m'], ['y']]], outputs: [['y', FLOAT]] });
add({ name: 'unary_bumps_opset22', opset: 22, inputs: [['x', FLOAT, [2, 5]]],
      nodes: [['Sin', ['x'], ['a']], ['Softplus', ['a'], ['b']], ['HardSwish', ['b'], ['c']], ['Selu', ['c'], ['d']], ['Round', ['d'], ['y']]],
      outputs: [['y', FLOAT]] });
add({ name: 'isnan_isinf_opset20', opset: 20, inputs: [['x', FLOAT, [4]]], inits: [['zero', FLOAT, [], [0]]],
      nodes: [['Div', ['x', 'zero'], ['q']], ['IsInf', ['q'], ['a']], ['IsNaN', ['q'], ['b']]], outputs: [['a', BOOL], ['b', BOOL]],
      data: { x: [1, 0, -2, 0] } });

// Resize 18 (axes, keep_aspect_ratio_policy) and 19 (half_pixel_symmetric).
const resize = (name, opset, dims, attrs, { scales, sizes, axes } = {}) => {
  const inits = [['roi', FLOAT, [0], []], ['scales', FLOAT, scales ? [scales.length] : [0], scales || []]];
  const ins = ['x', 'roi', 'scales'];
  if (sizes) { inits.push(i64('sizes', sizes)); ins.push('sizes'); ins[2] = ''; inits.splice(1, 1); }
  if (axes) attrs = { ...attrs, axes };
  add({ name, opset, inputs: [['x', FLOAT, dims]], inits, nodes: [['Resize', ins, ['y'], attrs]], outputs: [['y', FLOAT]] });
};
resize('resize_axes_scales_linear', 18, [1, 2, 4, 5], { mode: 'linear' }, { scales: [2, 1.5], axes: [2, 3] });
resize('resize_axes_negative_nearest', 18, [1, 2, 4, 5], { mode: 'nearest' }, { scales: [2], axes: [-1] });
resize('resize_keep_aspect_not_larger', 18, [1, 1, 4, 6], { mode: 'linear', keep_aspect_ratio_policy: 'not_larger' }, { sizes: [8, 8], axes: [2, 3] });
resize('resize_keep_aspect_not_smaller', 18, [1, 1, 4, 6], { mode: 'nearest', keep_aspect_ratio_policy: 'not_smaller' }, { sizes: [8, 8], axes: [2, 3] });
resize('resize_half_pixel_symmetric', 19, [1, 1, 4, 4], { mode: 'linear', coordinate_transformation_mode: 'half_pixel_symmetric' }, { sizes: [1, 1, 6, 3] });
resize('resize_cubic_opset19', 19, [1, 1, 5, 5], { mode: 'cubic' }, { scales: [1, 1, 1.6, 0.8] });

// GridSample 20 (modes renamed linear / cubic), DFT 20 (axis as an input).
for (const mode of ['linear', 'nearest', 'cubic'])
  add({ name: `gridsample_${mode}_opset20`, opset: 20, inputs: [['x', FLOAT, [1, 2, 4, 5]], ['grid', FLOAT, [1, 3, 3, 2]]],
        nodes: [['GridSample', ['x', 'grid'], ['y'], { mode, align_corners: mode === 'cubic' ? 1 : 0 }]], outputs: [['y', FLOAT]] });
add({ name: 'gridsample_linear_border_opset22', opset: 22, inputs: [['x', FLOAT, [1, 1, 3, 4]], ['grid', FLOAT, [1, 2, 5, 2]]],
      nodes: [['GridSample', ['x', 'grid'], ['y'], { mode: 'linear', padding_mode: 'border' }]], outputs: [['y', FLOAT]] });
add({ name: 'dft_axis_input_opset20', opset: 20, inputs: [['x', FLOAT, [2, 6, 3, 1]]], inits: [i64('axis', [1], [])],
      nodes: [['DFT', ['x', '', 'axis'], ['y']]], outputs: [['y', FLOAT]] });
add({ name: 'dft_axis_default_onesided_opset20', opset: 20, inputs: [['x', FLOAT, [2, 8, 1]]], inits: [i64('len', [8], [])],
      nodes: [['DFT', ['x', 'len'], ['y'], { onesided: 1 }]], outputs: [['y', FLOAT]] });
add({ name: 'dft_inverse_axis_negative_opset20', opset: 20, inputs: [['x', FLOAT, [3, 4, 5, 2]]], inits: [i64('axis', [-3], [])],
      nodes: [['DFT', ['x', '', 'axis'], ['y'], { inverse: 1 }]], outputs: [['y', FLOAT]] });

// QuantizeLinear / DequantizeLinear 19 and 21 (per-tensor and per-axis; block_size is refused).
add({ name: 'quantize_dequantize_opset21', opset: 21, inputs: [['x', FLOAT, [2, 3, 2]]],
      inits: [['s', FLOAT, [3], [0.01, 0.02, 0.05]], ['z', INT8, [3], [0, -3, 4]]],
      nodes: [['QuantizeLinear', ['x', 's', 'z'], ['q'], { axis: 1 }], ['DequantizeLinear', ['q', 's', 'z'], ['y'], { axis: 1 }]],
      outputs: [['q', INT8], ['y', FLOAT]] });
add({ name: 'quantize_uint8_opset19', opset: 19, inputs: [['x', FLOAT, [5]]], inits: [['s', FLOAT, [], [0.02]], ['z', UINT8, [], [128]]],
      nodes: [['QuantizeLinear', ['x', 's', 'z'], ['y'], { saturate: 1 }]], outputs: [['y', UINT8]], data: { x: [-3, -0.5, 0, 0.51, 4] } });

// GroupNormalization 18 (scale/bias per group) and 21 (per channel).
const gn = (name, opset, dims, G, eps) => {
  const C = dims[1], m = opset < 21 ? G : C;
  const sv = Array.from({ length: m }, (_, i) => 0.5 + 0.25 * i), bv = Array.from({ length: m }, (_, i) => 0.1 * i - 0.2);
  add({ name, opset, inputs: [['x', FLOAT, dims]], inits: [['scale', FLOAT, [m], sv], ['bias', FLOAT, [m], bv]],
        nodes: [['GroupNormalization', ['x', 'scale', 'bias'], ['y'], { num_groups: G, ...(eps ? { epsilon: { f: eps } } : {}) }]], outputs: [['y', FLOAT]] });
};
gn('groupnorm_per_group_opset18', 18, [2, 6, 3, 4], 3);
gn('groupnorm_one_group_opset18', 18, [1, 4, 5], 1, 1e-3);
gn('groupnorm_per_channel_opset21', 21, [2, 6, 3, 4], 2);
gn('groupnorm_groups_eq_channels_opset21', 21, [1, 4, 2, 3, 2], 4, 1e-2);
gn('groupnorm_rank2_opset21', 21, [3, 4], 2);

// RMSNormalization 23: axis, scale broadcast over the normalized dims.
const rms = (name, dims, axis, sdims, eps) => {
  const m = sdims.reduce((p, d) => p * d, 1);
  add({ name, opset: 23, inputs: [['x', FLOAT, dims]], inits: [['scale', FLOAT, sdims, Array.from({ length: m }, (_, i) => 0.5 + 0.1 * i)]],
        nodes: [['RMSNormalization', ['x', 'scale'], ['y'], { ...(axis !== undefined ? { axis } : {}), ...(eps ? { epsilon: { f: eps } } : {}) }]],
        outputs: [['y', FLOAT]] });
};
rms('rmsnorm_last_axis', [2, 3, 8], undefined, [8]);
rms('rmsnorm_axis1_full_scale', [2, 3, 4], 1, [3, 4], 1e-3);
rms('rmsnorm_axis_negative_broadcast_scale', [2, 3, 4], -2, [3, 1]);
rms('rmsnorm_scalar_scale_axis0', [3, 5], 0, [1]);

// Gelu 20 (approximate none / tanh) and Mish 18/22: elementwise, fused with what feeds them;
// edge cases: large magnitudes (erf/tanh saturation, Mish's softplus cut-off), broadcast chain.
const wide = [-30, -12, -5.5, -3, -1, -0.5, -1e-4, 0, 1e-4, 0.5, 1, 3, 5.5, 12, 25, 90];
unary('gelu_exact', 20, 'Gelu', [2, 3, 4]);
unary('gelu_tanh', 20, 'Gelu', [2, 3, 4], { approximate: 'tanh' });
unary('gelu_tanh_wide_range', 20, 'Gelu', [16], { approximate: 'tanh' }, [], FLOAT, { data: { x: wide } });
unary('gelu_exact_wide_range_opset23', 23, 'Gelu', [16], {}, [], FLOAT, { data: { x: wide } });
add({ name: 'gelu_fused_matmul_add', opset: 20, inputs: [['x', FLOAT, [3, 8]]],
      inits: [['w', FLOAT, [8, 5], Array.from({ length: 40 }, (_, i) => Math.sin(i) * 0.7)], ['b', FLOAT, [5], [0.1, -0.2, 0.3, 0, -1]]],
      nodes: [['MatMul', ['x', 'w'], ['m']], ['Add', ['m', 'b'], ['a']], ['Gelu', ['a'], ['g']], ['Mul', ['g', 'b'], ['y']]],
      outputs: [['y', FLOAT]] });
unary('mish', 18, 'Mish', [2, 3, 4]);
unary('mish_wide_range', 18, 'Mish', [16], {}, [], FLOAT, { data: { x: wide } });
unary('mish_opset22', 22, 'Mish', [3, 5]);

// BitwiseAnd/Or/Xor/Not 18 on the integer types: negative values, broadcasting, uint8 wrap.
const bw = (name, op, code, da, db, va, vb) => {
  const inputs = [['a', code, da]];
  const data = { a: va };
  if (db) { inputs.push(['b', code, db]); data.b = vb; }
  add({ name, opset: 18, inputs, nodes: [[op, db ? ['a', 'b'] : ['a'], ['y']]], outputs: [['y', code]], data });
};
bw('bitwise_and_int32_negative', 'BitwiseAnd', INT32, [2, 3], [2, 3], [-1, -8, 255, 7, 0x7fffffff, -2147483648], [12, -3, -256, 5, -1, -1]);
bw('bitwise_or_uint8_broadcast', 'BitwiseOr', UINT8, [2, 3], [3], [0, 1, 128, 255, 15, 240], [1, 2, 127]);
bw('bitwise_xor_int64_broadcast', 'BitwiseXor', INT64, [3, 1], [1, 4], [-1, 0, 123456789012], [1, -1, 65535, -4096]);
bw('bitwise_xor_int8', 'BitwiseXor', INT8, [4], [4], [-128, 127, -1, 0], [1, -1, -128, 0]);
bw('bitwise_not_uint8', 'BitwiseNot', UINT8, [5], null, [0, 1, 127, 128, 255]);
bw('bitwise_not_int32', 'BitwiseNot', INT32, [2, 2], null, [0, -1, 2147483647, -2147483648]);
bw('bitwise_not_int64', 'BitwiseNot', INT64, [3], null, [0, -5, 9007199254740991]);

// LpPool 18 (ceil_mode, dilations) and 22; p 1, 2 (default) and 3; 1-D, 2-D and 3-D.
unary('lppool_p2_default', 18, 'LpPool', [1, 2, 5, 5], { kernel_shape: [2, 2] });
unary('lppool_p3_ceil_dilations_strides', 18, 'LpPool', [1, 2, 7, 8], { kernel_shape: [3, 2], dilations: [2, 1], strides: [2, 2], ceil_mode: 1, p: 3 });
unary('lppool_p1_pads_1d_opset22', 22, 'LpPool', [2, 3, 9], { kernel_shape: [3], pads: [1, 2], strides: [2], p: 1 });
unary('lppool_same_upper_3d', 18, 'LpPool', [1, 1, 4, 5, 3], { kernel_shape: [2, 3, 2], auto_pad: 'SAME_UPPER' });
unary('lppool_ceil_mode_pads', 18, 'LpPool', [1, 1, 6, 6], { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1], ceil_mode: 1, p: 2 });

// CenterCropPad 18: crop and pad with odd differences (the extra element goes to the end),
// axes (negative), an axis left as is, integer data.
const ccp = (name, code, dims, shape, axes) =>
  add({ name, opset: 18, inputs: [['x', code, dims]], inits: [i64('shape', shape)],
        nodes: [['CenterCropPad', ['x', 'shape'], ['y'], axes ? { axes } : {}]], outputs: [['y', code]] });
ccp('center_crop_pad_crop_odd', FLOAT, [5, 7], [2, 4]);
ccp('center_crop_pad_pad_odd', FLOAT, [2, 3], [5, 6]);
ccp('center_crop_pad_mixed_axes_negative', FLOAT, [3, 4, 5], [6, 2], [0, -1]);
ccp('center_crop_pad_same_size_int64', INT64, [2, 3, 4], [3, 5], [1, 2]);
ccp('center_crop_pad_chw_image', FLOAT, [3, 8, 6], [5, 9], [1, 2]);

// Col2Im 18: 2-D plain, strides + pads + dilations (overlapping blocks add up), 3-D.
const col2im = (name, x, img, blk, attrs = {}) =>
  add({ name, opset: 18, inputs: [['x', FLOAT, x]], inits: [i64('image_shape', img), i64('block_shape', blk)],
        nodes: [['Col2Im', ['x', 'image_shape', 'block_shape'], ['y'], attrs]], outputs: [['y', FLOAT]] });
col2im('col2im_2d', [1, 4, 16], [5, 5], [2, 2]);
col2im('col2im_strides_pads_dilations', [1, 12, 18], [6, 7], [3, 2], { strides: [2, 1], pads: [1, 0, 1, 1], dilations: [1, 2] });
col2im('col2im_batch2_overlap', [2, 6, 20], [4, 5], [3, 1], { pads: [1, 0, 1, 0] });
col2im('col2im_3d', [2, 8, 12], [3, 4, 3], [2, 2, 2]);

// RotaryEmbedding 23: 4-D and 3-D inputs, caches per (batch, seq) or indexed by position_ids,
// partial rotation (rotary_embedding_dim < head size), interleaved pairs.
const rope = (name, x, cache, attrs = {}, pos) => {
  const inputs = [['x', FLOAT, x], ['cos', FLOAT, cache], ['sin', FLOAT, cache]];
  const data = {};
  if (pos) { inputs.push(['pos', INT64, [x[0], x.length === 4 ? x[2] : x[1]]]); data.pos = pos; }
  add({ name, opset: 23, inputs, nodes: [['RotaryEmbedding', inputs.map((t) => t[0]), ['y'], attrs]], outputs: [['y', FLOAT]], data });
};
rope('rotary_4d_full', [2, 2, 3, 8], [2, 3, 4]);
rope('rotary_4d_position_ids_partial', [1, 2, 4, 8], [10, 2], { rotary_embedding_dim: 4 }, [0, 3, 7, 9]);
rope('rotary_3d_interleaved', [2, 3, 12], [2, 3, 2], { num_heads: 3, interleaved: 1 });
rope('rotary_3d_position_ids_interleaved_partial', [2, 5, 16], [8, 3], { num_heads: 2, rotary_embedding_dim: 6, interleaved: 1 },
     [0, 1, 2, 3, 4, 7, 6, 5, 4, 3]);

// Attention 23: 4-D and 3-D, grouped-query heads, is_causal (square, fewer queries than keys,
// with a past), bool and additive masks (broadcast), scale, softcap, past/present key-value.
const attn = (name, { q, k, v, attrs = {}, mask, maskCode = FLOAT, past, outs = 1, data = {} }) => {
  const inputs = [['q', FLOAT, q], ['k', FLOAT, k], ['v', FLOAT, v]];
  const ins = ['q', 'k', 'v'];
  if (mask) { inputs.push(['mask', maskCode, mask]); ins.push('mask'); } else if (past) ins.push('');
  if (past) { inputs.push(['past_k', FLOAT, past[0]], ['past_v', FLOAT, past[1]]); ins.push('past_k', 'past_v'); }
  const outputs = [['y', FLOAT], ['present_k', FLOAT], ['present_v', FLOAT]].slice(0, outs);
  add({ name, opset: 23, inputs, nodes: [['Attention', ins, outputs.map((t) => t[0]), attrs]], outputs, data });
};
const boolMask = (n, every) => Array.from({ length: n }, (_, i) => (i % every === 0 ? 0 : 1));
attn('attention_4d', { q: [1, 2, 3, 4], k: [1, 2, 5, 4], v: [1, 2, 5, 6] });
attn('attention_4d_gqa', { q: [2, 4, 3, 8], k: [2, 2, 4, 8], v: [2, 2, 4, 8] });
attn('attention_3d_gqa', { q: [2, 3, 8], k: [2, 4, 4], v: [2, 4, 6], attrs: { q_num_heads: 2, kv_num_heads: 1 } });
attn('attention_causal_square', { q: [1, 2, 4, 4], k: [1, 2, 4, 4], v: [1, 2, 4, 4], attrs: { is_causal: 1 } });
attn('attention_causal_fewer_queries', { q: [1, 1, 2, 4], k: [1, 1, 5, 4], v: [1, 1, 5, 4], attrs: { is_causal: 1 } });
attn('attention_bool_mask_broadcast', { q: [1, 2, 3, 4], k: [1, 2, 5, 4], v: [1, 2, 5, 4], mask: [3, 5], maskCode: BOOL,
                                        data: { mask: boolMask(15, 3) } });
attn('attention_float_mask_4d', { q: [2, 2, 3, 4], k: [2, 2, 5, 4], v: [2, 2, 5, 4], mask: [2, 1, 3, 5] });
attn('attention_scale_softcap', { q: [1, 2, 3, 8], k: [1, 2, 4, 8], v: [1, 2, 4, 8], attrs: { scale: { f: 3.0 }, softcap: { f: 2.0 } } });
attn('attention_past_present', { q: [1, 2, 2, 4], k: [1, 2, 2, 4], v: [1, 2, 2, 6], past: [[1, 2, 3, 4], [1, 2, 3, 6]], outs: 3 });
attn('attention_past_causal_gqa', { q: [1, 4, 2, 4], k: [1, 2, 2, 4], v: [1, 2, 2, 4], past: [[1, 2, 3, 4], [1, 2, 3, 4]], outs: 3,
                                    attrs: { is_causal: 1 } });
attn('attention_3d_mask_past', { q: [1, 2, 8], k: [1, 2, 8], v: [1, 2, 8], attrs: { q_num_heads: 2, kv_num_heads: 2 }, mask: [2, 5],
                                 past: [[1, 2, 3, 4], [1, 2, 3, 4]], outs: 3 });
attn('attention_softcap_float_mask', { q: [1, 2, 3, 4], k: [1, 2, 4, 4], v: [1, 2, 4, 4], attrs: { softcap: { f: 0.5 } }, mask: [3, 4],
                                        data: { mask: [0, -1, -2, 0.5, 1, 0, -30, 0, 0, 0, 2, -1] } });
attn('attention_causal_and_bool_mask', { q: [1, 1, 3, 4], k: [1, 1, 3, 4], v: [1, 1, 3, 4], attrs: { is_causal: 1 }, mask: [3, 3], maskCode: BOOL,
                                         data: { mask: [1, 0, 1, 1, 0, 1, 0, 1, 1] } });
attn('attention_bool_mask_row_all_false', { q: [1, 1, 2, 4], k: [1, 1, 3, 4], v: [1, 1, 3, 4], mask: [2, 3], maskCode: BOOL,
                                            data: { mask: [0, 0, 0, 1, 0, 1] } });

// A decoder block at opset 23 built from the new operators together: RMSNormalization, 3-D
// RotaryEmbedding with position_ids on Q and K, grouped-query causal Attention, residual,
// then a Gelu (tanh) MLP; weights seeded.
{
  const S = 5, HID = 16, QH = 4, KVH = 2, D = HID / QH, FF = 24;
  const w = (name, dims, k) => [name, FLOAT, dims, Array.from({ length: dims.reduce((p, d) => p * d, 1) }, (_, i) => Math.sin(k * (i + 1)) * 0.4)];
  const cache = (f) => Array.from({ length: 8 * (D / 2) }, (_, i) => f(Math.floor(i / (D / 2)) / 10000 ** ((2 * (i % (D / 2))) / D)));
  add({ name: 'decoder_block_opset23', opset: 23, inputs: [['x', FLOAT, [1, S, HID]], ['pos', INT64, [1, S]]],
        inits: [['g', FLOAT, [HID], Array.from({ length: HID }, (_, i) => 1 + 0.05 * i)], w('wq', [HID, HID], 1.1), w('wk', [HID, KVH * D], 1.3),
                w('wv', [HID, KVH * D], 1.7), w('wo', [HID, HID], 1.9), w('w1', [HID, FF], 2.3), w('w2', [FF, HID], 2.9),
                ['cos', FLOAT, [8, D / 2], cache(Math.cos)], ['sin', FLOAT, [8, D / 2], cache(Math.sin)]],
        nodes: [['RMSNormalization', ['x', 'g'], ['h']], ['MatMul', ['h', 'wq'], ['q0']], ['MatMul', ['h', 'wk'], ['k0']], ['MatMul', ['h', 'wv'], ['v']],
                ['RotaryEmbedding', ['q0', 'cos', 'sin', 'pos'], ['q'], { num_heads: QH }], ['RotaryEmbedding', ['k0', 'cos', 'sin', 'pos'], ['k'], { num_heads: KVH }],
                ['Attention', ['q', 'k', 'v'], ['a'], { q_num_heads: QH, kv_num_heads: KVH, is_causal: 1 }], ['MatMul', ['a', 'wo'], ['o']],
                ['Add', ['x', 'o'], ['r']], ['MatMul', ['r', 'w1'], ['f1']], ['Gelu', ['f1'], ['f2'], { approximate: 'tanh' }], ['MatMul', ['f2', 'w2'], ['f3']],
                ['Add', ['r', 'f3'], ['y']]],
        outputs: [['y', FLOAT]], data: { pos: [2, 3, 4, 5, 6] } });
}

// DeformConv 19/22 (2-D): fractional offsets crossing the border, large offsets sampling
// outside the image, pads/strides/bias/mask, group + offset_group + dilations, zero offsets.
const deform = (name, opset, x, w, od, attrs, { bias, mask, offScale = 1, zero = false } = {}) => {
  const n = od.reduce((p, d) => p * d, 1);
  const inits = [['off', FLOAT, od, Array.from({ length: n }, (_, i) => (zero ? 0 : Math.sin(1.7 * i + 0.3) * offScale))]];
  const ins = ['x', 'w', 'off'];
  if (bias) { inits.push(['b', FLOAT, [w[0]], Array.from({ length: w[0] }, (_, i) => 0.1 * i - 0.15)]); ins.push('b'); } else if (mask) ins.push('');
  if (mask) ins.push('mask');
  const inputs = [['x', FLOAT, x], ['w', FLOAT, w]];
  if (mask) inputs.push(['mask', FLOAT, mask]);
  add({ name, opset, inputs, inits, nodes: [['DeformConv', ins, ['y'], attrs]], outputs: [['y', FLOAT]] });
};
deform('deform_conv_basic', 19, [1, 2, 4, 4], [2, 2, 2, 2], [1, 8, 3, 3], { kernel_shape: [2, 2] });
deform('deform_conv_large_offsets_outside', 19, [1, 1, 4, 5], [2, 1, 3, 3], [1, 18, 2, 3], {}, { offScale: 4 });
deform('deform_conv_pads_strides_bias_mask', 19, [1, 3, 5, 6], [4, 3, 3, 3], [1, 18, 3, 3], { pads: [1, 1, 1, 1], strides: [2, 2] },
       { bias: true, mask: [1, 9, 3, 3] });
deform('deform_conv_group_offset_group_dilations', 22, [2, 4, 5, 7], [4, 2, 3, 3], [2, 36, 3, 3], { group: 2, offset_group: 2, dilations: [1, 2] },
       { bias: true });
deform('deform_conv_zero_offsets', 22, [1, 2, 5, 5], [3, 2, 3, 3], [1, 18, 3, 3], {}, { zero: true });

// Refusals: an operator we lack at opset 18 names the operator, not the opset; a version
// beyond what is implemented names the version; float8 is refused clearly.
add({ name: 'refuse_unknown_op_opset18', opset: 18, inputs: [['x', FLOAT, [2, 3]]], nodes: [['Bernoulli', ['x'], ['y']]],
      outputs: [['y', FLOAT]], refuse: 'op Bernoulli' });
add({ name: 'refuse_col2im_wrong_block_count', opset: 18, inputs: [['x', FLOAT, [2, 6, 12]]], inits: [i64('image_shape', [4, 5]), i64('block_shape', [3, 1])],
      nodes: [['Col2Im', ['x', 'image_shape', 'block_shape'], ['y'], { pads: [1, 0, 1, 0] }]], outputs: [['y', FLOAT]], refuse: 'must be the number of blocks, 20' });
add({ name: 'refuse_attention_qk_matmul_output', opset: 23, inputs: [['q', FLOAT, [1, 1, 2, 4]], ['k', FLOAT, [1, 1, 3, 4]], ['v', FLOAT, [1, 1, 3, 4]]],
      nodes: [['Attention', ['q', 'k', 'v'], ['y', '', '', 'qk']]], outputs: [['y', FLOAT], ['qk', FLOAT]], refuse: 'qk_matmul_output' });
add({ name: 'refuse_attention_3d_without_heads', opset: 23, inputs: [['q', FLOAT, [1, 2, 8]], ['k', FLOAT, [1, 3, 8]], ['v', FLOAT, [1, 3, 8]]],
      nodes: [['Attention', ['q', 'k', 'v'], ['y']]], outputs: [['y', FLOAT]], refuse: 'q_num_heads and kv_num_heads' });
add({ name: 'refuse_attention_past_key_alone', opset: 23, inputs: [['q', FLOAT, [1, 1, 2, 4]], ['k', FLOAT, [1, 1, 3, 4]], ['v', FLOAT, [1, 1, 3, 4]], ['pk', FLOAT, [1, 1, 2, 4]]],
      nodes: [['Attention', ['q', 'k', 'v', '', 'pk'], ['y']]], outputs: [['y', FLOAT]], refuse: 'past_key and past_value must be given together' });
add({ name: 'refuse_rotary_odd_dim', opset: 23, inputs: [['x', FLOAT, [1, 1, 2, 8]], ['c', FLOAT, [1, 2, 4]], ['s', FLOAT, [1, 2, 4]]],
      nodes: [['RotaryEmbedding', ['x', 'c', 's'], ['y'], { rotary_embedding_dim: 3 }]], outputs: [['y', FLOAT]], refuse: 'must be even' });
add({ name: 'refuse_center_crop_pad_runtime_shape', opset: 18, inputs: [['x', FLOAT, [4, 4]], ['shape', INT64, [2]]],
      nodes: [['CenterCropPad', ['x', 'shape'], ['y']]], outputs: [['y', FLOAT]], refuse: 'is not a constant' });
add({ name: 'refuse_deform_conv_offset_shape', opset: 19, inputs: [['x', FLOAT, [1, 2, 4, 4]], ['w', FLOAT, [2, 2, 2, 2]], ['off', FLOAT, [1, 6, 3, 3]]],
      nodes: [['DeformConv', ['x', 'w', 'off'], ['y']]], outputs: [['y', FLOAT]], refuse: "offset 'off' must be [N, 8," });
add({ name: 'refuse_bitwise_and_bool', opset: 18, inputs: [['a', BOOL, [3]], ['b', BOOL, [3]]], nodes: [['BitwiseAnd', ['a', 'b'], ['y']]],
      outputs: [['y', BOOL]], refuse: 'bitwise operators take integer types' });
add({ name: 'refuse_reshape_24', opset: 24, inputs: [['x', FLOAT, [2, 3]]], inits: [i64('shape', [3, 2])],
      nodes: [['Reshape', ['x', 'shape'], ['y']]], outputs: [['y', FLOAT]], refuse: 'op Reshape-24' });
add({ name: 'refuse_quantize_blocked_opset21', opset: 21, inputs: [['x', FLOAT, [2, 4]]], inits: [['s', FLOAT, [2, 2], [0.1, 0.2, 0.3, 0.4]]],
      nodes: [['QuantizeLinear', ['x', 's'], ['y'], { axis: 1, block_size: 2, output_dtype: UINT8 }]], outputs: [['y', UINT8]], refuse: 'block_size' });
add({ name: 'refuse_groupnorm_scale_per_group_at_opset21', opset: 21, inputs: [['x', FLOAT, [1, 4, 3]]], inits: [['s', FLOAT, [2], [1, 1]], ['b', FLOAT, [2], [0, 0]]],
      nodes: [['GroupNormalization', ['x', 's', 'b'], ['y'], { num_groups: 2 }]], outputs: [['y', FLOAT]], refuse: 'one per channel' });
add({ name: 'refuse_cast_float8', opset: 19, inputs: [['x', FLOAT, [2, 3]]], nodes: [['Cast', ['x'], ['y'], { to: FLOAT8E4M3FN }]],
      outputs: [['y', FLOAT8E4M3FN]], refuse: 'float8' });

// ---------------------------------------------------------------- writing
async function main(argv) {
  const { opts, positional } = parseArgs(argv, { out: 'str', only: 'str', list: 'flag', help: 'flag' });
  if (opts.help) { process.stdout.write(USAGE); return 0; }
  if (positional.length) throw new UsageError(`unexpected argument '${positional[0]}'`);
  const re = opts.only ? new RegExp(opts.only) : null;
  const chosen = cases.filter((c) => !re || re.test(c.name));
  if (opts.list) { for (const c of chosen) console.log(`${c.refuse ? 'opset-refused' : 'opset'}/test_${c.name} opset ${c.opset}`); return 0; }
  if (!opts.out) throw new UsageError('--out is required');
  const ort = await loadOrt();
  let wrote = 0, skipped = 0;
  for (const c of chosen) {
    const dir = path.join(opts.out, c.refuse ? 'opset-refused' : 'opset', `test_${c.name}`);
    fs.rmSync(dir, { recursive: true, force: true });
    if (c.refuse) {
      writeAtomic(path.join(dir, 'model.onnx'), encodeModel(c));
      writeAtomic(path.join(dir, 'expect'), `${c.refuse}\n`);
      wrote++;
      continue;
    }
    const next = mulberry32(1);
    const feeds = {}, files = [];
    c.inputs.forEach(([name, code, dims], k) => {
      const n = dims.reduce((p, d) => p * d, 1);
      const values = c.data?.[name] ?? randomValues(code, n, next);
      if (values.length !== n) throw new Error(`${c.name}: input ${name} has ${values.length} values for shape [${dims}]`);
      const a = typedArray(code, values);
      feeds[name] = new ort.Tensor(dtypeByCode(code).ort, a, dims);
      files.push([`input_${k}.pb`, encodeTensor(name, code, dims, a)]);
    });
    let out;
    try {
      const session = await ort.InferenceSession.create(encodeModel(c), { logSeverityLevel: 3 });
      out = await session.run(feeds);
    } catch (e) {
      process.stderr.write(`gen_opset_tests.mjs: ort cannot run ${c.name}: ${e.message.split('\n')[0]}\n`);
      skipped++;
      continue;
    }
    const outputs = c.outputs.map(([name, code]) => [name, code, out[name].dims.map(Number)]);
    outputs.forEach(([name, code, dims], k) => files.push([`output_${k}.pb`, encodeTensor(name, code, dims, out[name].data)]));
    writeAtomic(path.join(dir, 'model.onnx'), encodeModel({ ...c, outputs }));
    for (const [f, bytes] of files) writeAtomic(path.join(dir, 'test_data_set_0', f), bytes);
    writeAtomic(path.join(dir, 'tolerance'), '1e-3 1e-4\n');
    wrote++;
  }
  process.stderr.write(`gen_opset_tests.mjs: wrote ${wrote} tests to ${opts.out}${skipped ? `, ${skipped} skipped (ONNX Runtime cannot run them)` : ''}\n`);
  return 0;
}

runMain('gen_opset_tests.mjs', USAGE, main);
