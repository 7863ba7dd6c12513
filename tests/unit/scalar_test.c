/* Every One-to-One operator of format/ops/scalar.def evaluated both ways and compared:
 * constant folding (ecg_eval_scalar, T = double / int64) and code generation
 * (lw_scalar_stmt, the statement ecg-lower emits, compiled by the system C compiler with
 * T = float / the integer type, as in a lowered model).  Inputs are seeded values plus
 * NaN, +-inf, +-0 and large magnitudes.
 *
 * This program writes a C file (argv[1]) holding, per operator and domain, the inputs,
 * the folded outputs and the generated statement, and a main that compares them; the
 * test harness (tests/run.sh) compiles and runs that file, whose exit status is the
 * number of mismatches.  Tolerance: float results within 2e-6 relative or 1e-6 absolute
 * (float vs double evaluation; 1e-4 for the vectorisable ecg_exp/ecg_erf users), NaN
 * where NaN, same infinities; integer results exact.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecg.h"
#include "lower.h"
#include "scalar.h"

#define N 24
static const double FV[N] = {-3.5, -1, -0.5, -0.0, 0, 0.25, 0.5, 1, 2, 7.25, NAN, INFINITY, -INFINITY,
                             1e-3, 30, -30, 0.7, -0.2, 3, 100, -88.5, 0.999, 1.5, -7};
static const int64_t IV[N] = {-7, -1, 0, 1, 2, 3, 5, 100, -100, 64, 8, 9, 31, 33, 7, -2, 6, 4, 12, 1, 0, -3, 2, 15};

static int operands_of(const ecg_scalar_row *r) {
  if (r->variadic) return 3;
  int m = 0;
  for (const char *p = r->fexpr; *p; p++) if (p[0] == 'x' && p[1] >= '0' && p[1] <= '4' && p[1] - '0' + 1 > m) m = p[1] - '0' + 1;
  for (const char *p = r->iexpr; *p; p++) if (p[0] == 'x' && p[1] >= '0' && p[1] <= '4' && p[1] - '0' + 1 > m) m = p[1] - '0' + 1;
  return m ? m : 1;
}

/* The dtype of operand k in the domain (float or integer) of row r. */
static int dtype_of(const ecg_scalar_row *r, int isf, int k) {
  ecg_op_id id = r->id;
  if (id == ECG_OP_Where && k == 0) return ECG_BOOL;
  if (isf) return ECG_FLOAT;
  if (id == ECG_OP_Not || id == ECG_OP_And || id == ECG_OP_Or || id == ECG_OP_Xor) return ECG_BOOL;
  if (id == ECG_OP_BitShift) return ECG_UINT32;
  return ECG_INT32;
}

static void put_array(FILE *f, const ecg_tensor *t, const char *name) {
  fprintf(f, "static const %s %s[%d] = {", ecg_dtype_ctype(t->dtype), name, N);
  for (int i = 0; i < N; i++) {
    if (ecg_dtype_is_float(t->dtype)) {
      double v = ecg_const_f64(t, i);
      if (v != v) fprintf(f, "NAN, ");
      else if (isinf(v)) fprintf(f, "%sINFINITY, ", v < 0 ? "-" : "");
      else fprintf(f, "%a, ", v); /* hex literal: keeps -0.0 */
    } else fprintf(f, "%lld, ", (long long)ecg_const_i64(t, i));
  }
  fprintf(f, "};\n");
}

int main(int argc, char **argv) {
  if (argc != 2) { fprintf(stderr, "usage: scalar_test OUT.c\n"); return 2; }
  FILE *f = fopen(argv[1], "w");
  if (!f) { perror(argv[1]); return 1; }
  fprintf(f, "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n#include <tgmath.h>\n#include \"ecg_scalar.h\"\n"
             "static int bad, cases;\n"
             "static int close_f(double got, double want, double tol) {\n"
             "  if (want != want) return got != got;\n  if (isinf(want)) return got == want;\n"
             "  return fabs(got - want) <= tol * fabs(want) + 1e-6 || fabs(got - want) <= 1e-6;\n}\n");
  int ncase = 0, nfold_fail = 0;
  for (int id = 0; id < ECG_OP_COUNT; id++) {
    const ecg_scalar_row *r = ecg_scalar_row_of((ecg_op_id)id);
    if (!r) continue;
    /* a row with a string attribute spec "name=VALUE" (Gelu approximate=tanh, BitShift
     * direction=LEFT) runs twice: without the attribute and with name set to VALUE */
    const char *eq = strchr(r->a_attr, '=');
    int nvar = eq ? 2 : 1;
    for (int c = 0; c < 2 * nvar; c++) {
      int isf = c % 2 == 0, var = c / 2;
      const char *x = isf ? r->fexpr : r->iexpr;
      if (!strcmp(x, "NOFLOAT") || !strcmp(x, "NOINT")) continue;
      ecg_graph *g = ecg_graph_new();
      int nop = operands_of(r), in[5], y;
      int64_t d[1] = {N};
      for (int k = 0; k < nop; k++) {
        char nm[8];
        snprintf(nm, sizeof nm, "x%d", k);
        int dt = dtype_of(r, isf, k);
        int64_t d2[2] = {1, N}; /* BatchNormalization: X [1, C], parameters [C] */
        in[k] = r->id == ECG_OP_BatchNormalization && k == 0 ? ecg_add_tensor(g, nm, dt, 2, d2) : ecg_add_tensor(g, nm, dt, 1, d);
        unsigned char buf[N * 8] = {0};
        for (int i = 0; i < N; i++) { /* operand k takes the values rotated by 5k */
          int j = (i + 5 * k) % N;
          if (ecg_dtype_is_float(dt)) ecg_store_f64(buf, dt, i, FV[j]);
          else if (dt == ECG_BOOL) ecg_store_i64(buf, dt, i, IV[j] & 1);
          else ecg_store_i64(buf, dt, i, dt == ECG_UINT32 ? (IV[j] < 0 ? -IV[j] : IV[j]) : IV[j]);
        }
        ecg_tensor_set_data(g->tensors[in[k]], buf, (size_t)N * ecg_dtype_size(dt));
      }
      y = ecg_add_tensor(g, "y", 0, -1, NULL);
      const ecg_op_info *op = ecg_op_get((ecg_op_id)id);
      int ni = ecg_add_node(g, "n", op->name, "", 17, nop, in, 1, &y);
      ecg_node *n = g->nodes[ni];
      if (r->id == ECG_OP_Cast) ecg_attr_set_i(n, "to", isf ? ECG_DOUBLE : ECG_FLOAT);
      if (var) {
        char an[64];
        snprintf(an, sizeof an, "%.*s", (int)(eq - r->a_attr), r->a_attr);
        ecg_attr_set_s(n, an, eq + 1);
      }
      ecg_err e = {0};
      if (op->infer(g, n, &e) != ECG_OK || ecg_eval_scalar(g, n, &e) != ECG_OK) {
        fprintf(stderr, "FAIL %s (%s): fold: %s\n", op->name, isf ? "float" : "int", e.msg);
        nfold_fail++;
        ecg_graph_free(g);
        continue;
      }
      /* generated side: the inputs as non-constant tensors of the same dtype */
      ecg_lower L = {0};
      L.g = g;
      ecg_scalar_view v;
      ecg_scalar_view_of(g, n, &v, NULL);
      sbuf s = {0};
      const char *vals[5] = {"in0[i]", "in1[i]", "in2[i]", "in3[i]", "in4[i]"};
      lw_scalar_stmt(&L, &s, n, &v, vals, "v");
      fprintf(f, "/* %s, %s domain%s%s */\nstatic void case%d(void) {\n", op->name, isf ? "float" : "integer", var ? ", " : "", var ? r->a_attr : "", ncase);
      for (int k = 0; k < nop; k++) {
        char nm[8];
        snprintf(nm, sizeof nm, "in%d", k);
        put_array(f, g->tensors[in[k]], nm);
      }
      put_array(f, g->tensors[y], "want");
      int yf = ecg_dtype_is_float(g->tensors[y]->dtype);
      int approx = strstr(s.s, "ecg_exp") || strstr(s.s, "ecg_erf");
      fprintf(f, "  for (int i = 0; i < %d; i++) {\n    %s v;\n    %s\n", N, lw_vtype(&L, y), s.s);
      if (yf) fprintf(f, "    if (!close_f(v, want[i], %g)) { bad++; printf(\"%s (%s) element %%d: generated %%.9g, folded %%.9g\\n\", i, (double)v, (double)want[i]); }\n",
                      approx ? 1e-4 : 2e-6, op->name, isf ? "float" : "int");
      else fprintf(f, "    if (v != want[i]) { bad++; printf(\"%s (%s) element %%d: generated %%lld, folded %%lld\\n\", i, (long long)v, (long long)want[i]); }\n",
                   op->name, isf ? "float" : "int");
      fprintf(f, "  }\n  cases++;\n}\n");
      sb_free(&s);
      ecg_graph_free(g);
      ncase++;
    }
  }
  fprintf(f, "int main(void) {\n");
  for (int i = 0; i < ncase; i++) fprintf(f, "  case%d();\n", i);
  fprintf(f, "  printf(\"%%d passed, %%d failed\\n\", cases - (bad > 0), bad);\n  return bad ? 1 : 0;\n}\n");
  fclose(f);
  fprintf(stderr, "scalar_test: %d operator/domain cases written to %s, %d fold failures\n", ncase, argv[1], nfold_fail);
  return nfold_fail ? 1 : 0;
}
