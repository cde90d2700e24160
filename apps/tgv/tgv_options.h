/* flowcl-tgv: the command line (what the run does) and its checks. */
#ifndef FLOWCL_TGV_OPTIONS_H
#define FLOWCL_TGV_OPTIONS_H

#include <flowcl/flowcl.h>

typedef enum { TGV_STRETCH_GRADIENT, TGV_STRETCH_CONSERVATIVE } tgv_stretching;
/* where the viscous term is integrated: exactly in the spectral pass, by explicit 4th-order
 * differences as an operator of its own, or in the conservative stretching's right side */
typedef enum { TGV_DIFFUSE_SPECTRAL, TGV_DIFFUSE_FD, TGV_DIFFUSE_STRETCHING } tgv_diffusion;

typedef struct {
  int64_t resolution; /* points per axis (per period along z) */
  int pencils;        /* ranks along y of a 1 x P1 x P2 grid (0: slabs where they fit) */
  int z_periods;      /* the box repeats the flow along z this many times (weak scaling) */
  double reynolds, t_end;
  int64_t max_steps; /* 0: until t_end */
  fcl_dtype dtype;
  fcl_remesh_formula formula;
  fcl_splitting splitting;
  int advection_rk, stretching_rk;
  tgv_stretching stretching;
  bool lie;                /* first-order splitting (else: the second-order one) */
  bool separate_spectral;  /* diffusion and Biot-Savart as two passes (else one, fused) */
  tgv_diffusion diffusion; /* not spectral: the spectral pass is Biot-Savart alone */
  double cfl, lcfl, dt_max;
  double dt_fixed;    /* > 0: this dt every step, no measure (else adaptive) */
  const char *device; /* NULL: FLOWCL_DEVICE, else the first GPU, else PoCL */
  fcl_fft_backend fft;
  const char *output_dir;
  double snapshot_every;     /* time between HDF5 snapshots (0: none) */
  int64_t checkpoint_every;  /* steps between checkpoints (0: none) */
  const char *restart;       /* checkpoint file, or "latest" in output_dir (NULL: none) */
  int64_t diagnostics_every; /* steps between diagnostics rows */
  bool benchmark;            /* time the steps and operators; no files but the JSON */
  const char *json;          /* benchmark results (NULL: none) */
  bool plot;                 /* draw the PNG at the end */
  bool quiet;                /* no progress line */
  bool overwrite;            /* replace an earlier run's outputs in output_dir */
} tgv_options;

/* "spectral", "fd" or "stretching". */
const char *tgv_diffusion_name(tgv_diffusion d);

/* Defaults, then the command line. Returns 0 to run, 1 after --help, 2 on an error (the
 * message, naming the option, on stderr of rank 0). */
int tgv_options_parse(int argc, char **argv, int rank, tgv_options *o);

#endif
