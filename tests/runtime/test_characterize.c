/* Device characterization and the bank-conflict analysis (against hand-derived counts for a
 * GPU with 32 banks of 4 bytes, the classic shared-memory transpose case). */
#include <string.h>

#include "fcl_test.h"

static void check_device(const fcl_device_entry *e, void *user) {
  (void)user;
  fcl_device_characterization c;
  fcl_device_info d;
  CHECK_OK(fcl_device_characterize(e->device, &c));
  CHECK_OK(fcl_device_get_info(e->device, &d));
  CHECK(c.simd_group_size >= 1);
  CHECK(c.usable_local_mem_size > 0 && c.usable_local_mem_size <= d.local_mem_size);
  CHECK(c.double_support ==
        (fcl_device_has_extension(&d, "cl_khr_fp64") || d.double_fp_config != 0 ||
         fcl_device_has_extension(&d, "cl_amd_fp64")));
  CHECK(fcl_test_contains(c.fast_inaccurate_options, "-cl-fast-relaxed-math"));
  if (d.type & FCL_DEVICE_CPU) {
    unsigned lanes8 = 0;
    CHECK(c.simd_group_size == d.native_vector_width[4]); /* float lanes */
    CHECK_OK(fcl_device_simd_group_size(e->device, 8, &lanes8));
    CHECK(lanes8 == d.native_vector_width[5]);
  }
  if (strstr(d.vendor, "NVIDIA")) {
    CHECK(c.simd_group_size == 32 && c.nv_compute_capability_major >= 2);
    CHECK(c.local_mem_bank_count == 32);
  } else {
    CHECK(c.nv_compute_capability_major == -1);
  }
  /* dedicated local memory has banks (a power of two); global-backed local memory has none */
  if (d.local_mem_dedicated)
    CHECK(c.local_mem_bank_count > 0 &&
          (c.local_mem_bank_count & (c.local_mem_bank_count - 1)) == 0);
  else
    CHECK(c.local_mem_bank_count == 0);
  unsigned out = 0;
  CHECK_STATUS(fcl_device_simd_group_size(e->device, 3, &out), FCL_ERR_INVALID_ARGUMENT,
               "type_size");
  /* Fast options are accepted by the compiler. */
  fcl_context *ctx = NULL;
  fcl_program *p = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  CHECK_OK(fcl_program_create_builtin(ctx, "selfcheck.cl", &p));
  CHECK_OK(fcl_program_build(p, c.fast_inaccurate_options));
  fcl_program_release(&p);
  fcl_context_release(&ctx);
}

static void check_bank_conflicts(void) {
  fcl_device_characterization gpu = {.simd_group_size = 32,
                                     .local_mem_bank_count = 32,
                                     .local_mem_access_granularity = 4,
                                     .simultaneous_local_access = 32};
  unsigned m = 0;
  char why[512];
  size_t shape[2] = {32, 32}, padded[2] = {32, 33};
  /* Work-items down a column of a 32x32 float tile: stride 128 bytes = 32 words, all bank 0. */
  CHECK_OK(fcl_local_access_conflicts(&gpu, 4, 2, shape, NULL, &m, why, sizeof why));
  CHECKF(m == 32, "expected 32-way, got %u (%s)", m, why);
  CHECK(fcl_test_contains(why, "axis 0") && fcl_test_contains(why, "stride 128 bytes"));
  /* One word of padding per row makes the column walk hit 32 different banks. */
  CHECK_OK(fcl_local_access_conflicts(&gpu, 4, 2, shape, padded, &m, why, sizeof why));
  CHECKF(m == 1, "expected conflict free, got %u (%s)", m, why);
  CHECK(fcl_test_contains(why, "conflict free"));
  /* Doubles along a row: 32 items x 2 words = 64 words on 32 banks -> 2 per bank. */
  size_t row[1] = {32};
  CHECK_OK(fcl_local_access_conflicts(&gpu, 8, 1, row, NULL, &m, why, sizeof why));
  CHECK(m == 2);
  /* Stride of 2 floats: banks 0,2,..,30 each hit twice. */
  size_t strided[2] = {32, 2};
  CHECK_OK(fcl_local_access_conflicts(&gpu, 4, 2, strided, NULL, &m, why, sizeof why));
  CHECK(m == 2);
  /* Short axis (4 items) with 32-word stride: 4-way. */
  size_t small[2] = {4, 32};
  CHECK_OK(fcl_local_access_conflicts(&gpu, 4, 2, small, NULL, &m, why, sizeof why));
  CHECK(m == 4);
  /* Unbanked local memory is always conflict free; bad shapes are refused. */
  fcl_device_characterization cpu = gpu;
  cpu.local_mem_bank_count = 0;
  CHECK_OK(fcl_local_access_conflicts(&cpu, 4, 2, shape, NULL, &m, why, sizeof why));
  CHECK(m == 1 && fcl_test_contains(why, "not banked"));
  size_t too_small[2] = {32, 16};
  CHECK_STATUS(fcl_local_access_conflicts(&gpu, 4, 2, shape, too_small, &m, why, sizeof why),
               FCL_ERR_INVALID_ARGUMENT, "stored_shape");
}

int main(void) {
  check_bank_conflicts();
  return fcl_test_run_on_devices(check_device, NULL);
}
