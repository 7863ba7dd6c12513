/* Operator roles for intensive fusion (format/chain.h; AGO §III-B). */
#include <math.h>
#include <string.h>

#include "chain.h"
#include "scalar.h"

static int const_f32(const ecg_graph *g, const ecg_node *n, int i) {
  const ecg_tensor *t = ecg_node_input(g, n, i);
  return t && t->is_const && t->dtype == ECG_FLOAT;
}

static int all_ones(const ecg_node *n, const char *name) {
  const int64_t *v;
  int c = ecg_attr_ints(n, name, &v);
  for (int i = 0; i < c; i++) if (v[i] != 1) return 0;
  return 1;
}

ecg_conv_role ecg_conv_role_of(const ecg_graph *g, const ecg_node *n) {
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  if (!op || op->id != ECG_OP_Conv || n->n_outputs != 1 || n->n_inputs < 2) return ECG_CONV_OTHER;
  const ecg_tensor *x = ecg_node_input(g, n, 0), *w = ecg_node_input(g, n, 1), *y = ecg_node_output(g, n, 0);
  int64_t xd[ECG_MAX_RANK], wd[ECG_MAX_RANK], yd[ECG_MAX_RANK];
  if (!x || !w || !y || x->dtype != ECG_FLOAT || y->dtype != ECG_FLOAT || !const_f32(g, n, 1)) return ECG_CONV_OTHER;
  if (n->n_inputs > 2 && n->inputs[2] >= 0 && !const_f32(g, n, 2)) return ECG_CONV_OTHER;
  if (ecg_tensor_dims(x, xd) != 4 || ecg_tensor_dims(w, wd) != 4 || ecg_tensor_dims(y, yd) != 4) return ECG_CONV_OTHER;
  if (!ecg_tensor_static(x) || !ecg_tensor_static(y) || !all_ones(n, "dilations")) return ECG_CONV_OTHER;
  int64_t group = ecg_attr_i(n, "group", 1);
  if (group == 1 && wd[2] == 1 && wd[3] == 1 && all_ones(n, "strides") && yd[2] == xd[2] && yd[3] == xd[3]) {
    const int64_t *p;
    int c = ecg_attr_ints(n, "pads", &p);
    for (int i = 0; i < c; i++) if (p[i] != 0) return ECG_CONV_OTHER;
    return ECG_CONV_POINTWISE;
  }
  if (group > 1 && group == xd[1] && group == yd[1] && wd[1] == 1) return ECG_CONV_DEPTHWISE;
  if (group == 1 && xd[1] <= 4 && yd[1] >= 16 && xd[1] * wd[2] * wd[3] <= 36) {
    const int64_t *s;
    int c = ecg_attr_ints(n, "strides", &s);
    for (int i = 0; i < c; i++) if (s[i] < 1 || s[i] > 2) return ECG_CONV_OTHER;
    const int64_t *p; /* pads [top, left, bottom, right], each under the kernel's extent */
    if (ecg_attr_ints(n, "pads", &p) == 4 && (p[0] >= wd[2] || p[2] >= wd[2] || p[1] >= wd[3] || p[3] >= wd[3])) return ECG_CONV_OTHER;
    return ECG_CONV_STEM;
  }
  return ECG_CONV_OTHER;
}

int ecg_dw_geometry(const ecg_graph *g, const ecg_node *n, int *kh, int *kw, int *sh, int *sw, int *pt, int *pl) {
  if (ecg_conv_role_of(g, n) != ECG_CONV_DEPTHWISE) return -1;
  return ecg_conv_geometry(g, n, kh, kw, sh, sw, pt, pl);
}

int ecg_conv_geometry(const ecg_graph *g, const ecg_node *n, int *kh, int *kw, int *sh, int *sw, int *pt, int *pl) {
  if (ecg_conv_role_of(g, n) == ECG_CONV_OTHER) return -1;
  int64_t xd[ECG_MAX_RANK], wd[ECG_MAX_RANK], yd[ECG_MAX_RANK];
  ecg_tensor_dims(ecg_node_input(g, n, 0), xd);
  ecg_tensor_dims(ecg_node_input(g, n, 1), wd);
  ecg_tensor_dims(ecg_node_output(g, n, 0), yd);
  *kh = (int)wd[2]; *kw = (int)wd[3];
  const int64_t *s;
  *sh = *sw = 1;
  if (ecg_attr_ints(n, "strides", &s) == 2) { *sh = (int)s[0]; *sw = (int)s[1]; }
  char ap[32];
  ecg_attr_s(n, "auto_pad", "NOTSET", ap, sizeof ap);
  int same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
  if (same_upper || same_lower) {
    int64_t th = (yd[2] - 1) * *sh + *kh - xd[2], tw = (yd[3] - 1) * *sw + *kw - xd[3];
    if (th < 0) th = 0;
    if (tw < 0) tw = 0;
    *pt = (int)(same_upper ? th / 2 : th - th / 2);
    *pl = (int)(same_upper ? tw / 2 : tw - tw / 2);
  } else {
    const int64_t *p;
    *pt = *pl = 0;
    if (ecg_attr_ints(n, "pads", &p) == 4) { *pt = (int)p[0]; *pl = (int)p[1]; }
  }
  return 0;
}

ecg_builtin_act ecg_builtin_act_of(const ecg_graph *g, const ecg_node *n, float *a, float *b) {
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  const ecg_tensor *x = ecg_node_input(g, n, 0), *y = ecg_node_output(g, n, 0);
  *a = *b = 0;
  if (!op || !x || !y || x->dtype != ECG_FLOAT || y->dtype != ECG_FLOAT || n->n_outputs != 1) return ECG_BACT_NONE;
  switch (op->id) {
  case ECG_OP_Relu: return n->n_inputs == 1 ? ECG_BACT_RELU : ECG_BACT_NONE;
  case ECG_OP_Sigmoid: return ECG_BACT_SIGMOID;
  case ECG_OP_HardSwish: return ECG_BACT_HARDSWISH;
  case ECG_OP_LeakyRelu: *a = ecg_attr_f(n, "alpha", 0.01f); return ECG_BACT_LEAKY;
  case ECG_OP_Clip: {
    *a = ecg_attr_f(n, "min", -INFINITY);
    *b = ecg_attr_f(n, "max", INFINITY);
    for (int k = 1; k <= 2 && k < (int)n->n_inputs; k++) {
      const ecg_tensor *t = ecg_node_input(g, n, k);
      if (!t) continue;
      if (!t->is_const || ecg_tensor_numel(t) != 1) return ECG_BACT_NONE;
      *(k == 1 ? a : b) = (float)ecg_const_f64(t, 0);
    }
    return ECG_BACT_CLIP;
  }
  default: return ECG_BACT_NONE;
  }
}

ecg_builtin_act ecg_builtin_act_chain(const ecg_graph *g, int x, const int *ns, int n, float *a, float *b) {
  *a = *b = 0;
  if (n < 1 || n > 2 || x < 0) return ECG_BACT_NONE;
  const ecg_node *f = g->nodes[ns[0]];
  if (f->n_inputs < 1 || f->inputs[0] != x) return ECG_BACT_NONE;
  ecg_builtin_act k = ecg_builtin_act_of(g, f, a, b);
  if (n == 1) return k;
  /* SiLU: Sigmoid(x) then Mul of x and it, every operand of x's shape */
  const ecg_node *m = g->nodes[ns[1]];
  const ecg_op_info *op = ecg_op_lookup(m->op_type, m->domain);
  const ecg_tensor *tx = g->tensors[x], *ty = ecg_node_output(g, m, 0);
  if (k != ECG_BACT_SIGMOID || !op || op->id != ECG_OP_Mul || m->n_inputs != 2 || m->n_outputs != 1 || !ty ||
      ty->dtype != ECG_FLOAT || ecg_tensor_numel(ty) != ecg_tensor_numel(tx))
    return ECG_BACT_NONE;
  int s = f->outputs[0];
  if (!((m->inputs[0] == x && m->inputs[1] == s) || (m->inputs[0] == s && m->inputs[1] == x))) return ECG_BACT_NONE;
  return ECG_BACT_SILU;
}

int ecg_bias_n_of(const ecg_graph *g, int x, const ecg_node *f) {
  const ecg_op_info *op = ecg_op_lookup(f->op_type, f->domain);
  if (!op || op->id != ECG_OP_Add || f->n_inputs != 2 || f->n_outputs != 1 || x < 0) return -1;
  int q = f->inputs[0] == x ? 1 : f->inputs[1] == x ? 0 : -1;
  if (q < 0 || f->inputs[q] == x || !const_f32(g, f, q)) return -1;
  const ecg_tensor *tx = g->tensors[x], *c = ecg_node_input(g, f, q), *y = ecg_node_output(g, f, 0);
  int64_t xd[ECG_MAX_RANK], cd[ECG_MAX_RANK], yd[ECG_MAX_RANK];
  if (!y || tx->dtype != ECG_FLOAT || y->dtype != ECG_FLOAT || !ecg_tensor_static(tx) || !ecg_tensor_static(y)) return -1;
  int rx = ecg_tensor_dims(tx, xd), rc = ecg_tensor_dims(c, cd), ry = ecg_tensor_dims(y, yd);
  if (rx < 1 || ry != rx || rc < 1 || rc > rx || cd[rc - 1] != xd[rx - 1]) return -1;
  for (int i = 0; i < rx; i++) if (yd[i] != xd[i]) return -1;
  for (int i = 0; i + 1 < rc; i++) if (cd[i] != 1) return -1;
  return f->inputs[q];
}

/* The activation at idx[*i..nm) of tensor t (ecg_builtin_act_chain: SiLU's two nodes tried
 * first, then one node), its members into act[0..*n) and *i past them; none: *n = 0. */
static void act_members(const ecg_graph *g, int t, const int *idx, int *i, int nm, int act[2], int *n) {
  float a, b;
  act[0] = act[1] = -1;
  *n = 0;
  for (int k = 2; k >= 1 && !*n; k--)
    if (*i + k <= nm && ecg_builtin_act_chain(g, t, idx + *i, k, &a, &b) != ECG_BACT_NONE) {
      for (int j = 0; j < k; j++) act[j] = idx[*i + j];
      *n = k;
    }
  *i += *n;
}

/* The output tensor of the stage that ends with node n, after its activation act[0..na). */
static int stage_out(const ecg_graph *g, int n, const int *act, int na) {
  return g->nodes[na ? act[na - 1] : n]->outputs[0];
}

int ecg_ibr_match(const ecg_graph *g, const int *idx, int nm, ecg_ibr_chain *m) {
  int i = 0;
  m->pw1 = m->dw = m->pw2 = -1;
  m->nact1 = m->nact2 = 0;
  m->act1[0] = m->act1[1] = m->act2[0] = m->act2[1] = -1;
  ecg_conv_role r0 = i < nm ? ecg_conv_role_of(g, g->nodes[idx[i]]) : ECG_CONV_OTHER;
  if (r0 == ECG_CONV_POINTWISE || r0 == ECG_CONV_STEM) {
    m->pw1 = idx[i++];
    act_members(g, g->nodes[m->pw1]->outputs[0], idx, &i, nm, m->act1, &m->nact1);
  }
  if (i >= nm || ecg_conv_role_of(g, g->nodes[idx[i]]) != ECG_CONV_DEPTHWISE) return -1;
  m->dw = idx[i++];
  if (m->pw1 >= 0 && g->nodes[m->dw]->inputs[0] != stage_out(g, m->pw1, m->act1, m->nact1)) return -1;
  act_members(g, g->nodes[m->dw]->outputs[0], idx, &i, nm, m->act2, &m->nact2);
  if (i == nm) return m->pw1 >= 0 ? nm : -1; /* no pw2: the depthwise stage's output is the chain's */
  if (ecg_conv_role_of(g, g->nodes[idx[i]]) != ECG_CONV_POINTWISE) return -1;
  m->pw2 = idx[i++];
  if (g->nodes[m->pw2]->inputs[0] != stage_out(g, m->dw, m->act2, m->nact2)) return -1;
  int64_t numel = ecg_tensor_numel(ecg_node_output(g, g->nodes[m->pw2], 0));
  for (int k = i; k < nm; k++)
    if (!ecg_is_scalar_node(g, g->nodes[idx[k]]) || ecg_tensor_numel(ecg_node_output(g, g->nodes[idx[k]], 0)) != numel) return -1;
  return i;
}

int ecg_se_head(const ecg_graph *g, const ecg_node *n) {
  const ecg_op_info *op = ecg_op_lookup(n->op_type, n->domain);
  if (!op || op->id != ECG_OP_GlobalAveragePool || n->n_inputs != 1 || n->n_outputs != 1) return 0;
  const ecg_tensor *x = ecg_node_input(g, n, 0), *y = ecg_node_output(g, n, 0);
  int64_t xd[ECG_MAX_RANK];
  return x && y && x->dtype == ECG_FLOAT && y->dtype == ECG_FLOAT && ecg_tensor_static(x) && ecg_tensor_dims(x, xd) == 4;
}

/* The activation of ns[0..n) after tensor t (n = 0: none), its output tensor in *out. */
static int act_after(const ecg_graph *g, int t, const int *ns, int n, int *out) {
  float a, b;
  *out = t;
  if (n == 0) return 1;
  if (ecg_builtin_act_chain(g, t, ns, n, &a, &b) == ECG_BACT_NONE) return 0;
  *out = g->nodes[ns[n - 1]]->outputs[0];
  return 1;
}

int ecg_se_match(const ecg_graph *g, const int *idx, int nm, ecg_se_chain *m) {
  memset(m, -1, sizeof *m);
  m->nact1 = m->nact2 = 0;
  if (nm < 2 || nm > 8) return -1;
  int pool = ecg_se_head(g, g->nodes[idx[0]]);
  int64_t xd[ECG_MAX_RANK], pd[ECG_MAX_RANK];
  int t, c2 = -1;
  if (pool) {
    const ecg_node *gp = g->nodes[idx[0]];
    m->gap = idx[0];
    m->x = gp->inputs[0];
    if (nm < 3 || ecg_tensor_dims(g->tensors[gp->outputs[0]], pd) != 4 || pd[2] != 1 || pd[3] != 1) return -1;
    /* the two convs: the first two pointwise convs among the members */
    int c1 = -1;
    for (int i = 1; i < nm; i++)
      if (ecg_conv_role_of(g, g->nodes[idx[i]]) == ECG_CONV_POINTWISE) {
        if (c1 < 0) c1 = i;
        else if (c2 < 0) c2 = i;
        else return -1;
      }
    if (c1 != 1 || c2 < 0 || c2 - c1 - 1 > 2) return -1;
    m->fc1 = idx[c1];
    m->nact1 = c2 - c1 - 1;
    for (int k = 0; k < m->nact1; k++) m->act1[k] = idx[c1 + 1 + k];
    if (g->nodes[m->fc1]->inputs[0] != gp->outputs[0]) return -1;
    if (!act_after(g, g->nodes[m->fc1]->outputs[0], m->act1, m->nact1, &t)) return -1;
    m->u = t;
  } else {
    /* the tail: fc2 first, on a 1x1 plane */
    int64_t ud[ECG_MAX_RANK];
    c2 = 0;
    if (ecg_conv_role_of(g, g->nodes[idx[0]]) != ECG_CONV_POINTWISE) return -1;
    m->u = g->nodes[idx[0]]->inputs[0];
    if (ecg_tensor_dims(g->tensors[m->u], ud) != 4 || ud[2] != 1 || ud[3] != 1) return -1;
  }
  m->fc2 = idx[c2];
  if (g->nodes[m->fc2]->inputs[0] != m->u) return -1;
  /* after fc2: its activation, then perhaps the scale Mul (the last member) */
  int rest = nm - c2 - 1, has_scale = 0;
  if (rest > 0) {
    const ecg_node *l = g->nodes[idx[nm - 1]];
    const ecg_op_info *op = ecg_op_lookup(l->op_type, l->domain);
    int other = -1;
    if (op && op->id == ECG_OP_Mul && l->n_inputs == 2 && l->n_outputs == 1 && l->outputs[0] >= 0 && l->inputs[0] >= 0 &&
        l->inputs[1] >= 0 && l->inputs[0] != l->inputs[1]) {
      /* the operand that is not the scales: the pool's input, or (the tail) any 4-D tensor */
      for (int k = 0; k < 2; k++)
        if (pool ? l->inputs[k] == m->x : ecg_tensor_dims(g->tensors[l->inputs[k]], xd) == 4 && xd[2] * xd[3] > 1) other = k;
    }
    if (other >= 0) { has_scale = 1; m->x = l->inputs[other]; }
  }
  if (!pool && !has_scale) return -1;
  const ecg_tensor *tx = g->tensors[m->x];
  if (tx->dtype != ECG_FLOAT || !ecg_tensor_static(tx) || ecg_tensor_dims(tx, xd) != 4) return -1;
  m->nact2 = rest - has_scale;
  if (m->nact2 > 2) return -1;
  for (int k = 0; k < m->nact2; k++) m->act2[k] = idx[c2 + 1 + k];
  if (!act_after(g, g->nodes[m->fc2]->outputs[0], m->act2, m->nact2, &t)) return -1;
  int64_t sd[ECG_MAX_RANK];
  if (ecg_tensor_dims(g->tensors[t], sd) != 4 || sd[0] != xd[0] || sd[2] != 1 || sd[3] != 1 || g->tensors[t]->dtype != ECG_FLOAT)
    return -1;
  m->y = t;
  if (has_scale) {
    const ecg_node *l = g->nodes[idx[nm - 1]];
    const ecg_tensor *y = ecg_node_output(g, l, 0);
    if (l->inputs[0] != t && l->inputs[1] != t) return -1;
    if (sd[1] != xd[1] || !y || y->dtype != ECG_FLOAT || ecg_tensor_numel(y) != ecg_tensor_numel(tx)) return -1;
    m->scale = idx[nm - 1];
    m->y = l->outputs[0];
  }
  return 0;
}

int ecg_conv_pool_match(const ecg_graph *g, const int *idx, int nm, int *conv, int *act, int *pool) {
  *conv = *act = *pool = -1;
  if (nm < 2 || nm > 3) return -1;
  const ecg_node *c = g->nodes[idx[0]], *p = g->nodes[idx[nm - 1]];
  const ecg_op_info *oc = ecg_op_lookup(c->op_type, c->domain), *op = ecg_op_lookup(p->op_type, p->domain);
  if (!oc || oc->id != ECG_OP_Conv || !op || op->id != ECG_OP_MaxPool) return -1;
  if (c->n_outputs != 1 || c->n_inputs < 2 || ecg_attr_i(c, "group", 1) != 1 || !const_f32(g, c, 1)) return -1;
  if (c->n_inputs > 2 && c->inputs[2] >= 0 && !const_f32(g, c, 2)) return -1;
  const ecg_tensor *x = ecg_node_input(g, c, 0), *w = ecg_node_input(g, c, 1), *t = ecg_node_output(g, c, 0);
  int64_t d[ECG_MAX_RANK];
  if (!x || !w || !t || x->dtype != ECG_FLOAT || t->dtype != ECG_FLOAT || ecg_tensor_dims(x, d) != 4 || ecg_tensor_dims(t, d) != 4 ||
      ecg_tensor_dims(w, d) != 4 || !ecg_tensor_static(x) || !ecg_tensor_static(t))
    return -1;
  /* a CNN's first layer (at most 4 input channels, up to 7x7 taps): the convs whose output
   * the runtime pools from the cache (ecg_rt1_conv2d_maxpool: conv_direct's rows up to 36
   * taps, the blocked conv's rows beyond, resnet18's 7x7 conv1; where neither applies, the
   * conv and then the pool inside the kernel) */
  if (d[1] > 4 || d[1] * d[2] * d[3] > 4 * 49) return -1; /* d: the weight's [m, c, kh, kw] */
  int u = c->outputs[0];
  float a, b;
  if (nm == 3) {
    if (ecg_builtin_act_chain(g, u, &idx[1], 1, &a, &b) == ECG_BACT_NONE) return -1;
    u = g->nodes[idx[1]]->outputs[0];
  }
  const ecg_tensor *y = ecg_node_output(g, p, 0);
  if (p->n_inputs < 1 || p->inputs[0] != u || (p->n_outputs > 1 && p->outputs[1] >= 0) || !y || y->dtype != ECG_FLOAT ||
      ecg_tensor_dims(y, d) != 4 || !ecg_tensor_static(y) || !all_ones(p, "dilations"))
    return -1;
  *conv = idx[0];
  *act = nm == 3 ? idx[1] : -1;
  *pool = idx[nm - 1];
  return 0;
}

int ecg_intensive_match(const ecg_graph *g, const int *idx, int nm) {
  int cv, ac, pl;
  ecg_ibr_chain ib;
  ecg_se_chain se;
  return ecg_ibr_match(g, idx, nm, &ib) >= 0 || (ecg_se_match(g, idx, nm, &se) == 0 && se.gap >= 0) ||
         ecg_conv_pool_match(g, idx, nm, &cv, &ac, &pl) == 0;
}
