#!/usr/bin/env python3
"""mkseeds.py OUTDIR: write the hand-made edge-case seeds of the libFuzzer corpora
(tests/fuzz/seeds/NAME/) with a minimal protobuf encoder (no onnx module needed).
Edge cases: huge and negative dims, data shorter/longer than the dims say, rank 9,
deep If/Loop nesting, a Reshape whose folded constant would be huge, empty names,
and truncated/oversized ECG headers; for the text parsers, odd rule and profile lines.
Run once by hand; the outputs are committed (each well under 4 KB)."""
import os, struct, sys

def varint(n):
    n &= (1 << 64) - 1
    out = b''
    while True:
        b = n & 0x7f; n >>= 7
        if n: out += bytes([b | 0x80])
        else: return out + bytes([b])

def f_varint(num, v): return varint(num << 3) + varint(v)
def f_bytes(num, b):
    if isinstance(b, str): b = b.encode()
    return varint((num << 3) | 2) + varint(len(b)) + b
def f_float(num, x): return varint((num << 3) | 5) + struct.pack('<f', x)

def tensor(name, dtype, dims, raw=None, floats=None, ints=None):
    m = b''.join(f_varint(1, d) for d in dims) + f_varint(2, dtype) + f_bytes(8, name)
    if raw is not None: m += f_bytes(9, raw)
    for x in floats or []: m += f_float(4, x)
    for x in ints or []: m += f_varint(7, x)
    return m

def vinfo(name, dtype, dims):
    dd = b''
    for d in dims or []:
        dd += f_bytes(1, f_bytes(2, d) if isinstance(d, str) else f_varint(1, d))
    tt = f_varint(1, dtype) + (f_bytes(2, dd) if dims is not None else b'')
    return f_bytes(1, name) + f_bytes(2, f_bytes(1, tt))

def attr_i(name, v): return f_bytes(1, name) + f_varint(3, v) + f_varint(20, 2)
def attr_ints(name, vs): return f_bytes(1, name) + b''.join(f_varint(8, v) for v in vs) + f_varint(20, 7)
def attr_t(name, t): return f_bytes(1, name) + f_bytes(5, t) + f_varint(20, 4)
def attr_g(name, g): return f_bytes(1, name) + f_bytes(6, g) + f_varint(20, 5)

def node(op, ins, outs, name='n', attrs=()):
    m = b''.join(f_bytes(1, i) for i in ins) + b''.join(f_bytes(2, o) for o in outs)
    m += f_bytes(3, name) + f_bytes(4, op)
    for a in attrs: m += f_bytes(5, a)
    return m

def graph(nodes, inits, ins, outs, name='g'):
    m = b''.join(f_bytes(1, n) for n in nodes) + f_bytes(2, name)
    m += b''.join(f_bytes(5, t) for t in inits)
    m += b''.join(f_bytes(11, v) for v in ins) + b''.join(f_bytes(12, v) for v in outs)
    return m

def model(g, opset=13):
    return f_varint(1, 8) + f_bytes(8, f_bytes(1, '') + f_varint(2, opset)) + f_bytes(7, g)

F, I64 = 1, 7
def relu_model(xdims, ydims=None, opset=13):
    return model(graph([node('Relu', ['x'], ['y'])], [], [vinfo('x', F, xdims)], [vinfo('y', F, ydims)]), opset)

def seeds_onnx():
    s = {}
    s['relu'] = relu_model([1, 4], [1, 4])
    s['huge-dims'] = relu_model([1 << 40, 1 << 40], None)
    s['int64max-dim'] = relu_model([(1 << 63) - 1], None)
    s['negative-dim'] = relu_model([-5, 4], None)
    s['rank9'] = relu_model([1] * 9, None)
    s['symbolic'] = relu_model(['N', 4], None)
    # initializer whose data is shorter / longer than its dims
    for nm, raw in (('short', b'\0' * 8), ('long', b'\0' * 64)):
        s['init-' + nm] = model(graph([node('Add', ['x', 'w'], ['y'])], [tensor('w', F, [4, 4], raw=raw)],
                                      [vinfo('x', F, [4, 4])], [vinfo('y', F, None)]))
    s['init-huge-dims'] = model(graph([node('Add', ['x', 'w'], ['y'])], [tensor('w', F, [1 << 31, 1 << 31, 1 << 31], raw=b'\0' * 4)],
                                      [vinfo('x', F, [1])], [vinfo('y', F, None)]))
    # Reshape/Expand/ConstantOfShape/Range folding into a huge constant
    s['cos-huge'] = model(graph([node('ConstantOfShape', ['s'], ['y'])], [tensor('s', I64, [3], ints=[1 << 20, 1 << 20, 1 << 10])],
                                [], [vinfo('y', F, None)]))
    s['cos-unfolded'] = model(graph([node('ConstantOfShape', ['s'], ['y'])], [tensor('s', I64, [1], ints=[1 << 27])],
                                    [], [vinfo('y', F, None)]))  # 512 MiB: over ECG_FOLD_MAX_BYTES, stays a node
    s['expand-huge'] = model(graph([node('Expand', ['c', 's'], ['y'])], [tensor('c', F, [1], floats=[1.0]), tensor('s', I64, [2], ints=[1 << 30, 1 << 30])],
                                   [], [vinfo('y', F, None)]))
    s['range-huge'] = model(graph([node('Range', ['a', 'b', 'd'], ['y'])],
                                  [tensor('a', F, [], floats=[0.0]), tensor('b', F, [], floats=[1e30]), tensor('d', F, [], floats=[1e-30])],
                                  [], [vinfo('y', F, None)]), 11)
    s['reshape-neg'] = model(graph([node('Reshape', ['x', 's'], ['y'])], [tensor('s', I64, [3], ints=[-1, -1, 0])],
                                   [vinfo('x', F, [2, 3, 4])], [vinfo('y', F, None)]))
    s['tile-huge'] = model(graph([node('Tile', ['c', 'r'], ['y'])], [tensor('c', F, [2], floats=[1.0, 2.0]), tensor('r', I64, [1], ints=[1 << 40])],
                                 [], [vinfo('y', F, None)]))
    # deep If nesting (subgraph recursion)
    inner = graph([node('Relu', ['x'], ['z'])], [], [], [vinfo('z', F, None)], 'inner')
    for d in range(70):  # 71 levels: one more than ECG_MAX_SUBGRAPH_DEPTH allows
        inner = graph([node('If', ['c'], ['z'], 'if%d' % d, [attr_g('then_branch', inner)])], [], [], [vinfo('z', F, None)], 'g%d' % d)
    s['if-deep'] = model(graph([node('If', ['c'], ['y'], 'top', [attr_g('then_branch', inner), attr_g('else_branch', inner)])], [],
                               [vinfo('c', 9, []), vinfo('x', F, [1])], [vinfo('y', F, None)]))
    s['attr-many-ints'] = model(graph([node('Transpose', ['x'], ['y'], 't', [attr_ints('perm', list(range(300)))])], [],
                                      [vinfo('x', F, [1, 2])], [vinfo('y', F, None)]))
    s['const-node'] = model(graph([node('Constant', [], ['y'], 'c', [attr_t('value', tensor('v', F, [2, 2], floats=[1, 2, 3]))])], [], [],
                                  [vinfo('y', F, None)]))
    s['conv-zero-kernel'] = model(graph([node('Conv', ['x', 'w'], ['y'], 'conv', [attr_ints('kernel_shape', [0, 0]), attr_ints('strides', [0, 0])])],
                                        [tensor('w', F, [1, 1, 0, 0], raw=b'')], [vinfo('x', F, [1, 1, 4, 4])], [vinfo('y', F, None)]))
    s['empty'] = b''
    s['cycle'] = model(graph([node('Relu', ['b'], ['a'], 'n1'), node('Relu', ['a'], ['b'], 'n2')], [], [vinfo('x', F, [1])], [vinfo('a', F, None)]))
    return s

def seeds_ecg():
    hdr = lambda ver, flags, stored, raw: b'ECGF' + struct.pack('<HHQQ', ver, flags, stored, raw)
    return {'hdr-only': hdr(1, 0, 0, 0), 'hdr-huge': hdr(1, 0, 1 << 34, 1 << 34) + b'\0' * 16,
            'hdr-more-than-file': hdr(1, 0, 1 << 30, 1 << 30) + b'\x0a\x00',
            'hdr-zstd-bomb': hdr(1, 1, 16, 1 << 34) + b'\x28\xb5\x2f\xfd' + b'\0' * 12,
            'hdr-v99': hdr(99, 0, 0, 0), 'magic-only': b'ECGF'}

def seeds_tensorpb():
    return {'float': tensor('x', F, [2, 2], floats=[1, 2, 3, 4]),
            'raw-short': tensor('x', F, [1000], raw=b'\0' * 4),
            'huge-dims': tensor('x', F, [1 << 62, 4], raw=b'\0' * 16),
            'neg-dim': tensor('x', F, [-1], raw=b''),
            'int64': tensor('x', I64, [3], ints=[1, -1, 1 << 62]),
            'rank9': tensor('x', F, [1] * 9, floats=[1]),
            'string': tensor('x', 8, [1], raw=b'ab')}

def seeds_text():
    rules = {'simple': 'assoc a: Add(Add(x, a), b) -> Add(x, Add(a, b)) if const(a), const(b)\n',
             'cond': 'dist d: Mul(Div(a, b), b) -> a if nonneg(b)\n# comment\n',
             'bad': 'comm c: Add(x, -> y\n', 'deep': 'comm deep: ' + 'Neg(' * 60 + 'x' + ')' * 60 + ' -> x\n', 'empty': ''}
    prof = {'one': '{"cpu": "x", "isa": "avx2", "threads": 1, "signature": "Conv+Relu", "fused_ms": 1.0, "unfused_ms": 2.0}\n',
            'missing': '{"cpu": "x"}\n', 'unterminated': '{"cpu": "x, "isa": "avx2", "threads": 1e400, "signature": "',
            'long-sig': '{"cpu": "x", "isa": "avx2", "threads": 1, "signature": "' + 'A' * 5000 + '", "fused_ms": 1, "unfused_ms": 2}\n',
            'nan': '{"cpu": "x", "isa": "avx2", "threads": nan, "signature": "s", "fused_ms": -inf, "unfused_ms": 1e999}\n'}
    return rules, prof

def write(d, name, data):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f: f.write(data if isinstance(data, bytes) else data.encode())

out = sys.argv[1]
for k, v in seeds_onnx().items(): write(out + '/onnx', k + '.onnx', v)
for k, v in seeds_ecg().items(): write(out + '/ecg', k + '.ecg', v); write(out + '/lower', k + '.ecg', v)
for k, v in seeds_tensorpb().items(): write(out + '/tensorpb', k + '.pb', v)
r, p = seeds_text()
for k, v in r.items(): write(out + '/rules', k + '.rules', v)
for k, v in p.items(): write(out + '/profiledb', k + '.jsonl', v)
