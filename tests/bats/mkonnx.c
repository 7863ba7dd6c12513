/* mkonnx: write small ONNX models for the bats suites, with the protobuf-c ONNX
 * bindings (build/gen/onnx.pb-c.h).
 *
 *   mkonnx KIND OUT.onnx [ARGS]
 *
 * KIND: relu         y = Relu(x), x float32 [1,4]                     (valid)
 *       symbolic     y = Relu(x), x float32 [N,4] (N a dim_param)     (valid, symbolic)
 *       symbolic_hardmax  a = Relu(x); y = Hardmax(a), x float32 [N,4]   (valid, symbolic; Hardmax
 *                    not yet lowered with symbolic dims: the dynamic build's refusal)
 *       symbolic_add y = Add(x, x2), x and x2 float32 [N,4], one symbol N (valid, symbolic:
 *                    the two inputs' first dims must agree at run time)
 *       unknown1     a = FrobnicateOp(x); y = Relu(a)                 (one unsupported op)
 *       unknown2     a = FrobnicateOp(x); b = Relu(a); y = WibbleOp(b) (two unsupported ops)
 *       window       ARGS = OP AUTO_PAD STRIDE DILATION XDIMS KDIMS [CHANNELS_OUT]:
 *                    y = OP(x[, w]) for OP Conv, ConvTranspose, ConvInteger, MaxPool or
 *                    AveragePool; x [XDIMS] (e.g. 1x2x7x8; uint8 for ConvInteger, else
 *                    float32), kernel KDIMS (e.g. 3x2: W's spatial dims, or kernel_shape
 *                    for pooling), strides and dilations STRIDE/DILATION on every spatial
 *                    dim (dilations omitted when 1), auto_pad AUTO_PAD (or, written
 *                    PADS=b1,b2,..,e1,e2,.., explicit pads instead); W a deterministic
 *                    initializer with CHANNELS_OUT (default 3) output channels; y's shape
 *                    is left for the tools to infer (opset 13).
 * Exit 0 on success, 2 usage, 1 write error. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

/* A tensor value: elem_type, rank dims (dims NULL: shape left out), dim 0 symbolic
 * when sym0 is set. */
static Onnx__ValueInfoProto *value(const char *name, int elem_type, int rank, const int64_t *dims, const char *sym0) {
  Onnx__TypeProto__Tensor *tt = malloc(sizeof *tt);
  onnx__type_proto__tensor__init(tt);
  tt->has_elem_type = 1; tt->elem_type = elem_type;
  if (dims) {
    Onnx__TensorShapeProto__Dimension **d = calloc((size_t)rank, sizeof *d);
    for (int i = 0; i < rank; i++) {
      d[i] = malloc(sizeof **d);
      onnx__tensor_shape_proto__dimension__init(d[i]);
      if (i == 0 && sym0) {
        d[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d[i]->dim_param = (char *)sym0;
      } else {
        d[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d[i]->dim_value = dims[i];
      }
    }
    Onnx__TensorShapeProto *s = malloc(sizeof *s);
    onnx__tensor_shape_proto__init(s);
    s->n_dim = (size_t)rank; s->dim = d;
    tt->shape = s;
  }
  Onnx__TypeProto *t = malloc(sizeof *t);
  onnx__type_proto__init(t);
  t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE; t->tensor_type = tt;
  Onnx__ValueInfoProto *v = malloc(sizeof *v);
  onnx__value_info_proto__init(v);
  v->name = (char *)name; v->type = t;
  return v;
}

/* "1x2x7x8" -> dims; returns the count (0 on a bad list). */
static int parse_dims(const char *s, int64_t *dims, int max) {
  int n = 0;
  for (char *end; *s && n < max; s = *end ? end + 1 : end) {
    dims[n++] = strtoll(s, &end, 10);
    if (end == s || dims[n - 1] < 1 || (*end && *end != 'x')) return 0;
  }
  return *s ? 0 : n;
}

static Onnx__AttributeProto *attr_ints(const char *name, int n, int64_t v) {
  Onnx__AttributeProto *a = malloc(sizeof *a);
  onnx__attribute_proto__init(a);
  a->name = (char *)name; a->has_type = 1; a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  a->n_ints = (size_t)n; a->ints = malloc(sizeof(int64_t) * (size_t)n);
  for (int i = 0; i < n; i++) a->ints[i] = v;
  return a;
}

/* The window KIND (see the header): fills the node, the weight initializer (or none) and
 * x's dtype; returns 0, or 2 on bad arguments. */
static int window(int argc, char **argv, Onnx__NodeProto *n, Onnx__TensorProto **w, int *x_type, int *rank,
                  int64_t *xdims) {
  if (argc < 9) return 2;
  const char *op = argv[3];
  int64_t kd[8], stride = atoll(argv[5]), dil = atoll(argv[6]), m = argc > 9 ? atoll(argv[9]) : 3;
  *rank = parse_dims(argv[7], xdims, 8);
  int nk = parse_dims(argv[8], kd, 8);
  if (*rank < 3 || nk != *rank - 2 || stride < 1 || dil < 1 || m < 1) return 2;
  bool pool = !strcmp(op, "MaxPool") || !strcmp(op, "AveragePool"), integer = !strcmp(op, "ConvInteger");
  *x_type = integer ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 : ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  n->name = "window"; n->op_type = (char *)op; n->domain = "";
  n->n_input = pool ? 1 : 2; n->input = malloc(2 * sizeof(char *));
  n->input[0] = "x"; n->input[1] = "w";
  n->n_output = 1; n->output = malloc(sizeof(char *)); n->output[0] = "y";
  n->attribute = malloc(4 * sizeof *n->attribute);
  n->attribute[n->n_attribute++] = attr_ints("strides", nk, stride);
  if (dil != 1) n->attribute[n->n_attribute++] = attr_ints("dilations", nk, dil);
  if (pool) {
    Onnx__AttributeProto *ks = attr_ints("kernel_shape", nk, 0);
    for (int i = 0; i < nk; i++) ks->ints[i] = kd[i];
    n->attribute[n->n_attribute++] = ks;
  }
  if (!strncmp(argv[4], "PADS=", 5)) {
    Onnx__AttributeProto *pa = attr_ints("pads", 2 * nk, 0);
    char *p = argv[4] + 5;
    for (int i = 0; i < 2 * nk; i++, p += *p == ',') pa->ints[i] = strtoll(p, &p, 10);
    n->attribute[n->n_attribute++] = pa;
  } else {
    Onnx__AttributeProto *ap = malloc(sizeof *ap);
    onnx__attribute_proto__init(ap);
    ap->name = "auto_pad"; ap->has_type = 1; ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    ap->has_s = 1; ap->s.data = (uint8_t *)argv[4]; ap->s.len = strlen(argv[4]);
    n->attribute[n->n_attribute++] = ap;
  }
  if (pool) { *w = NULL; return 0; }
  /* W: Conv [M, C, K...]; ConvTranspose [C, M, K...] */
  Onnx__TensorProto *t = malloc(sizeof *t);
  onnx__tensor_proto__init(t);
  t->name = "w"; t->has_data_type = 1; t->data_type = *x_type;
  t->n_dims = (size_t)*rank; t->dims = malloc(sizeof(int64_t) * (size_t)*rank);
  bool tr = !strcmp(op, "ConvTranspose");
  t->dims[0] = tr ? xdims[1] : m;
  t->dims[1] = tr ? m : xdims[1];
  int64_t numel = t->dims[0] * t->dims[1];
  for (int i = 0; i < nk; i++) { t->dims[2 + i] = kd[i]; numel *= kd[i]; }
  size_t es = integer ? 1 : 4;
  t->has_raw_data = 1; t->raw_data.len = (size_t)numel * es; t->raw_data.data = malloc(t->raw_data.len);
  for (int64_t i = 0; i < numel; i++) {
    if (integer) t->raw_data.data[i] = (uint8_t)(i * 7 % 5);
    else { float f = (float)((i * 37 % 17) - 8) / 8.0f; memcpy(t->raw_data.data + i * 4, &f, 4); }
  }
  *w = t;
  return 0;
}

static Onnx__NodeProto *node(const char *name, const char *op, const char *in, const char *out) {
  Onnx__NodeProto *n = malloc(sizeof *n);
  onnx__node_proto__init(n);
  n->name = (char *)name; n->op_type = (char *)op; n->domain = "";
  n->n_input = 1; n->input = malloc(sizeof(char *)); n->input[0] = (char *)in;
  n->n_output = 1; n->output = malloc(sizeof(char *)); n->output[0] = (char *)out;
  return n;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: mkonnx KIND OUT.onnx [ARGS]\n"); return 2; }
  const char *kind = argv[1];
  Onnx__NodeProto *nodes[3];
  size_t nn = 0;
  const char *sym = NULL;
  int x_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, rank = 2;
  int64_t xdims[8] = {1, 4};
  Onnx__TensorProto *init = NULL;
  Onnx__NodeProto wnode;
  if (!strcmp(kind, "window")) {
    onnx__node_proto__init(&wnode);
    if (window(argc, argv, &wnode, &init, &x_type, &rank, xdims)) {
      fprintf(stderr, "usage: mkonnx window OUT.onnx OP AUTO_PAD STRIDE DILATION XDIMS KDIMS [CHANNELS_OUT]\n");
      return 2;
    }
    nodes[nn++] = &wnode;
  } else if (!strcmp(kind, "relu")) {
    nodes[nn++] = node("relu", "Relu", "x", "y");
  } else if (!strcmp(kind, "symbolic")) {
    sym = "N";
    nodes[nn++] = node("relu", "Relu", "x", "y");
  } else if (!strcmp(kind, "symbolic_hardmax")) {
    sym = "N";
    nodes[nn++] = node("relu", "Relu", "x", "a");
    nodes[nn++] = node("hmax", "Hardmax", "a", "y");
  } else if (!strcmp(kind, "symbolic_add")) {
    sym = "N";
    static const char *add_in[2] = {"x", "x2"};
    static char *add_out[1] = {"y"};
    static Onnx__NodeProto add;
    onnx__node_proto__init(&add);
    add.name = "add"; add.op_type = "Add";
    add.n_input = 2; add.input = (char **)add_in;
    add.n_output = 1; add.output = add_out;
    nodes[nn++] = &add;
  } else if (!strcmp(kind, "unknown1")) {
    nodes[nn++] = node("frob", "FrobnicateOp", "x", "a");
    nodes[nn++] = node("relu", "Relu", "a", "y");
  } else if (!strcmp(kind, "unknown2")) {
    nodes[nn++] = node("frob", "FrobnicateOp", "x", "a");
    nodes[nn++] = node("relu", "Relu", "a", "b");
    nodes[nn++] = node("wibble", "WibbleOp", "b", "y");
  } else {
    fprintf(stderr, "mkonnx: unknown kind '%s'\n", kind);
    return 2;
  }
  Onnx__GraphProto gr;
  onnx__graph_proto__init(&gr);
  gr.name = (char *)kind;
  gr.n_node = nn; gr.node = nodes;
  Onnx__ValueInfoProto *in = value("x", x_type, rank, xdims, sym);
  /* window: y's shape is inferred; ConvInteger gives int32 */
  int y_type = x_type == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 ? ONNX__TENSOR_PROTO__DATA_TYPE__INT32 : x_type;
  Onnx__ValueInfoProto *out = nodes[0] == &wnode ? value("y", y_type, 0, NULL, NULL) : value("y", x_type, rank, xdims, sym);
  Onnx__ValueInfoProto *ins[2] = {in, value("x2", x_type, rank, xdims, sym)};
  gr.n_input = strcmp(kind, "symbolic_add") ? 1 : 2; gr.input = ins;
  gr.n_output = 1; gr.output = &out;
  if (init) { gr.n_initializer = 1; gr.initializer = &init; }
  Onnx__OperatorSetIdProto ops;
  onnx__operator_set_id_proto__init(&ops);
  ops.domain = ""; ops.has_version = 1; ops.version = 13;
  Onnx__OperatorSetIdProto *opsp = &ops;
  Onnx__ModelProto m;
  onnx__model_proto__init(&m);
  m.has_ir_version = 1; m.ir_version = 8;
  m.producer_name = "mkonnx";
  m.n_opset_import = 1; m.opset_import = &opsp;
  m.graph = &gr;
  size_t len = onnx__model_proto__get_packed_size(&m);
  uint8_t *buf = malloc(len);
  onnx__model_proto__pack(&m, buf);
  FILE *f = fopen(argv[2], "wb");
  if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) { perror(argv[2]); return 1; }
  return 0; /* a one-shot generator: the OS frees the small allocations */
}
