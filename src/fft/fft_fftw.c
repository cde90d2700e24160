/* The FFTW backend: FFTW with threads on the host for one rank, fftw-mpi with transposed
 * output across ranks. The field's interior is staged through host memory; the spectral slots
 * stay on the device, so the spectral operators are the same for every backend. Planning
 * effort follows FLOWCL_TUNE (none/estimate: FFTW_ESTIMATE, measure: FFTW_MEASURE, exhaustive:
 * FFTW_PATIENT); wisdom is kept in the cache directory. */
#include <fftw3-mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fft_impl.h"
#include "files.h"

#define R float
#define FX(name) fftwf_##name
#define P(name) single_##name
#include "fft_fftw_template.inc"
#undef R
#undef FX
#undef P

#define R double
#define FX(name) fftw_##name
#define P(name) double_##name
#include "fft_fftw_template.inc"
#undef R
#undef FX
#undef P

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* Threads first, then fftw-mpi (FFTW's documented order), for both precisions. */
static void init_fftw(void) {
  fftw_init_threads();
  fftwf_init_threads();
  fftw_mpi_init();
  fftwf_mpi_init();
}

/* Threads per rank: FLOWCL_FFTW_THREADS, else the node's processors shared by its ranks. */
static int thread_count(const fcl_topology *t) {
  const char *env = getenv("FLOWCL_FFTW_THREADS");
  if (env && atoi(env) > 0) return atoi(env);
  MPI_Comm node;
  int local = 1;
  if (MPI_Comm_split_type(t->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int n = (int)(cpus > 0 ? cpus : 1) / local;
  return n > 0 ? n : 1;
}

/* FFTW's planner flags from FLOWCL_TUNE (measure when unset). */
static fcl_status planner_flags(unsigned *flags) {
  fcl_tune_effort effort = FCL_TUNE_MEASURE;
  bool set;
  FCL_TRY(fcl_tune_effort_from_env(&effort, &set));
  *flags = effort <= FCL_TUNE_ESTIMATE  ? FFTW_ESTIMATE
           : effort == FCL_TUNE_MEASURE ? FFTW_MEASURE
                                        : FFTW_PATIENT;
  return FCL_OK;
}

bool fcl__fft_fftw_layout(const fcl_topology *topo, fcl_dtype dtype, fcl_fft_layout *layout) {
  pthread_once(&init_once, init_fftw);
  return dtype == FCL_FLOAT64 ? double_layout(topo, layout) : single_layout(topo, layout);
}

fcl_status fcl__fft_fftw_plan(fcl_fft *fft) {
  pthread_once(&init_once, init_fftw);
  const fcl_topology *t = fft->topo;
  int threads = thread_count(t);
  char dir[768] = "", wisdom[1024] = "";
  if (fcl_program_cache_dir(dir, sizeof dir) == FCL_OK && dir[0] && fcl__make_dirs(dir) == 0)
    snprintf(wisdom, sizeof wisdom, "%s/fftw%s-wisdom.txt", dir,
             fft->dtype == FCL_FLOAT64 ? "" : "f");
  fft->description = t->size > 1 ? "fftw-mpi" : "fftw";
  unsigned flags;
  FCL_TRY(planner_flags(&flags));
  if (fft->dtype == FCL_FLOAT64) {
    fftw_plan_with_nthreads(threads);
    return double_plan(fft, flags, wisdom);
  }
  fftwf_plan_with_nthreads(threads);
  return single_plan(fft, flags, wisdom);
}
