// Check RDP's expressions (format/rdp.c) against static shape inference: for every tensor
// present in both `ecg-dump --json` outputs (the model converted without --input-shape, and
// with the symbols bound), evaluate each symbolic dim's expression at the bound values
// ("/" is floor division) and compare with the static dim. Prints one JSON line
// {checked, mismatched, nac, first_mismatch}; exits 1 on a mismatch.
//   node scripts/rdp_check.mjs SYM.json STATIC.json SYMBOL=VALUE...
import { readFileSync } from 'node:fs';

const [symPath, staticPath, ...binds] = process.argv.slice(2);
if (!symPath || !staticPath) { console.error('usage: rdp_check.mjs SYM.json STATIC.json SYMBOL=VALUE...'); process.exit(2); }
const env = new Map(binds.map((b) => { const i = b.lastIndexOf('='); return [b.slice(0, i), BigInt(b.slice(i + 1))]; }));
const sym = JSON.parse(readFileSync(symPath, 'utf8')), fix = JSON.parse(readFileSync(staticPath, 'utf8'));
const byName = new Map(fix.tensors.map((t) => [t.name, t]));

// expression grammar: sum of products of integers, symbols and (E/K); tokens: numbers,
// symbol names (longest bound name first), + - * / ( )
const names = [...env.keys()].sort((a, b) => b.length - a.length);
function evaluate(s) {
  let i = 0;
  const peek = () => s[i];
  function atom() {
    if (peek() === '(') {
      i++;
      const a = sum();
      if (peek() === '/') { i++; const k = atom(); if (peek() !== ')') throw new Error(`')' expected in ${s}`); i++; return floorDiv(a, k); }
      if (peek() !== ')') throw new Error(`')' expected in ${s}`);
      i++;
      return a;
    }
    const m = /^[0-9]+/.exec(s.slice(i));
    if (m) { i += m[0].length; return BigInt(m[0]); }
    for (const n of names) if (s.startsWith(n, i)) { i += n.length; return env.get(n); }
    throw new Error(`unbound symbol at '${s.slice(i)}'`);
  }
  function prod() { let v = atom(); while (peek() === '*') { i++; v *= atom(); } return v; }
  function sum() {
    let sign = 1n;
    if (peek() === '-') { i++; sign = -1n; }
    let v = sign * prod();
    while (peek() === '+' || peek() === '-') { const op = s[i++]; v = op === '+' ? v + prod() : v - prod(); }
    return v;
  }
  const v = sum();
  if (i !== s.length) throw new Error(`trailing '${s.slice(i)}'`);
  return v;
}
function floorDiv(a, k) { const q = a / k; return (a % k !== 0n && (a < 0n) !== (k < 0n)) ? q - 1n : q; }

let checked = 0, mismatched = 0, nac = 0, first = null;
for (const t of sym.tensors) {
  const f = byName.get(t.name);
  if (!t.rdp || !f || !f.shape || f.shape.length !== t.shape.length) continue;
  t.shape.forEach((d, k) => {
    if (typeof d === 'number') return;
    if (t.rdp[k] === 'nac' || t.rdp[k] === 'undef') { nac++; return; }
    if (typeof f.shape[k] !== 'number') return;
    checked++;
    let v;
    try { v = evaluate(d); } catch (e) { v = e.message; }
    if (v !== BigInt(f.shape[k])) { mismatched++; first ??= { tensor: t.name, dim: k, expr: d, value: String(v), static: f.shape[k] }; }
  });
}
console.log(JSON.stringify({ checked, mismatched, nac, first_mismatch: first }));
process.exit(mismatched ? 1 : 0);
