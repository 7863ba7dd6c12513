#!/usr/bin/env python3
# device_check.py LOWERED_DIR DATA_DIR [RUNS]: run LOWERED_DIR/runner (built) on DATA_DIR's raw inputs
# (scripts/device_pack.sh, meta.tsv from tools/bench/pb2raw.mjs) with 3 warm-up and RUNS (default 20)
# timed runs, compare every output with ONNX Runtime's, element by element as ecg-bench does by default
# (|a - e| <= 1e-4 + 1e-3 |e|; NaN only where NaN), and print one JSON line: dir, rc, device (the
# OpenCL device the runner names), median_ms and min_ms (the runner's time_ms lines), elements,
# mismatches, max_abs_err. Python's standard library only: the GPU machine has no node and no ecg-bench.
# A runner failure gives rc and its stderr's tail; exit status 0 either way (the caller reads the line).
import sys, subprocess, array, json, os, statistics, math
d, data = sys.argv[1], sys.argv[2]; runs = sys.argv[3] if len(sys.argv) > 3 else '20'
meta = [l.rstrip('\n').split('\t') for l in open(os.path.join(data, 'meta.tsv')) if l.strip()]
codes = {1: 'f', 7: 'q', 6: 'i', 9: 'B', 11: 'd'}
cmd = [os.path.join(d, 'runner'), '--warmup', '3', '--runs', runs]
outs = []
for kind, name, dt, dims, f in meta:
    if kind == 'input': cmd += ['--in', f'{name}={os.path.join(data, f)}']
    else:
        o = f'/tmp/out_{os.path.basename(d)}_{f}'; outs.append((name, int(dt), o, os.path.join(data, f))); cmd += ['--out', f'{name}={o}']
r = subprocess.run(cmd, capture_output=True, text=True)
res = {'dir': os.path.basename(d), 'rc': r.returncode}
if r.returncode:
    res['stderr'] = r.stderr[-2000:]; print(json.dumps(res)); sys.exit(0)
t = [float(l.split()[1]) for l in r.stdout.splitlines() if l.startswith('time_ms')]
dev = [l[7:] for l in r.stdout.splitlines() if l.startswith('device ')]
res.update(device=dev[0] if dev else None, median_ms=statistics.median(t), min_ms=min(t), runs=len(t))
tot = bad = 0; maxabs = 0.0
for name, dt, o, e in outs:
    c = codes.get(dt)
    if c is None: res.setdefault('uncompared', []).append(name); continue
    a = array.array(c); a.frombytes(open(o, 'rb').read()); b = array.array(c); b.frombytes(open(e, 'rb').read())
    if len(a) != len(b): res.setdefault('size_mismatch', []).append(name); bad += 1; continue
    for x, y in zip(a, b):
        tot += 1; err = abs(x - y)
        if not (err <= 1e-4 + 1e-3 * abs(y)) or math.isnan(x) != math.isnan(y): bad += 1
        if err > maxabs: maxabs = err
res.update(elements=tot, mismatches=bad, max_abs_err=maxabs)
print(json.dumps(res), flush=True)
