#!/usr/bin/env node
// Debugging aid: write a copy of an ONNX model whose graph outputs are every node output
// (or those matching --match REGEX), so a divergence can be traced layer by layer:
//   node expose_outputs.mjs --model M.onnx --out M.all.onnx [--match REGEX]
// then make_data.mjs on the copy and `ecg-bench -v` print the error of every tensor.
import fs from 'fs';
import protobuf from 'protobufjs';
import { parseArgs, runMain, UsageError } from './common.mjs';

const USAGE = 'usage: node expose_outputs.mjs --model M.onnx --out OUT.onnx [--match REGEX]';
runMain('expose_outputs.mjs', USAGE, async (argv) => {
  const a = parseArgs(argv, { model: 'str', out: 'str', match: 'str' }).opts;
  if (!a.model || !a.out) throw new UsageError('--model and --out are required');
  const root = protobuf.loadSync('/usr/include/onnx/onnx.proto');
  const MP = root.lookupType('onnx.ModelProto');
  const m = MP.decode(fs.readFileSync(a.model));
  const re = a.match ? new RegExp(a.match) : null;
  const have = new Set(m.graph.output.map((o) => o.name));
  let added = 0;
  for (const n of m.graph.node) {
    if (n.opType === 'Constant') continue;
    for (const o of n.output) {
      if (!o || have.has(o) || (re && !re.test(o))) continue;
      m.graph.output.push({ name: o });
      have.add(o);
      added++;
    }
  }
  fs.writeFileSync(a.out, MP.encode(m).finish());
  console.error(`expose_outputs.mjs: ${added} outputs added, ${m.graph.output.length} in all`);
});
