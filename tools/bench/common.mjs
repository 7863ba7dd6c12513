// Shared helpers for ort_run.mjs, make_data.mjs and pb2raw.mjs: argument parsing, ONNX dtype
// table, shape syntax, the seeded PRNG (same as ecg-bench's --random), and loading
// onnxruntime-node with a clear message when `make setup` has not been run.

import fs from 'node:fs';
import { createRequire } from 'node:module';

export class UsageError extends Error {}

// ONNX TensorProto.DataType code <-> ORT tensor type name, element size in bytes,
// and the typed array ORT expects for it. 'int' marks integer types (random
// values in [0,100) or [0,2)), 'bool' is 0/1.
export const DTYPES = [
  { code: 1, ort: 'float32', size: 4, Arr: Float32Array, kind: 'float' },
  { code: 2, ort: 'uint8', size: 1, Arr: Uint8Array, kind: 'int' },
  { code: 3, ort: 'int8', size: 1, Arr: Int8Array, kind: 'int' },
  { code: 4, ort: 'uint16', size: 2, Arr: Uint16Array, kind: 'int' },
  { code: 5, ort: 'int16', size: 2, Arr: Int16Array, kind: 'int' },
  { code: 6, ort: 'int32', size: 4, Arr: Int32Array, kind: 'int' },
  { code: 7, ort: 'int64', size: 8, Arr: BigInt64Array, kind: 'int' },
  { code: 9, ort: 'bool', size: 1, Arr: Uint8Array, kind: 'bool' },
  { code: 10, ort: 'float16', size: 2, Arr: Uint16Array, kind: 'float' },
  { code: 11, ort: 'float64', size: 8, Arr: Float64Array, kind: 'float' },
  { code: 12, ort: 'uint32', size: 4, Arr: Uint32Array, kind: 'int' },
  { code: 13, ort: 'uint64', size: 8, Arr: BigUint64Array, kind: 'int' },
];

export function dtypeByOrt(name) {
  const d = DTYPES.find((x) => x.ort === name);
  if (!d) throw new Error(`unsupported tensor type '${name}'`);
  return d;
}

export function dtypeByCode(code) {
  const d = DTYPES.find((x) => x.code === code);
  if (!d) throw new Error(`unsupported ONNX data_type ${code}`);
  return d;
}

// "1x3x224x224" -> [1,3,224,224]; "scalar" or "" -> [].
export function parseDims(s) {
  if (s === '' || s === 'scalar') return [];
  const dims = s.split('x').map((t) => (/^\d+$/.test(t) ? Number(t) : NaN));
  if (dims.some((d) => !Number.isSafeInteger(d))) throw new UsageError(`bad shape '${s}' (expected e.g. 1x3x224x224)`);
  return dims;
}

// Split "NAME=VALUE" at the first '=' (as the lowered runner does: file paths may
// contain '=', tensor names practically never).
export function splitAssign(opt, s) {
  const i = s.indexOf('=');
  if (i <= 0 || i === s.length - 1) throw new UsageError(`${opt} expects NAME=VALUE, got '${s}'`);
  return [s.slice(0, i), s.slice(i + 1)];
}

// Minimal long-option parser. spec: {name: 'int'|'str'|'list'|'flag'}.
// Returns {opts, positional}. Throws UsageError.
export function parseArgs(argv, spec) {
  const opts = {};
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    if (!a.startsWith('--')) { positional.push(a); continue; }
    let val;
    const eq = a.indexOf('=');
    const key0 = eq > 0 ? a.slice(2, eq) : a.slice(2);
    const kind = spec[key0];
    if (!kind) throw new UsageError(`unknown option '${a}'`);
    if (kind === 'flag') { opts[key0] = true; continue; }
    if (eq > 0) val = a.slice(eq + 1); // --opt=value
    else {
      if (i + 1 >= argv.length) throw new UsageError(`option '${a}' needs a value`);
      val = argv[++i];
    }
    if (kind === 'int') {
      if (!/^\d+$/.test(val)) throw new UsageError(`option --${key0} expects a non-negative integer, got '${val}'`);
      opts[key0] = Number(val);
    } else if (kind === 'list') (opts[key0] ||= []).push(val);
    else opts[key0] = val;
  }
  return { opts, positional };
}

// Load onnxruntime-node from tools/bench/node_modules.
export async function loadOrt() {
  const require = createRequire(import.meta.url);
  try {
    return require('onnxruntime-node');
  } catch (e) {
    throw new Error(`cannot load onnxruntime-node (run 'make setup'): ${e.message.split('\n')[0]}`);
  }
}

// Resolve the concrete shape of each graph input from session metadata and
// --input-shape overrides. A symbolic dim without an override: 1 when it is the
// leading (batch) dim, or inferred from byteLen (bytes of the input file) when it
// is the only unknown dim; otherwise an error naming the input.
export function resolveShape(meta, override, byteLen) {
  const dt = dtypeByOrt(meta.type);
  if (override) {
    if (meta.shape.length && override.length !== meta.shape.length)
      throw new Error(`input '${meta.name}': --input-shape has rank ${override.length}, model says ${meta.shape.length}`);
    meta.shape.forEach((d, i) => {
      if (typeof d === 'number' && d >= 0 && d !== override[i])
        throw new Error(`input '${meta.name}': --input-shape dim ${i} is ${override[i]}, model says ${d}`);
    });
    return override;
  }
  const dims = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : null));
  const unknown = dims.map((d, i) => (d === null ? i : -1)).filter((i) => i >= 0);
  if (unknown.length === 1 && byteLen !== undefined) {
    const known = dims.reduce((p, d) => p * (d ?? 1), 1) * dt.size;
    if (known === 0 || byteLen % known) throw new Error(`input '${meta.name}': file size ${byteLen} does not fit shape [${meta.shape}] of ${meta.type}`);
    dims[unknown[0]] = byteLen / known;
    return dims;
  }
  if (unknown.length && unknown[0] === 0) dims[0] = 1;
  const still = dims.findIndex((d) => d === null);
  if (still >= 0) throw new Error(`input '${meta.name}' has symbolic shape [${meta.shape}]: give --input-shape ${meta.name}=DIMS`);
  return dims;
}

// mulberry32: 32-bit seeded PRNG; ecg-bench's --random uses the identical generator
// so `make_data.mjs --seed S` and `ecg-bench --random S` draw the same inputs.
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

// float32 -> IEEE half bits (round to nearest even).
export function floatToHalf(f) {
  const f32 = new Float32Array([f]);
  const x = new Uint32Array(f32.buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  let exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1), half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;
  return sign | h;
}

// Fill a typed array of dtype dt with n seeded values drawn from next() (a mulberry32
// stream): floats uniform in [-1,1), integers u32 % 2 for bool or a name containing
// "mask", else u32 % 100 (make_data.mjs's header; ecg-bench --random draws alike).
export function randomData(dt, n, name, next) {
  const a = new dt.Arr(n);
  const mod = dt.kind === 'bool' || /mask/i.test(name) ? 2 : 100;
  for (let i = 0; i < n; i++) {
    const u = next();
    if (dt.kind === 'float') {
      const f = ((u >>> 8) / 16777216) * 2 - 1;
      a[i] = dt.ort === 'float16' ? floatToHalf(f) : f;
    } else {
      const v = u % mod;
      a[i] = a instanceof BigInt64Array || a instanceof BigUint64Array ? BigInt(v) : v;
    }
  }
  return a;
}

// Run main(argv) and map errors to exit codes: 2 usage, 1 everything else.
export function runMain(prog, usage, main) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code ?? 0),
    (e) => {
      process.stderr.write(`${prog}: ${e.message}\n`);
      if (e instanceof UsageError) { process.stderr.write(usage); process.exit(2); }
      process.exit(1);
    },
  );
}

export const num = (x) => Number(x.toPrecision(6));

// Load onnx.TensorProto from the system onnx.proto with protobufjs (make_data.mjs,
// pb2raw.mjs). Throws an Error naming what is missing.
export function loadTensorProto() {
  const require = createRequire(import.meta.url);
  let protobuf;
  try { protobuf = require('protobufjs'); } catch (e) { throw new Error("cannot load protobufjs (run 'make setup')"); }
  const file = process.env.ONNX_PROTO || '/usr/include/onnx/onnx.proto';
  if (!fs.existsSync(file)) throw new Error(`${file} not found (install libonnx-dev or set ONNX_PROTO)`);
  return protobuf.loadSync(file).lookupType('onnx.TensorProto');
}
