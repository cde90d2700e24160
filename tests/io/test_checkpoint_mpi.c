/* Checkpoint and restart on 1, 2 or 4 ranks (under mpirun): N steps straight equal N/2 steps,
 * a checkpoint, a restart into fresh fields and N/2 more, bit for bit; a restart on half the
 * ranks continues identically; the state comes back; rotation keeps the newest K; a write that
 * fails half-way leaves the previous checkpoint valid and no temporary file; a flipped byte is
 * reported as corruption (by the file's seal, and behind it by the data's and the state's
 * checksums); a damaged seal, a truncated file, a file without seal are refused; a plain HDF5
 * file (as h5py writes) reads into any decomposition. The step is a ghost exchange and a
 * generated 7-point update, the same operations per point on any decomposition. */
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fcl_test_mpi.h"
#include "check.h"
#include "io_impl.h"
#include "flowcl/opencl.h"

enum { STEPS = 6 };

static int rank_, size_;

typedef fcl_test_mpi_env env;

typedef struct {
  fcl_topology *topo;
  fcl_field *u, *tmp;
  fcl_launcher *update;
  fcl_param_set *ps;
} run;

/* Write value into the file's "time" attribute; the old value. */
static double swap_time(const char *path, double value) {
  double was = 0;
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), a = H5Aopen(f, "time", H5P_DEFAULT);
  CHECK(a >= 0 && H5Aread(a, H5T_NATIVE_DOUBLE, &was) >= 0 &&
        H5Awrite(a, H5T_NATIVE_DOUBLE, &value) >= 0);
  H5Aclose(a);
  H5Fclose(f);
  return was;
}

static void init_wave(void *user, const double *x, double *v) {
  (void)user;
  v[0] = sin(x[0]) * cos(2 * x[1]) + 0.5 * sin(3 * x[2]);
}

static void run_open(env *e, run *r, MPI_Comm comm, fcl_dtype dt) {
  fcl_domain d = fcl_domain_periodic(3, 0, 6.283185307179586);
  d.resolution[0] = 12, d.resolution[1] = 10, d.resolution[2] = 9;
  memset(r, 0, sizeof *r);
  CHECK_OK(fcl_topology_create(comm, &d, NULL, (int[]){1, 1, 1}, &r->topo));
  CHECK_OK(fcl_field_create(r->topo, e->ctx, e->q, e->pool, "u", 1, dt, &r->u));
  CHECK_OK(fcl_field_create(r->topo, e->ctx, e->q, e->pool, "tmp", 1, dt, &r->tmp));
  if (fcl_test_failures) return;
  const size_t *p = fcl_field_padded_shape(r->u);
  const int64_t *n = fcl_topology_local_resolution(r->topo);
  char text[512];
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("heat_step", &kb));
  snprintf(text, sizeof text, "%zu, %zu, %zu", p[2], p[1], p[0]);
  CHECK_OK(fcl_kbuilder_add_array(kb, "u", dt, text));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out", dt, text));
  snprintf(text, sizeof text, "{ [k, j, i]: 1 <= k < %lld and 1 <= j < %lld and 1 <= i < %lld }",
           (long long)n[2] + 1, (long long)n[1] + 1, (long long)n[0] + 1);
  CHECK_OK(fcl_kbuilder_add_domain(kb, text));
  CHECK_OK(fcl_kbuilder_add_instructions(
      kb, "out[k, j, i] = u[k, j, i] + 0.1 * (u[k, j, i - 1] "
          "+ u[k, j, i + 1] + u[k, j - 1, i] + u[k, j + 1, i] + u[k - 1, j, i] + u[k + 1, j, i] "
          "- 6 * u[k, j, i])"));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 16, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_tag_inames(kb, "j:g.1, k:g.2"));
  CHECK_OK(fcl_kbuilder_build(kb, e->ctx, NULL, e->q, &r->update));
  CHECK_OK(fcl_param_set_create(r->update, &r->ps));
  CHECK_OK(fcl_param_set_buffer(r->ps, "u", fcl_field_buffer(r->u, 0)));
  CHECK_OK(fcl_param_set_buffer(r->ps, "out", fcl_field_buffer(r->tmp, 0)));
  fcl_kbuilder_destroy(&kb);
}

static void run_close(run *r) {
  fcl_param_set_destroy(&r->ps);
  fcl_launcher_destroy(&r->update);
  fcl_field_destroy(&r->u);
  fcl_field_destroy(&r->tmp);
  fcl_topology_destroy(&r->topo);
}

static uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Seal path again after a change, as the documented format says (src/io/seal.c: the sum of
 * mix(w_i ^ i * golden) over the 8-byte words after the 512-byte header, plus mix(length)), so
 * that the checks behind the seal can be reached. */
static void reseal(const char *path) {
  FILE *f = fopen(path, "r+b");
  CHECK(f != NULL);
  if (!f) return;
  fseek(f, 0, SEEK_END);
  uint64_t size = (uint64_t)ftell(f), sum = 0, w = 0;
  fseek(f, 512, SEEK_SET);
  unsigned char word[8];
  size_t got;
  while (memset(word, 0, 8), (got = fread(word, 1, 8, f)) > 0) {
    uint64_t v;
    memcpy(&v, word, 8);
    sum += mix(v ^ w++ * 0x9e3779b97f4a7c15ull);
  }
  char header[512] = {0};
  snprintf(header, sizeof header, "flowcl-seal 1\nlength %llu\ndigest %016llx\n",
           (unsigned long long)size, (unsigned long long)(sum + mix(size)));
  fseek(f, 0, SEEK_SET);
  CHECK(fwrite(header, 1, sizeof header, f) == sizeof header);
  fclose(f);
}

/* Replace n bytes at offset of path; the old bytes in old (may be NULL). */
static void poke(const char *path, long offset, const void *bytes, size_t n, void *old) {
  FILE *f = fopen(path, "r+b");
  CHECK(f != NULL);
  if (!f) return;
  fseek(f, offset, SEEK_SET);
  if (old) CHECK(fread(old, 1, n, f) == n);
  fseek(f, offset, SEEK_SET);
  CHECK(fwrite(bytes, 1, n, f) == n);
  fclose(f);
}

static void expect_corrupt(env *e, run *r, fcl_dtype dt, const char *path, const char *why) {
  fcl_checkpoint_state got;
  MPI_Barrier(MPI_COMM_WORLD);
  run_open(e, r, MPI_COMM_WORLD, dt);
  CHECK_STATUS(fcl_checkpoint_read(path, 1, &r->u, &got), FCL_ERR_CORRUPT, why);
  run_close(r);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void steps(env *e, run *r, int count) {
  size_t bytes = fcl_field_padded_shape(r->u)[0] * fcl_field_padded_shape(r->u)[1] *
                 fcl_field_padded_shape(r->u)[2] * fcl_dtype_size(fcl_field_dtype(r->u));
  for (int s = 0; s < count && !fcl_test_failures; ++s) {
    CHECK_OK(fcl_field_ghosts_update(r->u));
    CHECK_OK(fcl_launcher_call(r->update, e->q, r->ps, 0, NULL, NULL));
    CHECK(clEnqueueCopyBuffer(fcl_queue_cl(e->q), fcl_mem_cl(fcl_field_buffer(r->tmp, 0)),
                              fcl_mem_cl(fcl_field_buffer(r->u, 0)), 0, 0, bytes, 0, NULL,
                              NULL) == CL_SUCCESS);
  }
  clFinish(fcl_queue_cl(e->q));
}

static void *interior(run *r) {
  const int64_t *n = fcl_topology_local_resolution(r->topo);
  void *h = malloc((size_t)(n[0] * n[1] * n[2]) * fcl_dtype_size(fcl_field_dtype(r->u)));
  CHECK_OK(fcl_field_read(r->u, 0, false, h));
  return h;
}

static size_t interior_bytes(run *r) {
  const int64_t *n = fcl_topology_local_resolution(r->topo);
  return (size_t)(n[0] * n[1] * n[2]) * fcl_dtype_size(fcl_field_dtype(r->u));
}

static fcl_checkpoint_state state_at(int64_t step) {
  fcl_checkpoint_state s = {.time = 0.01 * (double)step, .dt = 0.01, .step = step, .nparams = 2};
  snprintf(s.names[0], sizeof s.names[0], "reynolds");
  snprintf(s.names[1], sizeof s.names[1], "cfl");
  s.values[0] = 1600, s.values[1] = 0.5;
  return s;
}

static void restart_cases(env *e, fcl_dtype dt) {
  run straight, first, second;
  run_open(e, &straight, MPI_COMM_WORLD, dt);
  if (fcl_test_failures) return;
  CHECK_OK(fcl_field_init(straight.u, init_wave, NULL));
  steps(e, &straight, STEPS);
  void *want = interior(&straight);
  /* half, checkpoint (three, keeping two), fresh fields, restart, the other half */
  run_open(e, &first, MPI_COMM_WORLD, dt);
  CHECK_OK(fcl_field_init(first.u, init_wave, NULL));
  /* temporary files that killed writers left: this name's go with the next write, others stay */
  char stale[1100], foreign[1100];
  snprintf(stale, sizeof stale, "%s/run_000000007.chk.h5.tmp", e->dir);
  snprintf(foreign, sizeof foreign, "%s/other_000000007.chk.h5.tmp", e->dir);
  if (rank_ == 0) {
    FILE *f1 = fopen(stale, "w"), *f2 = fopen(foreign, "w");
    CHECK(f1 && f2);
    if (f1) fclose(f1);
    if (f2) fclose(f2);
  }
  char path[1024] = "";
  for (int s = 1; s <= STEPS / 2; ++s) {
    steps(e, &first, 1);
    fcl_checkpoint_state st = state_at(s);
    CHECK_OK(fcl_checkpoint_write(e->dir, "run", 2, 1, &first.u, &st, path, sizeof path));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank_ == 0) {
    CHECKF(access(stale, F_OK) != 0, "%s was left", stale);
    CHECKF(access(foreign, F_OK) == 0, "%s (another name) was removed", foreign);
    remove(foreign);
    CHECKF(fcl_test_count_files(e->dir, ".chk.h5") == 2, "%d checkpoints kept, expected 2",
           fcl_test_count_files(e->dir, ".chk.h5"));
  }
  /* a write failing half-way (the second field's dataset cannot be created) */
  fcl_field *bad = NULL;
  CHECK_OK(fcl_field_create(first.topo, e->ctx, e->q, e->pool, "no/such/group", 1, dt, &bad));
  fcl_field *both[2] = {first.u, bad};
  fcl_checkpoint_state later = state_at(99);
  CHECK_STATUS(fcl_checkpoint_write(e->dir, "run", 2, 2, both, &later, NULL, 0), FCL_ERR_HDF5,
               "no/such/group");
  fcl_field_destroy(&bad);
  MPI_Barrier(MPI_COMM_WORLD);
  char latest[1024] = "";
  CHECK_OK(fcl_checkpoint_latest(e->dir, "run", latest, sizeof latest));
  CHECKF(!strcmp(latest, path), "latest checkpoint is %s, expected %s", latest, path);
  if (rank_ == 0) CHECKF(fcl_test_count_files(e->dir, ".tmp") == 0, "a temporary file was left");
  run_close(&first);

  run_open(e, &second, MPI_COMM_WORLD, dt);
  fcl_checkpoint_state got = {0};
  { /* the newest one read leaves no error behind (a later failure's message is its own) */
    char read[1024] = "";
    fcl_clear_error();
    CHECK_OK(fcl_checkpoint_read_latest(e->dir, "run", 1, &second.u, &got, read, sizeof read));
    CHECKF(!strcmp(read, path) && !*fcl_last_error(),
           "read_latest read %s (expected %s) and left the error \"%s\"", read, path,
           fcl_last_error());
  }
  CHECK_OK(fcl_checkpoint_read(latest, 1, &second.u, &got));
  CHECKF(got.step == STEPS / 2 && got.time == 0.01 * (STEPS / 2) && got.dt == 0.01 &&
             got.nparams == 2 && !strcmp(got.names[0], "cfl") && got.values[0] == 0.5 &&
             !strcmp(got.names[1], "reynolds") && got.values[1] == 1600,
         "restored state: step %lld time %g dt %g, %zu parameters", (long long)got.step, got.time,
         got.dt, got.nparams);
  steps(e, &second, STEPS - (int)got.step);
  void *have = interior(&second);
  CHECKF(!memcmp(have, want, interior_bytes(&second)),
         "%s: restarted run differs from the straight run (rank %d of %d)", fcl_dtype_cl_name(dt),
         rank_, size_);
  free(have);
  run_close(&second);

  /* the same checkpoint on half the ranks: equal to a straight run on those ranks */
  if (size_ > 1) {
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank_ < size_ / 2, rank_, &half);
    if (rank_ < size_ / 2) {
      run ref, re;
      run_open(e, &ref, half, dt);
      CHECK_OK(fcl_field_init(ref.u, init_wave, NULL));
      steps(e, &ref, STEPS);
      void *w2 = interior(&ref);
      run_open(e, &re, half, dt);
      CHECK_OK(fcl_checkpoint_read(latest, 1, &re.u, &got));
      steps(e, &re, STEPS - (int)got.step);
      void *h2 = interior(&re);
      CHECKF(!memcmp(h2, w2, interior_bytes(&re)), "%s: restart on %d of %d ranks differs",
             fcl_dtype_cl_name(dt), size_ / 2, size_);
      free(h2);
      free(w2);
      run_close(&re);
      run_close(&ref);
    }
    MPI_Comm_free(&half);
  }
  /* a changed state attribute (it was read silently: time 0.5 -> 7.6e-6) is refused by the
   * seal, and by the state's checksum when the file is sealed again */
  double time_was = 0;
  if (rank_ == 0) time_was = swap_time(latest, 7.6e-6);
  expect_corrupt(e, &second, dt, latest, "does not match its seal");
  if (rank_ == 0) reseal(latest);
  expect_corrupt(e, &second, dt, latest, "does not match its checksum");
  if (rank_ == 0) { /* put it back */
    swap_time(latest, time_was);
    reseal(latest);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  run_open(e, &second, MPI_COMM_WORLD, dt);
  CHECK_OK(fcl_checkpoint_read(latest, 1, &second.u, &got));
  run_close(&second);
  /* a flipped bit in the data: the seal, then the data's checksum */
  long offset = 0;
  if (rank_ == 0) {
    hid_t f = H5Fopen(latest, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "u", H5P_DEFAULT);
    haddr_t at = H5Dget_offset(d); /* in the file: the user block included */
    H5Dclose(d);
    H5Fclose(f);
    CHECK(at != HADDR_UNDEF);
    offset = (long)at + 17;
    unsigned char c = 0;
    poke(latest, offset, "\0", 1, &c);
    c ^= 0x10;
    poke(latest, offset, &c, 1, NULL);
  }
  expect_corrupt(e, &second, dt, latest, "does not match its seal");
  if (rank_ == 0) reseal(latest);
  expect_corrupt(e, &second, dt, latest, "does not match its checksum");
  /* a damaged seal, a truncated file, a file with no seal */
  if (rank_ == 0) { /* the first digit of the length ("flowcl-seal 1\nlength ...") */
    char digit = 0;
    poke(latest, 21, "1", 1, &digit);
    if (digit == '1') poke(latest, 21, "2", 1, NULL);
  }
  expect_corrupt(e, &second, dt, latest, "truncated or appended to");
  if (rank_ == 0) {
    reseal(latest);
    CHECK(truncate(latest, offset) == 0);
  }
  expect_corrupt(e, &second, dt, latest, "sealed at");
  if (rank_ == 0) poke(latest, 0, "hdf5", 4, NULL);
  expect_corrupt(e, &second, dt, latest, "carries no flowcl seal");
  run_close(&straight);
  free(want);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank_ == 0) { /* clean for the next precision */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -f '%s'/run_*.chk.h5", e->dir);
    CHECK(system(cmd) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* A file written by another program (plain HDF5, as h5py writes it: no flowcl attributes, no
 * checksum) reads into a field of any decomposition. */
static void foreign_file(env *e) {
  char path[1024];
  snprintf(path, sizeof path, "%s/foreign.h5", e->dir);
  enum { NX = 7, NY = 6, NZ = 5 };
  if (rank_ == 0) {
    static double v[NZ][NY][NX];
    for (int k = 0; k < NZ; ++k)
      for (int j = 0; j < NY; ++j)
        for (int i = 0; i < NX; ++i) v[k][j][i] = i + 10 * j + 100 * k + 0.5;
    hsize_t dims[3] = {NZ, NY, NX};
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t sp = H5Screate_simple(3, dims, NULL);
    hid_t d = H5Dcreate2(f, "density", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  fcl_domain dom = fcl_domain_periodic(3, 0, 1.0);
  dom.resolution[0] = NX, dom.resolution[1] = NY, dom.resolution[2] = NZ;
  fcl_topology *t = NULL;
  fcl_field *rho = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &dom, NULL, (int[]){1, 1, 1}, &t));
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "rho", 1, FCL_FLOAT64, &rho));
  if (!rho) return;
  CHECK_OK(fcl_io_read(path, "density", rho, 0));
  const int64_t *n = fcl_topology_local_resolution(t), *o = fcl_topology_offset(t);
  double *h = malloc((size_t)(n[0] * n[1] * n[2]) * sizeof *h);
  CHECK_OK(fcl_field_read(rho, 0, false, h));
  size_t wrong = 0;
  for (int64_t k = 0; k < n[2]; ++k)
    for (int64_t j = 0; j < n[1]; ++j)
      for (int64_t i = 0; i < n[0]; ++i)
        if (h[(k * n[1] + j) * n[0] + i] != (o[0] + i) + 10 * (o[1] + j) + 100 * (o[2] + k) + 0.5)
          wrong++;
  CHECKF(!wrong, "plain HDF5 file read into rank %d of %d: %zu wrong values", rank_, size_, wrong);
  free(h);
  fcl_field_destroy(&rho);
  fcl_topology_destroy(&t);
}

/* Ranks that fail differently return one status (the lowest): read_latest branches on it, and
 * ranks that branched apart would hang in each other's collectives. */
static void agree_case(env *e) {
  (void)e;
  const fcl_status mine = rank_ == 0 ? FCL_ERR_IO : rank_ == 1 ? FCL_ERR_CORRUPT : FCL_OK;
  const fcl_status want = size_ > 1 ? FCL_ERR_CORRUPT : FCL_ERR_IO; /* -10 < -9 */
  if (mine != FCL_OK) (void)FCL_ERROR(mine, "planted on rank %d", rank_);
  const fcl_status got = fcl__io_agree(MPI_COMM_WORLD, mine);
  CHECKF(got == want, "rank %d of %d: fcl__io_agree gave %s, expected %s", rank_, size_,
         fcl_status_name(got), fcl_status_name(want));
  if (rank_ == 0 && size_ > 1)
    CHECKF(strstr(fcl_last_error(), "planted on rank 0") != NULL, "rank 0 lost its own message: %s",
           fcl_last_error());
  fcl_clear_error();
}

static bool any_rank_failed(void) {
  int failed = fcl_test_failures, any = failed;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}

static void run_all(env *e) {
  rank_ = e->rank, size_ = e->size;
  /* the cases are collective: after a failure on any rank, every rank stops */
  agree_case(e);
  if (!any_rank_failed()) restart_cases(e, FCL_FLOAT32);
  if (!e->fp64)
    fcl_test_skip_part(NULL, "the double restarts and the foreign file (no cl_khr_fp64)");
  if (e->fp64 && !any_rank_failed()) restart_cases(e, FCL_FLOAT64);
  if (e->fp64 && !any_rank_failed()) foreign_file(e);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, "checkpoint", run_all); }
