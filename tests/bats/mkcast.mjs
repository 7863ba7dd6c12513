// mkcast.mjs OUTDIR: Cast float32 -> bfloat16 models for tests/bats/cast.bats, with data sets
// whose expected bfloat16 bits are the float32 bits truncated (ONNX's reference Cast:
// float32_to_bfloat16(x, truncate=True)); NaN stays a NaN:
//   cast_bf16.onnx        y = Cast(x, to=BFLOAT16), x [6] an input (run-time kernel)
//   cast_bf16_const.onnx  y = Cast(c, to=BFLOAT16) + z (bfloat16 zeros input), c a constant
//                         (bfloat16 is not folded: the Cast runs, fused with the Add by ecg-fuse)
import path from 'node:path';
import { encodeModel, tensorProto, onnxRoot, writeAtomic, FLOAT } from '../../tools/bench/onnx_build.mjs';

const out = process.argv[2];
if (!out) { console.error('usage: mkcast.mjs OUTDIR'); process.exit(2); }
const BF16 = 16;
const xs = new Float32Array([0.48033666610717773, 0.4996848702430725, -0.8191054463386536, 1.0, 3.0e38, NaN]);
const bits = new Uint32Array(xs.buffer);
const want = new Uint16Array(bits.length);
for (let i = 0; i < bits.length; i++) want[i] = Number.isNaN(xs[i]) ? 0x7fc0 : bits[i] >>> 16;
const T = onnxRoot().lookupType('onnx.TensorProto');
const enc = (name, code, dims, vals) => T.encode(T.create(tensorProto(name, code, dims, vals))).finish();
writeAtomic(path.join(out, 'cast_bf16.onnx'), encodeModel({ opset: 13, inputs: [['x', FLOAT, [6]]], outputs: [['y', BF16, [6]]],
  nodes: [['Cast', ['x'], ['y'], { to: BF16 }]] }));
writeAtomic(path.join(out, 'cast_bf16/data/input_0.pb'), enc('x', FLOAT, [6], xs));
writeAtomic(path.join(out, 'cast_bf16/data/output_0.pb'), enc('y', BF16, [6], want));
writeAtomic(path.join(out, 'cast_bf16_const.onnx'), encodeModel({ opset: 13, inputs: [['z', BF16, [6]]], outputs: [['y', BF16, [6]]],
  inits: [['c', FLOAT, [6], xs]], nodes: [['Cast', ['c'], ['cb'], { to: BF16 }], ['Add', ['cb', 'z'], ['y']]] }));
writeAtomic(path.join(out, 'cast_bf16_const/data/input_0.pb'), enc('z', BF16, [6], new Uint16Array(6)));
writeAtomic(path.join(out, 'cast_bf16_const/data/output_0.pb'), enc('y', BF16, [6], want));
