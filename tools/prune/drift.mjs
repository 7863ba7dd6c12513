#!/usr/bin/env node
// drift.mjs: output drift of a pruned model against the dense one (ecg-prune --drift).
//
//   node drift.mjs --dense D.onnx --pruned P.onnx [--seed S] [--input-shape NAME=DIMS ...]
//
// Runs ONNX Runtime on both models with the same seeded inputs (make_data.mjs's
// generator, tools/bench/common.mjs) and prints one JSON line:
//   {"seed": S, "outputs": [{"name", "max_abs", "cosine"}...], "max_abs", "min_cosine"}
// max_abs = max |dense - pruned| over the elements; cosine = dense.pruned / (|dense| |pruned|)
// (1 when both are zero). Exit: 0 ok, 1 model/runtime error, 2 usage.
import fs from 'node:fs';
import { parseArgs, splitAssign, parseDims, dtypeByOrt, resolveShape, loadOrt, runMain, mulberry32, randomData, UsageError } from '../bench/common.mjs';

const USAGE = `usage: node drift.mjs --dense D.onnx --pruned P.onnx [--seed S] [--input-shape NAME=DIMS ...]
`;

async function session(ort, file) {
  if (!fs.existsSync(file)) throw new Error(`${file}: no such file`);
  try {
    return await ort.InferenceSession.create(file, { logSeverityLevel: 3, graphOptimizationLevel: 'all' });
  } catch (e) {
    throw new Error(`${file}: cannot load model: ${e.message}`);
  }
}

async function main(argv) {
  const { opts, positional } = parseArgs(argv, { dense: 'str', pruned: 'str', seed: 'int', 'input-shape': 'list', help: 'flag' });
  if (opts.help) { process.stdout.write(USAGE); return 0; }
  if (positional.length) throw new UsageError(`unexpected argument '${positional[0]}'`);
  if (!opts.dense || !opts.pruned) throw new UsageError('--dense and --pruned are required');
  const shapes = new Map();
  for (const s of opts['input-shape'] ?? []) { const [n, d] = splitAssign('--input-shape', s); shapes.set(n, parseDims(d)); }
  const ort = await loadOrt();
  const sd = await session(ort, opts.dense), sp = await session(ort, opts.pruned);
  const seed = opts.seed ?? 0;
  const next = mulberry32(seed);
  const feeds = {};
  sd.inputMetadata.forEach((meta) => {
    if (!meta.isTensor) throw new Error(`input '${meta.name}' is not a tensor`);
    const dt = dtypeByOrt(meta.type);
    const dims = resolveShape(meta, shapes.get(meta.name));
    feeds[meta.name] = new ort.Tensor(meta.type, randomData(dt, dims.reduce((p, d) => p * d, 1), meta.name, next), dims);
  });
  const od = await sd.run(feeds), op = await sp.run(feeds);
  const outputs = [];
  let maxAbs = 0, minCos = 1;
  for (const name of sd.outputNames) {
    if (!op[name]) throw new Error(`the pruned model has no output '${name}'`);
    const a = od[name].data, b = op[name].data;
    if (a.length !== b.length) throw new Error(`output '${name}': ${a.length} vs ${b.length} elements`);
    let m = 0, dot = 0, na = 0, nb = 0;
    for (let i = 0; i < a.length; i++) {
      const x = Number(a[i]), y = Number(b[i]);
      m = Math.max(m, Math.abs(x - y));
      dot += x * y; na += x * x; nb += y * y;
    }
    const cos = na === 0 && nb === 0 ? 1 : dot / Math.sqrt(na * nb);
    outputs.push({ name, max_abs: Number(m.toPrecision(6)), cosine: Number(cos.toPrecision(6)) });
    maxAbs = Math.max(maxAbs, m); minCos = Math.min(minCos, cos);
  }
  process.stdout.write(JSON.stringify({ seed, outputs, max_abs: Number(maxAbs.toPrecision(6)), min_cosine: Number(minCos.toPrecision(6)) }) + '\n');
  return 0;
}

runMain('drift.mjs', USAGE, main);
