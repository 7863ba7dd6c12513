#!/usr/bin/env node
// gen_layers.mjs: ONNX test graphs for ecg-prune, made with the project's generator
// (tools/bench/onnx_build.mjs); weights are seeded uniform values in [-1, 1) scaled by
// 1/sqrt(fan-in), biases in [-0.1, 0.1).
//
//   node gen_layers.mjs --out DIR [--which vgg|small] [--seed S] [--scale F]
//
// vgg:   DIR/L1.onnx .. DIR/L9.onnx, the unique VGG-16 CONV layers of the dissertation's
//        Table 2.6 ([out, in, 3, 3], pads 1, stride 1) at their VGG-16 input sizes (224,
//        224, 112, 112, 56, 56, 28, 28, 14), each Conv + Relu; --scale F divides the
//        spatial size by F (e.g. 4 for quick runs).
// small: DIR/small.onnx, a residual block for the tests: Conv3x3(8->16, stride 2) + Relu,
//        Conv3x3(16->16, dilation 1) + Add(residual) + Relu, Conv1x1(16->8), input 1x8x20x20.
// odd:   DIR/odd.onnx, odd sizes for the filter-level LRE tests (filter counts no register
//        tile of 2-4 filters divides): input 1x7x23x19, Conv3x3(7->13, stride 2, pads 1) +
//        Relu, Conv3x3(13->11, pads 1,0,2,1) + Relu, Conv3x3(11->5, dilation 2, pads 2, no bias).
import path from 'node:path';
import { FLOAT, encodeModel, randomValues, mulberry32, writeAtomic } from '../bench/onnx_build.mjs';
import { parseArgs, runMain, UsageError } from '../bench/common.mjs';

const USAGE = `usage: node gen_layers.mjs --out DIR [--which vgg|small|odd] [--seed S] [--scale F]
`;

const VGG = [[64, 3, 224], [64, 64, 224], [128, 64, 112], [128, 128, 112], [256, 128, 56], [256, 256, 56], [512, 256, 28], [512, 512, 28], [512, 512, 14]];

function weights(next, m, c, kh, kw) {
  const s = 1 / Math.sqrt(c * kh * kw);
  return randomValues(FLOAT, m * c * kh * kw, next).map((v) => v * s);
}
const bias = (next, m) => randomValues(FLOAT, m, next).map((v) => v * 0.1);

async function main(argv) {
  const { opts, positional } = parseArgs(argv, { out: 'str', which: 'str', seed: 'int', scale: 'int', help: 'flag' });
  if (opts.help) { process.stdout.write(USAGE); return 0; }
  if (positional.length) throw new UsageError(`unexpected argument '${positional[0]}'`);
  if (!opts.out) throw new UsageError('--out is required');
  const which = opts.which ?? 'vgg', next = mulberry32(opts.seed ?? 1), scale = opts.scale ?? 1;
  if (which === 'vgg') {
    VGG.forEach(([m, c, hw0], i) => {
      const hw = Math.max(1, Math.floor(hw0 / scale));
      const spec = {
        opset: 13, name: `vgg_L${i + 1}`,
        inputs: [['x', FLOAT, [1, c, hw, hw]]],
        inits: [['W', FLOAT, [m, c, 3, 3], weights(next, m, c, 3, 3)], ['B', FLOAT, [m], bias(next, m)]],
        nodes: [['Conv', ['x', 'W', 'B'], ['c'], { pads: [1, 1, 1, 1], kernel_shape: [3, 3] }], ['Relu', ['c'], ['y']]],
        outputs: [['y', FLOAT, [1, m, hw, hw]]],
      };
      writeAtomic(path.join(opts.out, `L${i + 1}.onnx`), encodeModel(spec));
    });
  } else if (which === 'small') {
    const spec = {
      opset: 13, name: 'prune_small',
      inputs: [['x', FLOAT, [1, 8, 20, 20]]],
      inits: [['W1', FLOAT, [16, 8, 3, 3], weights(next, 16, 8, 3, 3)], ['B1', FLOAT, [16], bias(next, 16)],
              ['W2', FLOAT, [16, 16, 3, 3], weights(next, 16, 16, 3, 3)], ['B2', FLOAT, [16], bias(next, 16)],
              ['W3', FLOAT, [8, 16, 1, 1], weights(next, 8, 16, 1, 1)]],
      nodes: [['Conv', ['x', 'W1', 'B1'], ['c1'], { pads: [1, 1, 1, 1], strides: [2, 2] }], ['Relu', ['c1'], ['r1']],
              ['Conv', ['r1', 'W2', 'B2'], ['c2'], { pads: [1, 1, 1, 1] }], ['Add', ['c2', 'r1'], ['a2']], ['Relu', ['a2'], ['r2']],
              ['Conv', ['r2', 'W3'], ['y'], {}]],
      outputs: [['y', FLOAT, [1, 8, 10, 10]]],
    };
    writeAtomic(path.join(opts.out, 'small.onnx'), encodeModel(spec));
  } else if (which === 'odd') {
    const spec = {
      opset: 13, name: 'prune_odd',
      inputs: [['x', FLOAT, [1, 7, 23, 19]]],
      inits: [['W1', FLOAT, [13, 7, 3, 3], weights(next, 13, 7, 3, 3)], ['B1', FLOAT, [13], bias(next, 13)],
              ['W2', FLOAT, [11, 13, 3, 3], weights(next, 11, 13, 3, 3)], ['B2', FLOAT, [11], bias(next, 11)],
              ['W3', FLOAT, [5, 11, 3, 3], weights(next, 5, 11, 3, 3)]],
      nodes: [['Conv', ['x', 'W1', 'B1'], ['c1'], { pads: [1, 1, 1, 1], strides: [2, 2] }], ['Relu', ['c1'], ['r1']],
              ['Conv', ['r1', 'W2', 'B2'], ['c2'], { pads: [1, 0, 2, 1] }], ['Relu', ['c2'], ['r2']],
              ['Conv', ['r2', 'W3'], ['y'], { pads: [2, 2, 2, 2], dilations: [2, 2] }]],
      outputs: [['y', FLOAT, [1, 5, 13, 9]]],
    };
    writeAtomic(path.join(opts.out, 'odd.onnx'), encodeModel(spec));
  } else throw new UsageError(`--which ${which}: vgg, small or odd`);
  return 0;
}

runMain('gen_layers.mjs', USAGE, main);
