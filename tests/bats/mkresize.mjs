// mkresize.mjs OUTDIR: Resize models for tests/bats/resize.bats (opset 13) whose outputs
// have at least 32768 elements, so that ecg-lower's static-shape Resize splits the first
// axis longer than 1 over the threads:
//   linear.onnx   x [1, 6, 48, 40] -> [1, 6, 96, 80], linear, half_pixel (scales): the channels split
//   cubic.onnx    x [2, 5, 30, 40] -> [2, 5, 64, 80], cubic, tf_crop_and_resize with a roi
//                 reaching outside the image (extrapolation_value 0.5; sizes): the images split
//   nearest.onnx  x [1, 3, 100, 100] -> [1, 3, 200, 200], nearest, asymmetric, floor (scales)
// and, for ecg-lower's plane kernel (float, (bi)linear on the last two axes only):
//   plane_r2.onnx    x [200, 100] -> [400, 230], linear, align_corners (sizes): rank 2, the rows split
//   plane_down.onnx  x [4, 90, 70] -> [4, 45, 28], linear, half_pixel (scales 1, 0.5, 0.4): shrinking
//   plane_w.onnx     x [1, 2, 30, 40] -> [1, 2, 30, 100], linear, pytorch_half_pixel: the rows one tap
//   plane_wide.onnx  x [1, 1, 3, 5000] -> [1, 1, 6, 10000], linear, asymmetric: rows too long for the
//                    blended row on the stack
import path from 'node:path';
import { encodeModel, writeAtomic, FLOAT, INT64 } from '../../tools/bench/onnx_build.mjs';

const out = process.argv[2];
if (!out) { console.error('usage: mkresize.mjs OUTDIR'); process.exit(2); }
const model = (name, spec) => writeAtomic(path.join(out, name), encodeModel({ opset: 13, ...spec }));
const empty = ['roi', FLOAT, [0], new Float32Array(0)];
model('linear.onnx', { inputs: [['x', FLOAT, [1, 6, 48, 40]]], outputs: [['y', FLOAT, [1, 6, 96, 80]]],
  inits: [empty, ['scales', FLOAT, [4], Float32Array.of(1, 1, 2, 2)]],
  nodes: [['Resize', ['x', 'roi', 'scales'], ['y'], { mode: 'linear' }]] });
model('cubic.onnx', { inputs: [['x', FLOAT, [2, 5, 30, 40]]], outputs: [['y', FLOAT, [2, 5, 64, 80]]],
  inits: [['roi', FLOAT, [8], Float32Array.of(0, 0, -0.1, 0.2, 1, 1, 1.2, 0.9)], ['scales', FLOAT, [0], new Float32Array(0)],
    ['sizes', INT64, [4], BigInt64Array.of(2n, 5n, 64n, 80n)]],
  nodes: [['Resize', ['x', 'roi', 'scales', 'sizes'], ['y'],
    { mode: 'cubic', coordinate_transformation_mode: 'tf_crop_and_resize', extrapolation_value: 0.5 }]] });
model('nearest.onnx', { inputs: [['x', FLOAT, [1, 3, 100, 100]]], outputs: [['y', FLOAT, [1, 3, 200, 200]]],
  inits: [empty, ['scales', FLOAT, [4], Float32Array.of(1, 1, 2, 2)]],
  nodes: [['Resize', ['x', 'roi', 'scales'], ['y'], { mode: 'nearest', coordinate_transformation_mode: 'asymmetric', nearest_mode: 'floor' }]] });
const lin = (name, ins, outs, scales, ctm) => model(name, { inputs: [['x', FLOAT, ins]], outputs: [['y', FLOAT, outs]],
  inits: [empty, ['scales', FLOAT, [scales.length], Float32Array.from(scales)]],
  nodes: [['Resize', ['x', 'roi', 'scales'], ['y'], { mode: 'linear', coordinate_transformation_mode: ctm }]] });
model('plane_r2.onnx', { inputs: [['x', FLOAT, [200, 100]]], outputs: [['y', FLOAT, [400, 230]]],
  inits: [empty, ['scales', FLOAT, [0], new Float32Array(0)], ['sizes', INT64, [2], BigInt64Array.of(400n, 230n)]],
  nodes: [['Resize', ['x', 'roi', 'scales', 'sizes'], ['y'], { mode: 'linear', coordinate_transformation_mode: 'align_corners' }]] });
lin('plane_down.onnx', [4, 90, 70], [4, 45, 28], [1, 0.5, 0.4], 'half_pixel');
lin('plane_w.onnx', [1, 2, 30, 40], [1, 2, 30, 100], [1, 1, 1, 2.5], 'pytorch_half_pixel');
lin('plane_wide.onnx', [1, 1, 3, 5000], [1, 1, 6, 10000], [1, 1, 2, 2], 'asymmetric');
