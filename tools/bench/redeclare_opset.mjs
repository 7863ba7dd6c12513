#!/usr/bin/env node
// redeclare_opset.mjs: re-declare a model (opset 11-17) at a newer ai.onnx opset the way a
// current exporter writes it, to test the real models at opsets 18-23 (issue 17 item 4).
//
//   node redeclare_opset.mjs --model M.onnx --opset N --out M2.onnx
//
// Rewrites, for N >= 18, each signature change between the model's opset and N that the
// project's models meet:
//   Reduce{Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,SumSquare}: the `axes` attribute becomes
//     an int64 initializer input (18); ReduceSum's (13) and Squeeze/Unsqueeze's (13) too;
//   Split: the `split` attribute becomes an input (13), or `num_outputs` (18) when the parts
//     are equal or only the last is smaller, as exporters write it;
// and sets the IR version ONNX pairs with N.  Any other operator whose schema changed
// between the two opsets in a way not handled here makes the tool exit 1 naming it (the
// re-declared model would not mean the same).  Exit: 0 ok, 1 error, 2 usage.

import fs from 'node:fs';
import { parseArgs, runMain, UsageError } from './common.mjs';
import { onnxRoot, irVersionFor, tensorProto, INT64, writeAtomic } from './onnx_build.mjs';

const USAGE = `usage: node redeclare_opset.mjs --model M.onnx --opset N --out M2.onnx
`;

const REDUCE18 = new Set(['ReduceMean', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1', 'ReduceL2', 'ReduceLogSum', 'ReduceLogSumExp', 'ReduceSumSquare']);
// Operators whose signature changed from opset 12 on in ways this tool does not rewrite
// (they fail loudly rather than be silently re-declared).
const UNHANDLED = { Slice: 10, Clip: 11, Pad: 11, Resize: 11, Upsample: 10, TopK: 10, Dropout: 12, BatchNormalization: 9, Scatter: 11 };

async function main(argv) {
  const { opts, positional } = parseArgs(argv, { model: 'str', opset: 'int', out: 'str', help: 'flag' });
  if (opts.help) { process.stdout.write(USAGE); return 0; }
  if (positional.length) throw new UsageError(`unexpected argument '${positional[0]}'`);
  if (!opts.model || !opts.out || opts.opset === undefined) throw new UsageError('--model, --opset and --out are required');
  const ModelProto = onnxRoot().lookupType('onnx.ModelProto');
  const m = ModelProto.decode(fs.readFileSync(opts.model));
  const imp = m.opsetImport.find((o) => !o.domain);
  if (!imp) throw new Error(`${opts.model}: imports no ai.onnx opset`);
  const from = Number(imp.version), to = opts.opset;
  if (to < from) throw new Error(`${opts.model}: opset ${from} is newer than ${to}`);
  const g = m.graph;
  let k = 0;
  const axesInput = (node, name, values) => {
    const t = `${node.name || node.opType}_${name}_${k++}`;
    g.initializer.push(tensorProto(t, INT64, [values.length], values.map(Number)));
    return t;
  };
  const take = (node, name) => {
    const i = node.attribute.findIndex((a) => a.name === name);
    if (i < 0) return null;
    const a = node.attribute[i];
    node.attribute.splice(i, 1);
    return a.ints.map(Number);
  };
  for (const node of g.node) {
    if (node.domain) continue;
    const op = node.opType;
    if (UNHANDLED[op] && from < UNHANDLED[op]) throw new Error(`node '${node.name}' (${op}): its opset-${from} form is not rewritten by this tool`);
    if ((REDUCE18.has(op) && to >= 18 && from < 18) || ((op === 'ReduceSum' || op === 'Squeeze' || op === 'Unsqueeze') && to >= 13 && from < 13)) {
      const axes = take(node, 'axes');
      if (axes) node.input = [node.input[0], axesInput(node, 'axes', axes)];
    } else if (op === 'Split' && to >= 13) {
      const split = from < 13 ? take(node, 'split') : null;
      if (split) node.input = [node.input[0], axesInput(node, 'split', split)];
      if (to >= 18 && node.input.length > 1) { /* num_outputs when the parts allow it */
        const init = g.initializer.find((t) => t.name === node.input[1]);
        const raw = init?.rawData?.length ? new Uint8Array(init.rawData) : null;
        const parts = raw ? Array.from(new BigInt64Array(raw.slice().buffer)).map(Number) : init?.int64Data?.map(Number);
        if (parts?.length) {
          const n = parts.length, total = parts.reduce((x, y) => x + y, 0), c = Math.ceil(total / n);
          const want = parts.map((_, i) => (i < n - 1 ? c : total - c * (n - 1)));
          if (want[n - 1] > 0 && want.every((w, i) => w === parts[i])) {
            node.input = [node.input[0]];
            node.attribute.push({ name: 'num_outputs', type: 2, i: n });
          }
        }
      }
    }
  }
  imp.version = to;
  m.irVersion = irVersionFor(to);
  writeAtomic(opts.out, ModelProto.encode(m).finish());
  return 0;
}

runMain('redeclare_opset.mjs', USAGE, main);
