#!/usr/bin/env node
// ort_run.mjs: time an ONNX model with ONNX Runtime (onnxruntime-node, CPU) on raw inputs.
//
//   node ort_run.mjs --model M.onnx [--threads N] [--warmup W] [--runs R]
//                    --in NAME=FILE.bin ... [--input-shape NAME=1x3x224x224 ...] [--out-dir D]
//
// Inputs are raw little-endian files. Their dtype comes from the session's
// inputMetadata; their shape too, where it is static. A symbolic dim is taken from
// --input-shape NAME=DIMS when given; otherwise, when it is the only symbolic dim of
// that input, it is inferred from the file size; a leading symbolic dim is otherwise 1.
// The file size must equal the tensor's bytes exactly.
//
// Session: intraOpNumThreads=N, interOpNumThreads=1, graphOptimizationLevel 'all' (or
// --opt-level disabled|basic|extended|all),
// executionMode 'sequential'. W warm-up runs, then R timed runs (process.hrtime.bigint).
// Prints one JSON line on stdout: {"median_ms","p10_ms","p90_ms","runs","threads","times_ms"}
// (percentiles by linear interpolation between sorted samples, like ecg-bench; times_ms:
// every timed run's ms, sorted, which ecg-bench --interleave pools over its chunks).
// With --out-dir D, writes each output as D/FILE.bin (raw little-endian; FILE is the
// output name with characters outside [A-Za-z0-9._:-] replaced by '_') and
// D/outputs.json: [{"name","file","dtype" (ONNX code),"dims"}...] in graph order.
// With --profile FILE, ONNX Runtime's own profiler is on (its timings then include the
// profiler's overhead: time with a run without it) and FILE gets the per-node profile, the
// layer-by-layer counterpart of ecg-bench --profile:
//   {"threads","runs","total_ms","nodes":[{"name","op","median_ms","share"}...]}
// one entry per node of the graph ONNX Runtime ran (after its own optimisations: fused and
// reordered nodes, e.g. ".._nchwc" convolutions, "ReorderOutput"), in execution order;
// median_ms: the median of its kernel's time over the R timed runs (the W warm-up runs left
// out); total_ms: the sum of the medians; share: median_ms / total_ms.
// Exit: 0 ok, 1 bad model/input/runtime error, 2 usage. Messages on stderr.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, splitAssign, parseDims, dtypeByOrt, resolveShape, loadOrt, runMain, num, UsageError } from './common.mjs';

const USAGE = `usage: node ort_run.mjs --model M.onnx [--threads N] [--warmup W] [--runs R]
       --in NAME=FILE.bin ... [--input-shape NAME=DIMS ...] [--out-dir D] [--opt-level all]
       [--profile FILE]
`;

// ONNX Runtime's profiler trace (a JSON array of Chrome-trace events) -> per-node medians
// over the runs after the first `warmup` (each node's events in run order).
function nodeProfile(events, warmup, runs, threads) {
  const byNode = new Map();
  for (const ev of events) {
    if (ev.cat !== 'Node' || typeof ev.name !== 'string' || !ev.name.endsWith('_kernel_time')) continue;
    const name = ev.name.slice(0, -'_kernel_time'.length);
    if (!byNode.has(name)) byNode.set(name, { op: ev.args?.op_name ?? '', us: [] });
    byNode.get(name).us.push(Number(ev.dur));
  }
  const nodes = [];
  for (const [name, v] of byNode) {
    const us = v.us.slice(Math.min(warmup, Math.max(0, v.us.length - 1))).sort((a, b) => a - b);
    nodes.push({ name, op: v.op, median_ms: num(quantile(us, 0.5) / 1e3) });
  }
  const total = nodes.reduce((a, n) => a + n.median_ms, 0);
  for (const n of nodes) n.share = num(total > 0 ? n.median_ms / total : 0);
  return { threads, runs, total_ms: num(total), nodes };
}

// Sorted samples -> value at quantile q (0..1), linear interpolation.
function quantile(sorted, q) {
  if (!sorted.length) return NaN;
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos), hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

const safeName = (s) => s.replace(/[^A-Za-z0-9._:-]/g, '_');

async function main(argv) {
  const { opts, positional } = parseArgs(argv, {
    model: 'str', threads: 'int', warmup: 'int', runs: 'int', in: 'list', 'input-shape': 'list', 'out-dir': 'str', 'opt-level': 'str',
    profile: 'str', help: 'flag',
  });
  if (opts.help) { process.stdout.write(USAGE); return 0; }
  if (positional.length) throw new UsageError(`unexpected argument '${positional[0]}'`);
  if (!opts.model) throw new UsageError('--model is required');
  const threads = opts.threads ?? 1, warmup = opts.warmup ?? 3, runs = opts.runs ?? 20;
  if (threads < 1) throw new UsageError('--threads must be >= 1');
  if (runs < 1) throw new UsageError('--runs must be >= 1');
  const optLevel = opts['opt-level'] ?? 'all';
  if (!['disabled', 'basic', 'extended', 'all'].includes(optLevel)) throw new UsageError(`--opt-level must be disabled, basic, extended or all`);

  const files = new Map();
  for (const s of opts.in ?? []) { const [n, f] = splitAssign('--in', s); files.set(n, f); }
  const shapes = new Map();
  for (const s of opts['input-shape'] ?? []) { const [n, d] = splitAssign('--input-shape', s); shapes.set(n, parseDims(d)); }

  const ort = await loadOrt();
  if (!fs.existsSync(opts.model)) throw new Error(`${opts.model}: no such file`);
  let session, profDir;
  if (opts.profile) profDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort_profile.'));
  try {
    session = await ort.InferenceSession.create(opts.model, {
      intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: optLevel,
      executionMode: 'sequential', logSeverityLevel: 3,
      ...(profDir ? { enableProfiling: true, profileFilePrefix: path.join(profDir, 'p') } : {}),
    });
  } catch (e) {
    throw new Error(`${opts.model}: cannot load model: ${e.message}`);
  }

  const feeds = {};
  const known = new Set(session.inputMetadata.map((m) => m.name));
  for (const n of files.keys()) if (!known.has(n)) throw new Error(`--in ${n}: the model has no input '${n}' (inputs: ${[...known].join(', ')})`);
  for (const n of shapes.keys()) if (!known.has(n)) throw new Error(`--input-shape ${n}: the model has no input '${n}'`);
  for (const meta of session.inputMetadata) {
    if (!meta.isTensor) throw new Error(`input '${meta.name}' is not a tensor`);
    const f = files.get(meta.name);
    if (!f) throw new Error(`input '${meta.name}' (${meta.type} [${meta.shape}]) has no --in ${meta.name}=FILE`);
    const dt = dtypeByOrt(meta.type);
    let buf;
    try { buf = fs.readFileSync(f); } catch (e) { throw new Error(`input '${meta.name}': cannot read ${f}: ${e.code ?? e.message}`); }
    const dims = resolveShape(meta, shapes.get(meta.name), buf.length);
    const n = dims.reduce((p, d) => p * d, 1);
    if (buf.length !== n * dt.size)
      throw new Error(`input '${meta.name}': ${f} has ${buf.length} bytes, expected ${n * dt.size} (${meta.type} [${dims.join('x')}])`);
    const ab = new ArrayBuffer(buf.length); // aligned copy
    new Uint8Array(ab).set(buf);
    feeds[meta.name] = new ort.Tensor(meta.type, new dt.Arr(ab), dims);
  }

  let out;
  try {
    for (let i = 0; i < warmup; i++) await session.run(feeds);
    const times = [];
    for (let i = 0; i < runs; i++) {
      const t0 = process.hrtime.bigint();
      out = await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    process.stdout.write(JSON.stringify({
      median_ms: num(quantile(times, 0.5)), p10_ms: num(quantile(times, 0.1)), p90_ms: num(quantile(times, 0.9)), runs, threads, times_ms: times,
    }) + '\n');
  } catch (e) {
    throw new Error(`${opts.model}: run failed: ${e.message}`);
  }

  if (profDir) {
    try {
      session.endProfiling();
      const f = fs.readdirSync(profDir).filter((n) => n.endsWith('.json'));
      if (f.length !== 1) throw new Error(`the profiler wrote ${f.length} trace files`);
      const prof = nodeProfile(JSON.parse(fs.readFileSync(path.join(profDir, f[0]), 'utf8')), warmup, runs, threads);
      if (!prof.nodes.length) throw new Error('the trace holds no node timings');
      fs.writeFileSync(opts.profile, JSON.stringify(prof, null, 1) + '\n');
    } catch (e) {
      throw new Error(`--profile ${opts.profile}: ${e.message}`);
    } finally {
      fs.rmSync(profDir, { recursive: true, force: true });
    }
  }

  if (opts['out-dir']) {
    const d = opts['out-dir'];
    fs.mkdirSync(d, { recursive: true });
    const list = [];
    for (const name of session.outputNames) {
      const t = out[name];
      const dt = dtypeByOrt(t.type);
      const file = safeName(name) + '.bin';
      const data = t.data;
      fs.writeFileSync(path.join(d, file), Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      list.push({ name, file, dtype: dt.code, dims: t.dims.map(Number) });
    }
    fs.writeFileSync(path.join(d, 'outputs.json'), JSON.stringify(list, null, 1) + '\n');
  }
  return 0;
}

runMain('ort_run.mjs', USAGE, main);
