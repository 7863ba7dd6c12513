#!/usr/bin/env node
// pb2raw.mjs DIR: turn ONNX backend test data (DIR/input_K.pb, DIR/output_K.pb TensorProtos with
// raw_data, as make_data.mjs writes them) into raw little-endian files DIR/input_K.raw and
// DIR/output_K.raw, the runner protocol's format (tools/lower/LOWERED.md "Runner protocol"), and
// DIR/meta.tsv, one line per tensor: input|output <TAB> NAME <TAB> DTYPE-CODE <TAB> DIMS <TAB> FILE.
// For machines without node or protobuf (scripts/device_pack.sh: a GPU machine checks with Python's
// standard library only). Exit: 0 ok, 1 unreadable file, 2 usage.
import fs from 'fs';
import path from 'path';
import { loadTensorProto } from './common.mjs';

const dir = process.argv[2];
if (!dir || process.argv.length !== 3) { process.stderr.write('usage: pb2raw.mjs DIR\n'); process.exit(2); }
try {
  const TensorProto = loadTensorProto();
  const lines = [];
  for (const f of fs.readdirSync(dir).sort()) {
    const m = f.match(/^(input|output)_(\d+)\.pb$/);
    if (!m) continue;
    const t = TensorProto.decode(fs.readFileSync(path.join(dir, f)));
    if (!t.rawData || !t.rawData.length) throw new Error(`${f}: no raw_data`);
    const raw = `${m[1]}_${m[2]}.raw`;
    fs.writeFileSync(path.join(dir, raw), t.rawData);
    lines.push([m[1], t.name, t.dataType, t.dims.length ? t.dims.map(Number).join('x') : 'scalar', raw].join('\t'));
  }
  if (!lines.length) throw new Error(`${dir}: no input_K.pb/output_K.pb`);
  fs.writeFileSync(path.join(dir, 'meta.tsv'), lines.join('\n') + '\n');
} catch (e) {
  process.stderr.write(`pb2raw.mjs: ${e.message}\n`);
  process.exit(1);
}
