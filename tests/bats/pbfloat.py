"""pbfloat.py FILE: print the dims and float32 values of an ONNX TensorProto file as JSON
({"dims": [...], "values": [...]}); reads raw_data (field 9) or float_data (field 4).  A
test helper (no onnx package needed): tests/bats/eop.bats compares swept outputs."""
import json, struct, sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i


b = open(sys.argv[1], "rb").read()
i, dims, vals = 0, [], []
while i < len(b):
    tag, i = varint(b, i)
    f, w = tag >> 3, tag & 7
    if w == 0:
        v, i = varint(b, i)
        if f == 1: dims.append(v)
    elif w == 2:
        n, i = varint(b, i)
        chunk = b[i:i + n]; i += n
        if f == 9: vals = list(struct.unpack("<%df" % (n // 4), chunk))
        elif f == 4: vals = list(struct.unpack("<%df" % (n // 4), chunk))
        elif f == 1:
            j = 0
            while j < len(chunk):
                v, j = varint(chunk, j); dims.append(v)
    elif w == 5: i += 4
    elif w == 1: i += 8
    else: raise SystemExit("pbfloat.py: unsupported wire type %d" % w)
print(json.dumps({"dims": dims, "values": vals}))
