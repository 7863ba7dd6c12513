/* mkecg: write small ECG streams, valid and deliberately broken, for the bats suites.
 *
 *   mkecg KIND OUT.ecg
 *
 * KIND: valid        x -> Relu -> y, float32 1x4
 *       cycle        a = Relu(b), b = Relu(a), y = Relu(a)   (a cycle between two nodes)
 *       dangling     a Relu whose input is tensor id 99 (no such tensor)
 *       noproducer   y = Add(x, w) where w is neither a graph input, a constant, nor produced
 *       unsupported  y = NoSuchOp(x) (domain "", not in the registry)
 *       badconst     y = Add(x, w) with w a constant holding 3 bytes instead of 16
 *       badout       graph output names a tensor no node writes
 *       blocks       y = Sigmoid(Relu(x)), both nodes in fusion block 0 (plan "dnnfusion")
 *       blockcycle   y = Sigmoid(Exp(Relu(x))) with Relu and Sigmoid in block 0 and Exp
 *                    outside: a cycle between a block and a node
 *       badschedule  blocks, with block 0's schedule at threads -2 (out of range)
 * Built against build/libecg.a by the bats setup_file. Exit 0 on success, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecg.h"

static int32_t *ids(int n, ...) {
  int32_t *a = malloc(sizeof *a * (n ? n : 1));
  __builtin_va_list ap;
  __builtin_va_start(ap, n);
  for (int i = 0; i < n; i++) a[i] = __builtin_va_arg(ap, int);
  __builtin_va_end(ap);
  return a;
}

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: mkecg KIND OUT.ecg\n"); return 2; }
  const char *kind = argv[1];
  int64_t dims[2] = {1, 4};
  ecg_graph *g = ecg_graph_new();
  g->name = strdup(kind);
  g->opset = 13;
  int x = ecg_add_tensor(g, "x", ECG_FLOAT, 2, dims);
  int y = ecg_add_tensor(g, "y", ECG_FLOAT, 2, dims);
  g->n_inputs = 1; g->inputs = ids(1, x);
  g->n_outputs = 1; g->outputs = ids(1, y);
  if (!strcmp(kind, "valid")) {
    ecg_add_node(g, "relu", "Relu", "", 13, 1, (int[]){x}, 1, (int[]){y});
  } else if (!strcmp(kind, "cycle")) {
    int a = ecg_add_tensor(g, "a", ECG_FLOAT, 2, dims);
    int b = ecg_add_tensor(g, "b", ECG_FLOAT, 2, dims);
    ecg_add_node(g, "relu_a", "Relu", "", 13, 1, (int[]){b}, 1, (int[]){a});
    ecg_add_node(g, "relu_b", "Relu", "", 13, 1, (int[]){a}, 1, (int[]){b});
    ecg_add_node(g, "relu_y", "Relu", "", 13, 1, (int[]){a}, 1, (int[]){y});
  } else if (!strcmp(kind, "dangling")) {
    ecg_add_node(g, "relu", "Relu", "", 13, 1, (int[]){99}, 1, (int[]){y});
  } else if (!strcmp(kind, "noproducer")) {
    int w = ecg_add_tensor(g, "w", ECG_FLOAT, 2, dims);
    ecg_add_node(g, "add", "Add", "", 13, 2, (int[]){x, w}, 1, (int[]){y});
  } else if (!strcmp(kind, "unsupported")) {
    ecg_add_node(g, "mystery", "NoSuchOp", "", 13, 1, (int[]){x}, 1, (int[]){y});
  } else if (!strcmp(kind, "badconst")) {
    int w = ecg_add_tensor(g, "w", ECG_FLOAT, 2, dims);
    ecg_tensor_set_data(g->tensors[w], "abc", 3);
    ecg_add_node(g, "add", "Add", "", 13, 2, (int[]){x, w}, 1, (int[]){y});
  } else if (!strcmp(kind, "badout")) {
    int z = ecg_add_tensor(g, "z", ECG_FLOAT, 2, dims);
    ecg_add_node(g, "relu", "Relu", "", 13, 1, (int[]){x}, 1, (int[]){z});
  } else if (!strcmp(kind, "blocks") || !strcmp(kind, "blockcycle") || !strcmp(kind, "badschedule")) {
    int a = ecg_add_tensor(g, "a", ECG_FLOAT, 2, dims), e1 = a;
    ecg_add_node(g, "relu", "Relu", "", 13, 1, (int[]){x}, 1, (int[]){a});
    if (!strcmp(kind, "blockcycle")) {
      e1 = ecg_add_tensor(g, "e", ECG_FLOAT, 2, dims);
      ecg_add_node(g, "exp", "Exp", "", 13, 1, (int[]){a}, 1, (int[]){e1});
    }
    int sig = ecg_add_node(g, "sig", "Sigmoid", "", 13, 1, (int[]){e1}, 1, (int[]){y});
    if (ecg_block_add(g, (int[]){0, sig}, 2, 0, NULL) != 0) return 3;
    g->blocks[0]->plan = strdup("dnnfusion");
    if (!strcmp(kind, "badschedule")) {
      if (ecg_block_set_schedule(g, 0, NULL, 0, 0, 0, false) != 0) return 3;
      g->blocks[0]->schedule->threads = -2;
    }
  } else {
    fprintf(stderr, "mkecg: unknown kind '%s'\n", kind);
    return 2;
  }
  ecg_err e = {0};
  int rc = ecg_write_path(argv[2], g, 0, &e);
  if (rc) fprintf(stderr, "mkecg: %s\n", e.msg);
  ecg_graph_free(g);
  return rc;
}
