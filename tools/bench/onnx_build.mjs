// onnx_build.mjs: build small ONNX models and backend-test data sets in memory, for the
// generated opset tests (gen_opset_tests.mjs) and the opset re-declaration of real models
// (redeclare_opset.mjs).  protobufjs loads onnx.proto at run time ($ONNX_PROTO or Debian's
// /usr/include/onnx/onnx.proto, as make_data.mjs does); ONNX Runtime runs the reference.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { dtypeByCode, mulberry32, floatToHalf } from './common.mjs';

// ONNX TensorProto.DataType codes used by the generators.
export const FLOAT = 1, UINT8 = 2, INT8 = 3, INT32 = 6, INT64 = 7, BOOL = 9, FLOAT16 = 10, DOUBLE = 11;
export const FLOAT8E4M3FN = 17;

// AttributeProto.AttributeType codes.
const AT = { FLOAT: 1, INT: 2, STRING: 3, FLOATS: 6, INTS: 7 };

let root = null;
/** The onnx protobuf root (onnx.ModelProto, onnx.TensorProto, ...). */
export function onnxRoot() {
  if (root) return root;
  const require = createRequire(import.meta.url);
  let protobuf;
  try { protobuf = require('protobufjs'); } catch (e) { throw new Error("cannot load protobufjs (run 'make setup')"); }
  const file = process.env.ONNX_PROTO || '/usr/include/onnx/onnx.proto';
  if (!fs.existsSync(file)) throw new Error(`${file} not found (install libonnx-dev or set ONNX_PROTO)`);
  root = protobuf.loadSync(file);
  return root;
}

/** The IR version ONNX pairs with an ai.onnx opset (onnx/helper.py VERSION_TABLE):
 *  opset <= 18: 8, 19-20: 9, 21-22: 10, 23: 11, 24+: 12 (ONNX Runtime checks it). */
export function irVersionFor(opset) {
  return opset <= 18 ? 8 : opset <= 20 ? 9 : opset <= 22 ? 10 : opset <= 23 ? 11 : 12;
}

/** One AttributeProto from a JS value: integer -> INT, other number -> FLOAT, string ->
 *  STRING, array of integers -> INTS, array with a non-integer -> FLOATS; {f: x} forces a
 *  FLOAT, {floats: [...]} FLOATS. */
export function attr(name, v) {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    if ('f' in v) return { name, type: AT.FLOAT, f: v.f };
    if ('floats' in v) return { name, type: AT.FLOATS, floats: v.floats };
  }
  if (typeof v === 'string') return { name, type: AT.STRING, s: Buffer.from(v) };
  if (typeof v === 'number') return Number.isInteger(v) ? { name, type: AT.INT, i: v } : { name, type: AT.FLOAT, f: v };
  if (Array.isArray(v)) return v.every(Number.isInteger) ? { name, type: AT.INTS, ints: v } : { name, type: AT.FLOATS, floats: v };
  throw new Error(`attribute ${name}: unsupported value ${v}`);
}

/** A typed array of dtype code `code` holding values (numbers; int64 as BigInt). */
export function typedArray(code, values) {
  const dt = dtypeByCode(code);
  const a = new dt.Arr(values.length);
  values.forEach((v, i) => {
    if (a instanceof BigInt64Array || a instanceof BigUint64Array) a[i] = BigInt(v);
    else if (code === FLOAT16) a[i] = floatToHalf(v);
    else a[i] = code === BOOL ? (v ? 1 : 0) : v;
  });
  return a;
}

/** n seeded values for an input of dtype code: floats uniform in [-1, 1), integers in
 *  [0, 100), bools 0/1 (the rules of make_data.mjs), from PRNG next. */
export function randomValues(code, n, next) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const u = next();
    const dt = dtypeByCode(code);
    out.push(dt.kind === 'float' ? ((u >>> 8) / 16777216) * 2 - 1 : dt.kind === 'bool' ? u % 2 : u % 100);
  }
  return out;
}

/** TensorProto message fields for a tensor (raw little-endian data). */
export function tensorProto(name, code, dims, values) {
  const a = values instanceof Object && ArrayBuffer.isView(values) ? values : typedArray(code, values);
  return { name, dims, dataType: code, rawData: Buffer.from(a.buffer, a.byteOffset, a.byteLength) };
}

/** A ValueInfoProto: dims null for an unknown shape. */
function valueInfo(name, code, dims) {
  const tt = { elemType: code };
  if (dims) tt.shape = { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) };
  return { name, type: { tensorType: tt } };
}

/** Encode a model.  spec: {opset, inputs: [[name, code, dims]], inits: [[name, code, dims,
 *  values]], nodes: [[op, inputs, outputs, attrs, domain?]], outputs: [[name, code, dims?]],
 *  imports?: [[domain, version]]}.  Returns the ModelProto bytes. */
export function encodeModel(spec) {
  const r = onnxRoot();
  const ModelProto = r.lookupType('onnx.ModelProto');
  const graph = {
    name: spec.name || 'g',
    node: spec.nodes.map(([op, ins, outs, attrs = {}, domain = ''], k) => ({
      name: `n${k}_${op}`, opType: op, domain, input: ins, output: outs,
      attribute: Object.entries(attrs).map(([n, v]) => attr(n, v)),
    })),
    initializer: (spec.inits || []).map(([n, c, d, v]) => tensorProto(n, c, d, v)),
    input: spec.inputs.map(([n, c, d]) => valueInfo(n, c, d)),
    output: spec.outputs.map(([n, c, d]) => valueInfo(n, c, d || null)),
  };
  const opsetImport = [{ domain: '', version: spec.opset }, ...(spec.imports || []).map(([domain, version]) => ({ domain, version }))];
  const msg = ModelProto.create({ irVersion: irVersionFor(spec.opset), producerName: 'ecg-gen', opsetImport, graph });
  return ModelProto.encode(msg).finish();
}

/** Encode one TensorProto (a backend-test input_K.pb / output_K.pb). */
export function encodeTensor(name, code, dims, data) {
  const TensorProto = onnxRoot().lookupType('onnx.TensorProto');
  return TensorProto.encode(TensorProto.create(tensorProto(name, code, dims, data))).finish();
}

/** Write bytes to file atomically (temporary name, then rename). */
export function writeAtomic(file, bytes) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp${process.pid}`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, file);
}

export { mulberry32 };
