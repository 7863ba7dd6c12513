#!/usr/bin/env node
// make_data.mjs: make seeded inputs for an ONNX model, run ONNX Runtime on them, and
// write them as ONNX backend test data (input_K.pb / output_K.pb TensorProtos).
//
//   node make_data.mjs --model M.onnx --out DIR/test_data_set_0 [--seed S]
//                      [--input-shape NAME=1x3x224x224 ...] [--input-value NAME=V ...]
//   node make_data.mjs --model M.onnx --out DIR --size NAME=DIMS[,NAME=DIMS...] --size ...
//
// With --size (repeatable), one data set per --size at the sizes it names (over the
// --input-shape bindings), written to DIR/test_data_set_K for the K-th --size (K from 0),
// each from seed S: data sets of several sizes for one model (ecg-bench --data D1 --data
// D2 ...; SOD²'s dynamic shapes).
//
// --input-value NAME=V (repeatable) fills every element of input NAME with the number V
// (drawn values are still drawn, so the other inputs stay those of the seed): a value that
// selects a branch, e.g. silero VAD's sample rate sr=16000.
//
// Inputs, in graph input order, drawn from one mulberry32 stream seeded with S
// (default 0), the same generator as `ecg-bench --random S`:
//   float32/float16/float64: uniform in [-1,1): ((u32 >>> 8) / 2^24) * 2 - 1
//   integer types: u32 % 2 when the input name contains "mask" (case-insensitive),
//                  else u32 % 100   (token ids, indices; always valid for Gather
//                  over vocabularies of >= 100 rows)
//   bool: u32 % 2
// Shapes: static dims from the model; a symbolic dim needs --input-shape, except a
// leading one (batch), which defaults to 1.
// Each file is one TensorProto with name, dims, data_type and raw_data (little-endian),
// exactly like ONNX's own test_data_set_0 files; output_K follows graph output order.
// The .proto is loaded at run time from $ONNX_PROTO or /usr/include/onnx/onnx.proto.
// Exit: 0 ok, 1 bad model/runtime error, 2 usage.

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs, splitAssign, parseDims, dtypeByOrt, resolveShape, loadOrt, runMain, mulberry32, randomData, UsageError, loadTensorProto } from './common.mjs';

const USAGE = `usage: node make_data.mjs --model M.onnx --out DIR/test_data_set_0 [--seed S]
       [--input-shape NAME=DIMS ...] [--input-value NAME=V ...]
       node make_data.mjs --model M.onnx --out DIR --size NAME=DIMS[,NAME=DIMS...] [--size ...]
       (one data set per --size, in DIR/test_data_set_K)
`;


// Encode one tensor as TensorProto bytes.
function encodeTensor(TensorProto, name, dtCode, dims, data) {
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const msg = TensorProto.create({ dims, dataType: dtCode, name, rawData: raw });
  return TensorProto.encode(msg).finish();
}

// Write bytes to file atomically (temporary name, then rename).
function writeAtomic(file, bytes) {
  const tmp = `${file}.tmp${process.pid}`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, file);
}

async function main(argv) {
  const { opts, positional } = parseArgs(argv, { model: 'str', out: 'str', seed: 'int', 'input-shape': 'list', 'input-value': 'list', size: 'list', help: 'flag' });
  if (opts.help) { process.stdout.write(USAGE); return 0; }
  if (positional.length) throw new UsageError(`unexpected argument '${positional[0]}'`);
  if (!opts.model) throw new UsageError('--model is required');
  if (!opts.out) throw new UsageError('--out is required');
  const shapes = new Map();
  for (const s of opts['input-shape'] ?? []) { const [n, d] = splitAssign('--input-shape', s); shapes.set(n, parseDims(d)); }
  const values = new Map();
  for (const s of opts['input-value'] ?? []) {
    const [n, v] = splitAssign('--input-value', s);
    if (!/^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/.test(v)) throw new UsageError(`--input-value ${n}: '${v}' is not a number`);
    values.set(n, v);
  }
  // one binding per data set: --input-shape alone, or each --size over it
  const sets = (opts.size ?? [null]).map((spec) => {
    const m = new Map(shapes);
    if (spec !== null) {
      if (!spec) throw new UsageError('--size expects NAME=DIMS[,NAME=DIMS...]');
      for (const b of spec.split(',')) { const [n, d] = splitAssign('--size', b); m.set(n, parseDims(d)); }
    }
    return m;
  });

  const TensorProto = loadTensorProto();
  const ort = await loadOrt();
  if (!fs.existsSync(opts.model)) throw new Error(`${opts.model}: no such file`);
  let session;
  try {
    session = await ort.InferenceSession.create(opts.model, { logSeverityLevel: 3, graphOptimizationLevel: 'all' });
  } catch (e) {
    throw new Error(`${opts.model}: cannot load model: ${e.message}`);
  }
  for (const n of values.keys())
    if (!session.inputNames.includes(n)) throw new Error(`--input-value ${n}: the model has no input '${n}' (inputs: ${session.inputNames.join(', ')})`);
  for (const m of sets)
    for (const n of m.keys())
      if (!session.inputNames.includes(n)) throw new Error(`--input-shape ${n}: the model has no input '${n}' (inputs: ${session.inputNames.join(', ')})`);
  for (let k = 0; k < sets.length; k++)
    await makeSet(ort, session, TensorProto, sets[k], values, opts.seed ?? 0, opts.size ? path.join(opts.out, `test_data_set_${k}`) : opts.out, opts.model);
  return 0;
}

// One data set: inputs at the shapes of `shapes` from seed, ONNX Runtime's outputs, in outDir.
async function makeSet(ort, session, TensorProto, shapes, values, seed, outDir, model) {
  const next = mulberry32(seed);
  const feeds = {};
  const files = [];
  session.inputMetadata.forEach((meta, k) => {
    if (!meta.isTensor) throw new Error(`input '${meta.name}' is not a tensor`);
    const dt = dtypeByOrt(meta.type);
    const dims = resolveShape(meta, shapes.get(meta.name));
    const data = randomData(dt, dims.reduce((p, d) => p * d, 1), meta.name, next);
    if (values.has(meta.name)) {
      const v = values.get(meta.name);
      data.fill(data instanceof BigInt64Array || data instanceof BigUint64Array ? BigInt(Math.trunc(Number(v))) : Number(v));
    }
    feeds[meta.name] = new ort.Tensor(meta.type, data, dims);
    files.push([`input_${k}.pb`, encodeTensor(TensorProto, meta.name, dt.code, dims, data)]);
  });
  let out;
  try { out = await session.run(feeds); } catch (e) { throw new Error(`${model}: run failed: ${e.message}`); }
  session.outputNames.forEach((name, k) => {
    const t = out[name];
    files.push([`output_${k}.pb`, encodeTensor(TensorProto, name, dtypeByOrt(t.type).code, t.dims.map(Number), t.data)]);
  });
  fs.mkdirSync(outDir, { recursive: true });
  for (const [f, bytes] of files) writeAtomic(path.join(outDir, f), bytes);
  process.stderr.write(`make_data.mjs: wrote ${files.length} tensors to ${outDir}\n`);
}

runMain('make_data.mjs', USAGE, main);
