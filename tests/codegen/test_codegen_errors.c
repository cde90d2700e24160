/* Invalid kernels get errors that name what is wrong (the instruction, the iname, the tag);
 * the description, the work sizes, the remainder guards and the launcher's parameters; the
 * width of global indices (long past INT_MAX elements). */
#include <stdlib.h>
#include <string.h>

#include "fcl_test.h"
#include "flowcl/opencl.h"

static fcl_kbuilder *base(void) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("k", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_param(kb, "m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "a", FCL_FLOAT32, "n, m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "b", FCL_FLOAT32, "n, m"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "v", FCL_FLOAT32, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i, j]: 0 <= i < n and 0 <= j < m }"));
  return kb;
}

static void generate_fails(fcl_kbuilder *kb, const char *t1, const char *t2) {
  char *src = NULL;
  CHECK_STATUS(fcl_kbuilder_generate(kb, &src), FCL_ERR_INVALID_ARGUMENT, t1);
  if (t2) CHECKF(fcl_test_contains(fcl_last_error(), t2), "'%s' not in: %s", t2, fcl_last_error());
  CHECK(src == NULL);
}

static void declarations(void) {
  fcl_kbuilder *kb = NULL;
  CHECK_STATUS(fcl_kbuilder_create("2bad", &kb), FCL_ERR_INVALID_ARGUMENT, "not a C identifier");
  kb = base();
  CHECK_STATUS(fcl_kbuilder_add_array(kb, "c", FCL_FLOAT32, "n, q"), FCL_ERR_INVALID_ARGUMENT,
               "'q' is not a parameter");
  CHECK_STATUS(fcl_kbuilder_add_param(kb, "a"), FCL_ERR_INVALID_ARGUMENT, "already used");
  CHECK_STATUS(fcl_kbuilder_add_temporary(kb, "t", FCL_FLOAT32, FCL_TEMP_LOCAL, "n"),
               FCL_ERR_INVALID_ARGUMENT, "positive constants");
  CHECK_STATUS(fcl_kbuilder_add_domain(kb, "{ [k]: 0 <= k }"), FCL_ERR_INVALID_ARGUMENT,
               "iname 'k' has no upper bound");
  CHECK_STATUS(fcl_kbuilder_add_domain(kb, "{ [k]: 0 <= k < i }"), FCL_ERR_INVALID_ARGUMENT,
               "may only use parameters");
  CHECK_STATUS(fcl_kbuilder_add_domain(kb, "[k] 0 < k"), FCL_ERR_INVALID_ARGUMENT, "expected");
  CHECK_STATUS(fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n }"), FCL_ERR_INVALID_ARGUMENT,
               "already used");
  fcl_kbuilder_destroy(&kb);
}

static void instructions(void) {
  fcl_kbuilder *kb = base();
  CHECK_STATUS(fcl_kbuilder_add_instructions(kb, "b[i, j] = a[i, j] + q"), FCL_ERR_INVALID_ARGUMENT,
               "unknown name 'q'");
  CHECKF(fcl_test_contains(fcl_last_error(), "b[i, j] = a[i, j] + q"), "statement not named: %s",
         fcl_last_error());
  CHECK_STATUS(fcl_kbuilder_add_instructions(kb, "b[i, j] = (a[i, j] + 1"),
               FCL_ERR_INVALID_ARGUMENT, "expected ')'");
  CHECK_STATUS(fcl_kbuilder_add_instructions(kb, "n = 3"), FCL_ERR_INVALID_ARGUMENT,
               "cannot assign to parameter 'n'");
  CHECK_STATUS(fcl_kbuilder_add_instructions(kb, "b[i] = 1"), FCL_ERR_INVALID_ARGUMENT,
               "'b' has 2 dimensions, 1 indices given");
  CHECK_STATUS(fcl_kbuilder_add_instructions(kb, "v[i] = sum(x, a[i, j])"),
               FCL_ERR_INVALID_ARGUMENT, "needs an iname");
  CHECK_STATUS(fcl_kbuilder_add_instructions(kb, "v[i] = a[i, j] {color=red}"),
               FCL_ERR_INVALID_ARGUMENT, "unknown attribute 'color'");
  /* found by fuzzing the parser: a repeated list attribute leaked the first list, a literal past
   * INT64_MAX was clamped */
  static const char *twice[] = {"v[i] = 1 {dep=x, dep=y}", "v[i] = 1 {inames=i, inames=+i}",
                                "v[i] = 1 {if=n, if=n}", "v[i] = 1 {id=a, id=b}"};
  for (size_t t = 0; t < sizeof twice / sizeof *twice; ++t)
    CHECK_STATUS(fcl_kbuilder_add_instructions(kb, twice[t]), FCL_ERR_INVALID_ARGUMENT,
                 "given twice");
  CHECK_STATUS(fcl_kbuilder_add_instructions(kb, "v[i] = 9223372036854775808"),
               FCL_ERR_INVALID_ARGUMENT, "out of range");
  /* '$' tags: on array accesses and rule uses only */
  CHECK_STATUS(fcl_kbuilder_add_instructions(kb, "v[i] = a$[i, j]"), FCL_ERR_INVALID_ARGUMENT,
               "expected a tag name after '$'");
  CHECK_STATUS(fcl_kbuilder_add_instructions(kb, "v[i] = n$t + 1"), FCL_ERR_INVALID_ARGUMENT,
               "a '$' tag goes on an array access or a rule's use");
  CHECK_STATUS(fcl_kbuilder_add_instructions(kb, "v[i] = sin$t(a[i, j])"), FCL_ERR_INVALID_ARGUMENT,
               "not on the function 'sin'");
  CHECK_STATUS(fcl_kbuilder_add_instructions(kb, "v[i] = 99999999999999999999999"),
               FCL_ERR_INVALID_ARGUMENT, "out of range");
  /* bounds whose folding overflows int64_t stay unfolded (they were undefined behaviour: the
   * asan preset's UBSan stops here on the old evaluator) */
  fcl_kbuilder *big = NULL;
  CHECK_OK(fcl_kbuilder_create("big", &big));
  CHECK_OK(fcl_kbuilder_add_array(big, "w", FCL_FLOAT32, "8"));
  CHECK_OK(fcl_kbuilder_add_domain(big, "{ [i]: 0 <= i < 9223372036854775807 + 1 }"));
  CHECK_OK(
      fcl_kbuilder_add_instructions(big, "w[(i << 62) * 4 + (-9223372036854775807 - 1) / -1] = 1"));
  char *big_src = NULL;
  fcl_status big_st = fcl_kbuilder_generate(big, &big_src);
  CHECKF(big_st == FCL_OK || big_st == FCL_ERR_INVALID_ARGUMENT, "generate: %s",
         fcl_status_name(big_st));
  free(big_src);
  fcl_clear_error();
  fcl_kbuilder_destroy(&big);
  CHECK_STATUS(fcl_kbuilder_add_instructions(kb, "f(x) := sqrt(x)\nv[i] = f(1) {id=a1}\n"
                                                 "v[i] = 2 {id=a1}"),
               FCL_ERR_INVALID_ARGUMENT, "id 'a1' is already used");
  /* all or nothing: the rule and the first instruction above were not kept */
  char *text = NULL;
  CHECK_OK(fcl_kbuilder_describe(kb, &text));
  CHECKF(text && !strstr(text, "insn") && !strstr(text, "rule"), "partial add kept:\n%s", text);
  free(text);
  CHECK_STATUS(fcl_kbuilder_generate(kb, &text), FCL_ERR_INVALID_ARGUMENT, "no instructions");
  /* id_prefix: the prefix, then prefix_0, prefix_1; a dependency may name them */
  fcl_kbuilder *pk = base();
  CHECK_OK(fcl_kbuilder_add_instructions(pk, "b[i, j] = a[i, j] {id_prefix=upd}\n"
                                             "b[i, j] = b[i, j] + 1 {id_prefix=upd, dep=upd}\n"
                                             "b[i, j] = 2 * b[i, j] {id_prefix=upd, dep=upd_0}"));
  char *ptext = NULL;
  CHECK_OK(fcl_kbuilder_describe(pk, &ptext));
  CHECKF(ptext && strstr(ptext, "upd_0") && strstr(ptext, "upd_1") && !strstr(ptext, "upd_2"),
         "ids from a prefix:\n%s", ptext ? ptext : "");
  free(ptext);
  CHECK_STATUS(fcl_kbuilder_add_instructions(pk, "v[i] = 1 {id=x, id_prefix=y}"),
               FCL_ERR_INVALID_ARGUMENT, "id and id_prefix both given");
  CHECK_STATUS(fcl_kbuilder_add_instructions(pk, "v[i] = 1 {id_prefix=y, id=x}"),
               FCL_ERR_INVALID_ARGUMENT, "id and id_prefix both given");
  CHECK_STATUS(fcl_kbuilder_add_instructions(pk, "v[i] = 1 {id_prefix=y, id_prefix=z}"),
               FCL_ERR_INVALID_ARGUMENT, "given twice");
  fcl_kbuilder_destroy(&pk);
  /* an iname the instruction uses but its inames= leave out */
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "b[i, j] = a[i, j] {inames=i}"));
  /* accesses that leave an array of known extent, for inames of known bounds */
  fcl_kbuilder *ob = NULL;
  CHECK_OK(fcl_kbuilder_create("bounds", &ob));
  CHECK_OK(fcl_kbuilder_add_array(ob, "a", FCL_FLOAT32, "10, 4"));
  CHECK_OK(fcl_kbuilder_add_array(ob, "o", FCL_FLOAT32, "10"));
  CHECK_OK(fcl_kbuilder_add_domain(ob, "{ [i, j]: 0 <= i < 10 and 0 <= j < 4 }"));
  CHECK_STATUS(fcl_kbuilder_add_instructions(ob, "o[i] = a[i + 1, 0]"), FCL_ERR_INVALID_ARGUMENT,
               "'a[i + 1, 0]' reaches index 10 along axis 0 of 'a', whose extent is 10");
  CHECK_STATUS(fcl_kbuilder_add_instructions(ob, "o[i] = sum(j, a[i, 3 - 2 * j])"),
               FCL_ERR_INVALID_ARGUMENT, "reaches index -3 along axis 1");
  CHECK_STATUS(fcl_kbuilder_add_instructions(ob, "o[2 * i] = 1"), FCL_ERR_INVALID_ARGUMENT,
               "reaches index 18");
  /* in bounds, or on a path the program guards: accepted */
  CHECK_OK(fcl_kbuilder_add_instructions(ob, "o[i] = sum(j, a[9 - i, 3 - j])"));
  CHECK_OK(fcl_kbuilder_add_instructions(ob, "o[i] = i < 9 ? a[i + 1, 0] : 0 {id=guarded}"));
  fcl_kbuilder_destroy(&ob);
  generate_fails(kb, "uses iname 'j', which is not among its inames", NULL);
  fcl_kbuilder_destroy(&kb);
}

static void tags(void) {
  fcl_kbuilder *kb = base();
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "b[i, j] = a[i, j] {id=copy}"));
  CHECK_STATUS(fcl_kbuilder_tag_inames(kb, "i:l.9"), FCL_ERR_INVALID_ARGUMENT, "unknown tag 'l.9'");
  CHECK_STATUS(fcl_kbuilder_tag_inames(kb, "i:g.0, i:l.0"), FCL_ERR_INVALID_ARGUMENT,
               "iname 'i' is tagged twice");
  CHECK_OK(fcl_kbuilder_tag_inames(kb, "i:g.0"));
  CHECK_OK(fcl_kbuilder_tag_inames(kb, "i:g.0")); /* the same tag again is fine */
  CHECK_STATUS(fcl_kbuilder_tag_inames(kb, "i:l.0"), FCL_ERR_INVALID_ARGUMENT,
               "already tagged g.0; it cannot also be l.0");
  CHECK_STATUS(fcl_kbuilder_split_iname(kb, "i", 4, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
               "split before tagging");
  CHECK_STATUS(fcl_kbuilder_split_iname(kb, "zz", 4, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
               "unknown iname 'zz'");
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 16, "g.0", "l.0"));
  CHECK_STATUS(fcl_kbuilder_tag_inames(kb, "j:g.1"), FCL_ERR_INVALID_ARGUMENT, "was split");
  CHECK_STATUS(fcl_kbuilder_align_iname(kb, "j", 4), FCL_ERR_INVALID_ARGUMENT,
               "align before splitting");
  CHECK_STATUS(fcl_kbuilder_align_iname(kb, "zz", 4), FCL_ERR_INVALID_ARGUMENT,
               "unknown iname 'zz'");
  CHECK_STATUS(fcl_kbuilder_align_iname(kb, "i", 0), FCL_ERR_INVALID_ARGUMENT, "alignment");
  /* i and j_outer are both g.0 in one instruction */
  generate_fails(kb, "insn 'copy'", "both tagged g.0");
  fcl_kbuilder_destroy(&kb);

  kb = base();
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "b[i, j] = a[i, j]"));
  CHECK_OK(fcl_kbuilder_tag_inames(kb, "j:l.0"));
  generate_fails(kb, "iname 'j' is tagged l.0 but its extent is not a positive constant", NULL);
  fcl_kbuilder_destroy(&kb);

  kb = NULL; /* aligning needs a constant lower bound */
  CHECK_OK(fcl_kbuilder_create("k", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i]: n - 8 <= i < n }"));
  CHECK_STATUS(fcl_kbuilder_align_iname(kb, "i", 4), FCL_ERR_INVALID_ARGUMENT,
               "lower bound of 'i' (n - 8) is not a constant");
  fcl_kbuilder_destroy(&kb);

  kb = base();
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "v[i] = sum(j, a[i, j]) {id=rowsum}"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 8, NULL, "l.0"));
  generate_fails(kb, "insn 'rowsum'", "reduction iname 'j_inner' is tagged l.0");
  fcl_kbuilder_destroy(&kb);
}

/* stream_iname: what it refuses, and what it leaves in the kernel. */
static void streams(void) {
  fcl_kbuilder *kb = base();
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "b[i, j] = a[i - 1, j] + a[i + 1, j] {id=avg}"));
  CHECK_STATUS(fcl_kbuilder_stream_iname(kb, "zz", "a"), FCL_ERR_INVALID_ARGUMENT,
               "unknown iname 'zz'");
  CHECK_STATUS(fcl_kbuilder_stream_iname(kb, "i", "v"), FCL_ERR_INVALID_ARGUMENT,
               "no accesses of 'v' reuse each other along 'i'");
  CHECK_STATUS(fcl_kbuilder_stream_iname(kb, "i", "n"), FCL_ERR_INVALID_ARGUMENT,
               "'n' is not a global array");
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 16, "g.0", "l.0"));
  CHECK_STATUS(fcl_kbuilder_stream_iname(kb, "j", "a"), FCL_ERR_INVALID_ARGUMENT, "'j' was split");
  CHECK_STATUS(fcl_kbuilder_stream_iname(kb, "j_inner", "a"), FCL_ERR_INVALID_ARGUMENT,
               "'j_inner' is tagged l.0");
  CHECK_OK(fcl_kbuilder_assume(kb, "m mod 16 = 0")); /* one body: no remainder to unswitch */
  CHECK_OK(fcl_kbuilder_stream_iname(kb, "i", "a"));
  CHECK_STATUS(fcl_kbuilder_split_iname(kb, "i", 4, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
               "'i' carries registers");
  CHECK_STATUS(fcl_kbuilder_tag_inames(kb, "i:g.1"), FCL_ERR_INVALID_ARGUMENT,
               "'i' carries registers");
  /* a window of 3: a prologue of 2, one load per iteration, 2 rotations; the readers keep
   * no global load of a */
  char *src = NULL;
  CHECK_OK(fcl_kbuilder_generate(kb, &src));
  size_t loads = 0;
  for (const char *p = src; p && (p = strstr(p, "a[")); ++p) loads++;
  CHECKF(src && loads == 3 && strstr(src, "a_s0_0_rot") && strstr(src, "a_s0_1_rot") &&
             !strstr(src, "a_s0_2_rot"),
         "expected 3 loads of a and 2 rotations:\n%s", src ? src : "");
  free(src);
  fcl_kbuilder_destroy(&kb);

  kb = base(); /* written in the loop */
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "a[i, j] = 2 * a[i, j] {id=scale}"));
  CHECK_STATUS(fcl_kbuilder_stream_iname(kb, "i", "a"), FCL_ERR_INVALID_ARGUMENT, "insn 'scale'");
  fcl_kbuilder_destroy(&kb);

  kb = base(); /* prefetched */
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "b[i, j] = a[i - 1, j] + a[i + 1, j]"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 16, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "a", .sweep = "j_inner"}));
  CHECK_STATUS(fcl_kbuilder_stream_iname(kb, "i", "a"), FCL_ERR_INVALID_ARGUMENT,
               "stream or prefetch it, not both");
  fcl_kbuilder_destroy(&kb);
}

static void dependencies(void) {
  fcl_kbuilder *kb = base();
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "a[i, j] = b[i, j] + 1 {id=first, dep=second}\n"
                                             "b[i, j] = a[i, j] * 2 {id=second, dep=fir*}"));
  generate_fails(kb, "dependency cycle", "insn 'first'");
  CHECKF(fcl_test_contains(fcl_last_error(), "insn 'second'"), "%s", fcl_last_error());
  fcl_kbuilder_destroy(&kb);
  kb = base();
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "b[i, j] = a[i, j] {id=only, dep=nothing*}"));
  generate_fails(kb, "insn 'only'", "dep 'nothing*' matches no instruction");
  fcl_kbuilder_destroy(&kb);
}

static void parameters_and_prefetch(void) {
  fcl_kbuilder *kb = base();
  CHECK_OK(fcl_kbuilder_assume(kb, "n mod 16 = 0 and n >= 16"));
  CHECK_STATUS(fcl_kbuilder_fix_parameters(kb, "n=40"), FCL_ERR_INVALID_ARGUMENT,
               "n = 40 contradicts the assumptions");
  CHECK_STATUS(fcl_kbuilder_assume(kb, "n is large"), FCL_ERR_INVALID_ARGUMENT,
               "is not 'p mod k = 0' or 'p >= c'");
  CHECK_STATUS(fcl_kbuilder_fix_parameters(kb, "i=3"), FCL_ERR_INVALID_ARGUMENT,
               "'i' is not a parameter");
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "b[i, j] = a[i, j] + a[j, i]\nv[i] = a[i, 0]"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 16, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 16, "g.1", "l.1"));
  CHECK_STATUS(fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "b", .sweep = "i_inner"}),
               FCL_ERR_INVALID_ARGUMENT, "only read-only arrays");
  CHECK_STATUS(
      fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "a", .sweep = "i_inner, j_inner"}),
      FCL_ERR_INVALID_ARGUMENT, "not translates of each other");
  CHECK_STATUS(
      fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "a$near", .sweep = "i_inner, j_inner"}),
      FCL_ERR_INVALID_ARGUMENT, "no access 'a$near[...]'");
  CHECK_STATUS(
      fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "a$", .sweep = "i_inner, j_inner"}),
      FCL_ERR_INVALID_ARGUMENT, "name$tag");
  /* a field left out or out of range is named */
  CHECK_STATUS(fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.sweep = "i_inner"}),
               FCL_ERR_INVALID_ARGUMENT, "argument 2 (prefetch.array): must not be NULL");
  CHECK_STATUS(fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "v"}),
               FCL_ERR_INVALID_ARGUMENT, "argument 2 (prefetch.sweep): must not be NULL");
  CHECK_STATUS(
      fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "v", .sweep = "i_inner", .pad = 65}),
      FCL_ERR_INVALID_ARGUMENT, "argument 2 (prefetch.pad): must be in [0, 64]");
  CHECK_STATUS(fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "a", .sweep = "i_outer"}),
               FCL_ERR_INVALID_ARGUMENT, "sweep iname 'i_outer' needs a constant range");
  fcl_kbuilder_destroy(&kb);

  kb = base();
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "b[i, j] = a[i, j]"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 16, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 16, "g.1", "l.1"));
  CHECK_STATUS(fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "a", .sweep = "i_inner"}),
               FCL_ERR_INVALID_ARGUMENT, "depend on local iname 'j_inner', which is not swept");
  fcl_kbuilder_destroy(&kb);
}

/* Description, guards, work sizes. */
static void outputs(void) {
  fcl_kbuilder *kb = base();
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "b[i, j] = 2 * a[i, j] {id=twice}"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "j", 32, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_tag_inames(kb, "i:g.1"));
  char *text = NULL, *src = NULL;
  CHECK_OK(fcl_kbuilder_describe(kb, &text));
  CHECKF(text && strstr(text, "{ [i, j]: 0 <= i < n and 0 <= j < m }") &&
             strstr(text, "j_inner in [0, 32) l.0") && strstr(text, "i in [0, n) g.1") &&
             strstr(text, "twice: b[i, j] = 2 * a[i, j]") && strstr(text, "split_iname(j, 32"),
         "description:\n%s", text ? text : "");
  free(text);
  CHECK_OK(fcl_kbuilder_generate(kb, &src));
  CHECKF(src && strstr(src, "FCL_GROUP_SIZE(32, 1, 1)") &&
             strstr(src, "if ((j_outer * 32 + j_inner) < m)"),
         "expected a remainder guard:\n%s", src ? src : "");
  free(src);
  int64_t p[2] = {10, 100};
  cl_uint dim = 0;
  size_t g[3], l[3];
  CHECK_OK(fcl_kbuilder_work_size(kb, p, &dim, g, l));
  CHECKF(dim == 2 && g[0] == 4 * 32 && g[1] == 10 && l[0] == 32 && l[1] == 1,
         "work size %u (%zu, %zu) / (%zu, %zu)", dim, g[0], g[1], l[0], l[1]);
  /* divisibility removes the guard */
  CHECK_OK(fcl_kbuilder_assume(kb, "m mod 64 = 0"));
  CHECK_OK(fcl_kbuilder_generate(kb, &src));
  CHECKF(src && !strstr(src, "if ("), "guard left despite m mod 64 = 0:\n%s", src ? src : "");
  free(src);
  /* fixed parameters leave the arguments */
  CHECK_OK(fcl_kbuilder_fix_parameters(kb, "m=128"));
  CHECK(fcl_kbuilder_num_params(kb) == 1 && !strcmp(fcl_kbuilder_param_name(kb, 0), "n"));
  CHECK_OK(fcl_kbuilder_generate(kb, &src));
  CHECKF(src && !strstr(src, "const int m") && strstr(src, " * 128 + "),
         "m should be a constant:\n%s", src ? src : "");
  free(src);
  fcl_kbuilder_destroy(&kb);
}

/* The built kernel is a launcher whose parameters are the kernel arguments. */
static void launcher(const fcl_device_entry *device, void *user) {
  (void)user;
  fcl_context *ctx = NULL;
  fcl_queue *q = NULL;
  CHECK_OK(fcl_context_create(1, &device->device, &ctx));
  CHECK_OK(fcl_queue_create(ctx, device->device, 0, &q));
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("fill", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_scalar(kb, "value", FCL_FLOAT32));
  CHECK_OK(fcl_kbuilder_add_array(kb, "x", FCL_FLOAT32, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "x[i] = value + i"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 64, "g.0", "l.0"));
  fcl_launcher *l = NULL, *list = NULL;
  CHECK_OK(fcl_kbuilder_build(kb, ctx, NULL, q, &l));
  CHECK(l && fcl_launcher_num_params(l) == 3);
  const char *want[3] = {"n", "value", "x"};
  fcl_value_type types[3] = {FCL_TYPE_I32, FCL_TYPE_F32, FCL_TYPE_BUFFER};
  for (size_t i = 0; l && i < 3; ++i) {
    const char *name;
    fcl_value_type t;
    CHECK_OK(fcl_launcher_param(l, i, &name, &t));
    CHECKF(!strcmp(name, want[i]) && t == types[i], "parameter %zu: %s %s", i, name,
           fcl_value_type_name(t));
  }
  CHECK(fcl_launcher_global_size_configured(l));
  /* in a list, with sizes following n per call */
  CHECK_OK(fcl_launcher_create_list("fills", &list));
  CHECK_OK(fcl_launcher_list_push(list, l));
  enum { N = 300 };
  float host[N];
  for (int i = 0; i < N; ++i) host[i] = -1;
  fcl_mem *x = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof host, host, &x));
  fcl_param_set *ps = NULL;
  CHECK_OK(fcl_param_set_create(list, &ps));
  CHECK_OK(fcl_param_set_buffer(ps, "x", x));
  CHECK_OK(fcl_param_set_f32(ps, "value", 0.5f));
  CHECK_OK(fcl_param_set_i32(ps, "n", 0)); /* nothing to do: no launch, no error */
  CHECK_OK(fcl_launcher_call(list, q, ps, 0, NULL, NULL));
  CHECK_OK(fcl_param_set_i32(ps, "n", 100));
  CHECK_OK(fcl_launcher_call(list, q, ps, 0, NULL, NULL));
  CHECK_OK(fcl_param_set_i32(ps, "n", 250));
  CHECK_OK(fcl_param_set_f32(ps, "value", 1000.0f));
  CHECK_OK(fcl_launcher_call(list, q, ps, 0, NULL, NULL));
  CHECK_OK(fcl_mem_read(q, x, 0, sizeof host, host, FCL_BLOCKING, 0, NULL, NULL));
  int bad = 0;
  for (int i = 0; i < N; ++i) bad += host[i] != (i < 250 ? 1000.0f + (float)i : -1.0f);
  CHECKF(bad == 0, "%d wrong elements after calls with n = 0, 100, 250", bad);
  /* a buffer smaller than the array's shape for these sizes is refused before the launch, and
   * nothing is written */
  CHECK_OK(fcl_param_set_i32(ps, "n", N + 1));
  CHECK_OK(fcl_param_set_f32(ps, "value", 7.0f));
  CHECK_STATUS(fcl_launcher_call(list, q, ps, 0, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
               "array 'x' has 1200 bytes, its shape needs 1204");
  CHECK_OK(fcl_mem_read(q, x, 0, sizeof host, host, FCL_BLOCKING, 0, NULL, NULL));
  CHECK(host[0] == 1000.0f && host[N - 1] == -1.0f);
  CHECK_OK(fcl_param_set_i32(ps, "n", 250)); /* the same buffer, sizes that fit again */
  CHECK_OK(fcl_launcher_call(list, q, ps, 0, NULL, NULL));
  CHECK_OK(fcl_mem_read(q, x, 0, sizeof host, host, FCL_BLOCKING, 0, NULL, NULL));
  CHECK(host[0] == 7.0f && host[249] == 7.0f + 249 && host[N - 1] == -1.0f);
  fcl_param_set_destroy(&ps);
  fcl_launcher_destroy(&list);
  fcl_mem_release(&x);
  /* a function that is not OpenCL C's (nor a rule) is refused when added, not compiled */
  fcl_kbuilder *badk = NULL;
  CHECK_OK(fcl_kbuilder_copy(kb, &badk));
  CHECK_STATUS(fcl_kbuilder_add_instructions(badk, "x[i] = no_such_function(x[i])"),
               FCL_ERR_INVALID_ARGUMENT, "unknown function 'no_such_function'");
  /* a kernel the OpenCL compiler rejects (fma takes 3 arguments): the build error comes back
   * with the log */
  CHECK_OK(fcl_kbuilder_add_instructions(badk, "x[i] = fma(x[i])"));
  CHECK_STATUS(fcl_kbuilder_build(badk, ctx, NULL, q, &l), FCL_ERR_BUILD_FAILED,
               "generated: kernel 'fill'");
  CHECK(l == NULL);
  fcl_kbuilder_destroy(&badk);
  fcl_kbuilder_destroy(&kb);
  fcl_queue_release(&q);
  fcl_context_release(&ctx);
}

/* A global array of more than INT_MAX elements (constant or fixed extents) is indexed in long
 * (every index but the last cast, so that a constant outer index folded to a number leaves the
 * next one long): the products of int inames would overflow; smaller ones stay int. */
static bool indexes_in_long(const char *shape, const char *fixed, const char *instruction,
                            const char *wide) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("wide", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "a", FCL_FLOAT32, shape));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [k, j, i]: 0 <= k < 8 and 0 <= j < 8 and 0 <= i < 8 }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, instruction));
  if (fixed) CHECK_OK(fcl_kbuilder_fix_parameters(kb, fixed));
  char *src = NULL;
  CHECK_OK(fcl_kbuilder_generate(kb, &src));
  const bool in_long = src && strstr(src, wide);
  CHECKF(!src || in_long || !strstr(src, "(long)"), "'%s' not in: %s", wide, src);
  free(src);
  fcl_kbuilder_destroy(&kb);
  return in_long;
}

static void index_width(void) {
  const char *shift = "a[k + 1, j, i] = 2 * a[k, j, i]",
             *wide = "a[((long)(k + 1) * 1300 + (long)j)";
  CHECK(indexes_in_long("1300, 1300, 1300", NULL, shift, wide));
  CHECK(indexes_in_long("n, 1300, 1300", "n=1300", shift, wide));
  CHECK(!indexes_in_long("1030, 1030, 1030", NULL, shift, "(long)"));
  CHECK(!indexes_in_long("n, 1030, 1030", "n=1030", shift, "(long)"));
  /* a constant plane: 1299 * 1300 folds to a number, j keeps the sum long */
  CHECK(indexes_in_long("1300, 1300, 1300", NULL, "a[1299, j, i] = 2 * a[0, j, i]",
                        "a[(1688700 + (long)j) * 1300"));
}

int main(void) {
  declarations();
  instructions();
  tags();
  streams();
  dependencies();
  parameters_and_prefetch();
  outputs();
  index_width();
  int code = fcl_test_run_on_devices(launcher, NULL);
  return code ? code : fcl_test_exit_code();
}
