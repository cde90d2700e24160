/* C block instructions against plain C loops: a block writing two arrays inside split loops (its
 * derived inames defined for it), placed by the single-writer rule between an instruction it
 * reads and readers of each array it writes (given in the wrong order), a fixed parameter named
 * in its code, a block filling local memory that an instruction then reads (the barrier between
 * them), the description, and the refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kb_check.h"

/* args: alpha, x, t, y, z, v, w */
static void ref_two_writes(kb_data *d, const int64_t *p) {
  for (int64_t i = 0; i < p[0]; ++i) {
    double *x = d->data[1], *t = d->data[2], *y = d->data[3], *z = d->data[4];
    t[i] = 3 * x[i];
    double s = sin(t[i]), c = cos(x[i]);
    y[i] = s * c + d->scalar[0];
    z[i] = s - c;
    d->data[5][i] = z[i] + 1;
    d->data[6][i] = 2 * y[i] + z[i];
  }
}

static void two_writes_tests(kb_env *env, fcl_dtype type) {
  const char *tn = fcl_dtype_cl_name(type);
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("c_block_two_writes", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_scalar(kb, "alpha", type));
  const char *arrays[] = {"x", "t", "y", "z", "v", "w"};
  for (int k = 0; k < 6; ++k) CHECK_OK(fcl_kbuilder_add_array(kb, arrays[k], type, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n }"));
  /* readers first: the schedule must follow what the block writes and reads */
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "v[i] = z[i] + 1\nw[i] = 2 * y[i] + z[i]"));
  char code[256];
  snprintf(code, sizeof code,
           "%s s = sin(t[i]);\n%s c = cos(x[i]);\ny[i] = s * c + alpha;\nz[i] = s - c;", tn, tn);
  CHECK_OK(fcl_kbuilder_add_c_block(kb, code, "y[i], z[i]", "t[i], x[i], alpha", "{id=blk}"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "t[i] = 3 * x[i]"));
  char *text = NULL;
  CHECK_OK(fcl_kbuilder_describe(kb, &text));
  CHECK(text && fcl_test_contains(text, "blk: C block writing y[i], z[i] reading (t[i], x[i]"));
  free(text);
  int64_t n = 1000;
  kb_check(env, kb, &n, ref_two_writes, "one work-item");
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 64, "g.0", NULL));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i_inner", 16, "l.0", "unr"));
  kb_check(env, kb, &n, ref_two_writes, "i split over groups, l.0 and an unrolled loop");
  fcl_kbuilder_destroy(&kb);
}

/* out[i, j] = u[i, j] + (j + 1 < m ? u[i, j + 1] : 0), m fixed: args u, out */
static void ref_fixed(kb_data *d, const int64_t *p) {
  const int64_t m = 24;
  for (int64_t i = 0; i < p[0]; ++i)
    for (int64_t j = 0; j < m; ++j)
      d->data[1][i * m + j] = d->data[0][i * m + j] + (j + 1 < m ? d->data[0][i * m + j + 1] : 0);
}

static void fixed_tests(kb_env *env, fcl_dtype type) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("c_block_fixed", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_param(kb, "m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "u", type, "n, m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out", type, "n, m"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i, j]: 0 <= i < n and 0 <= j < m }"));
  CHECK_OK(fcl_kbuilder_add_c_block(kb,
                                    "out[i * m + j] = u[i * m + j];\n"
                                    "if (j + 1 < m) out[i * m + j] += u[i * m + j + 1];",
                                    "out[i, j]", "u", NULL));
  CHECK_OK(fcl_kbuilder_fix_parameters(kb, "m=24"));
  CHECK_OK(fcl_kbuilder_tag_inames(kb, "i:g.0, j:l.0"));
  int64_t n = 40;
  kb_check(env, kb, &n, ref_fixed, "m fixed, i:g.0, j:l.0");
  fcl_kbuilder_destroy(&kb);
}

/* out[g * 32 + l] = x[g * 32 + 31 - l] through a local tile: args x, out */
static void ref_reverse(kb_data *d, const int64_t *p) {
  for (int64_t g = 0; g < p[0] / 32; ++g)
    for (int64_t l = 0; l < 32; ++l) d->data[1][g * 32 + l] = d->data[0][g * 32 + 31 - l];
}

static void local_tests(kb_env *env, fcl_dtype type) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("c_block_local", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "x", type, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out", type, "n"));
  CHECK_OK(fcl_kbuilder_add_temporary(kb, "tile", type, FCL_TEMP_LOCAL, "32"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [g, l]: 0 <= g < n / 32 and 0 <= l < 32 }"));
  CHECK_OK(fcl_kbuilder_add_c_block(kb, "tile[l] = x[g * 32 + l];", "tile[l]", "x[g * 32 + l]",
                                    "id=fill"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "out[g * 32 + l] = tile[31 - l]"));
  CHECK_OK(fcl_kbuilder_tag_inames(kb, "g:g.0, l:l.0"));
  int64_t n = 256;
  kb_check(env, kb, &n, ref_reverse, "tile in local memory");
  char *src = NULL;
  CHECK_OK(fcl_kbuilder_generate(kb, &src));
  CHECK(src && fcl_test_contains(src, "FCL_BARRIER_LOCAL()"));
  free(src);
  fcl_kbuilder_destroy(&kb);
}

static void refusal_tests(void) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("c_block_errors", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_scalar(kb, "s", FCL_FLOAT32));
  CHECK_OK(fcl_kbuilder_add_array(kb, "u", FCL_FLOAT32, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "o", FCL_FLOAT32, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i, k]: 0 <= i < n and 0 <= k < 4 }"));
  CHECK_STATUS(fcl_kbuilder_add_c_block(kb, "o[i] = 1;", "", NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
               "'C block: o[i] = 1;': writes: a C block must write");
  CHECK_STATUS(fcl_kbuilder_add_c_block(kb, "s = 1;", "s", NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
               "'s' is a scalar argument");
  CHECK_STATUS(fcl_kbuilder_add_c_block(kb, "o[i] = q[i];", "o[i]", "q[i]", NULL),
               FCL_ERR_INVALID_ARGUMENT, "reads: 'q' is not an argument");
  CHECK_STATUS(fcl_kbuilder_add_c_block(kb, "o[i] = 1;", "o[i + 1 - 1, 0]", NULL, NULL),
               FCL_ERR_INVALID_ARGUMENT, "'o' has 1 dimensions, 2 indices given");
  CHECK_STATUS(fcl_kbuilder_add_c_block(kb, "o[i] = 1;", "o[i] + 1", NULL, NULL),
               FCL_ERR_INVALID_ARGUMENT, "is not a variable or an array access");
  CHECK_STATUS(fcl_kbuilder_add_c_block(kb, "o[i] = 1;", "o[i]", NULL, "{colour=red}"),
               FCL_ERR_INVALID_ARGUMENT, "unknown attribute 'colour'");
  CHECK_STATUS(fcl_kbuilder_add_c_block(kb, "o[i] = 1;", "o[i] u[i]", NULL, NULL),
               FCL_ERR_INVALID_ARGUMENT, "a comma-separated list");
  CHECK(fcl_kbuilder_num_args(kb) == 3); /* nothing was added */
  /* a streamed array cannot be read by a block's own code */
  CHECK_OK(fcl_kbuilder_add_c_block(kb, "o[i] += u[i] * k;", "o[i]", "u[i]", "inames=+k"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "o[i] = o[i] + u[i] {inames=i:k, dep=*}"));
  CHECK_OK(fcl_kbuilder_tag_inames(kb, "i:g.0"));
  CHECK_STATUS(fcl_kbuilder_stream_iname(kb, "k", "u"), FCL_ERR_INVALID_ARGUMENT,
               "reads 'u' by its own code");
  fcl_kbuilder_destroy(&kb);
}

static void typed_tests(kb_env *env, fcl_dtype type) {
  two_writes_tests(env, type);
  fixed_tests(env, type);
  local_tests(env, type);
}

int main(void) {
  refusal_tests();
  return kb_run_typed(typed_tests);
}
