/* mkonnx: write small ONNX models for the bats suites, with the protobuf-c ONNX
 * bindings (build/gen/onnx.pb-c.h).
 *
 *   mkonnx KIND OUT.onnx
 *
 * KIND: relu         y = Relu(x), x float32 [1,4]                     (valid)
 *       symbolic     y = Relu(x), x float32 [N,4] (N a dim_param)     (valid, symbolic)
 *       unknown1     a = FrobnicateOp(x); y = Relu(a)                 (one unsupported op)
 *       unknown2     a = FrobnicateOp(x); b = Relu(a); y = WibbleOp(b) (two unsupported ops)
 * Exit 0 on success, 2 usage, 1 write error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

static Onnx__ValueInfoProto *value(const char *name, const char *sym0) {
  Onnx__TensorShapeProto__Dimension **d = calloc(2, sizeof *d);
  for (int i = 0; i < 2; i++) {
    d[i] = malloc(sizeof **d);
    onnx__tensor_shape_proto__dimension__init(d[i]);
    if (i == 0 && sym0) {
      d[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      d[i]->dim_param = (char *)sym0;
    } else {
      d[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      d[i]->dim_value = i == 0 ? 1 : 4;
    }
  }
  Onnx__TensorShapeProto *s = malloc(sizeof *s);
  onnx__tensor_shape_proto__init(s);
  s->n_dim = 2; s->dim = d;
  Onnx__TypeProto__Tensor *tt = malloc(sizeof *tt);
  onnx__type_proto__tensor__init(tt);
  tt->has_elem_type = 1; tt->elem_type = 1; tt->shape = s;
  Onnx__TypeProto *t = malloc(sizeof *t);
  onnx__type_proto__init(t);
  t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE; t->tensor_type = tt;
  Onnx__ValueInfoProto *v = malloc(sizeof *v);
  onnx__value_info_proto__init(v);
  v->name = (char *)name; v->type = t;
  return v;
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
  if (argc != 3) { fprintf(stderr, "usage: mkonnx KIND OUT.onnx\n"); return 2; }
  const char *kind = argv[1];
  Onnx__NodeProto *nodes[3];
  size_t nn = 0;
  const char *sym = NULL;
  if (!strcmp(kind, "relu")) {
    nodes[nn++] = node("relu", "Relu", "x", "y");
  } else if (!strcmp(kind, "symbolic")) {
    sym = "N";
    nodes[nn++] = node("relu", "Relu", "x", "y");
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
  Onnx__ValueInfoProto *in = value("x", sym), *out = value("y", sym);
  gr.n_input = 1; gr.input = &in;
  gr.n_output = 1; gr.output = &out;
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
