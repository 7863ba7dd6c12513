// mkresize.mjs OUTDIR: Resize models for tests/bats/resize.bats (opset 13) whose outputs
// have at least 32768 elements, so that ecg-lower's static-shape Resize splits the first
// axis longer than 1 over the threads:
//   linear.onnx   x [1, 6, 48, 40] -> [1, 6, 96, 80], linear, half_pixel (scales): the channels split
//   cubic.onnx    x [2, 5, 30, 40] -> [2, 5, 64, 80], cubic, tf_crop_and_resize with a roi
//                 reaching outside the image (extrapolation_value 0.5; sizes): the images split
//   nearest.onnx  x [1, 3, 100, 100] -> [1, 3, 200, 200], nearest, asymmetric, floor (scales)
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
