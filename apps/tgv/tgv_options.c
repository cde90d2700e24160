/* flowcl-tgv command line. */
#include "tgv_options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: flowcl-tgv [options]\n"
    "Taylor-Green vortex in [0, 2 pi)^3 by the remeshed vortex method (spectral Biot-Savart,\n"
    "stretching by 4th-order differences, remeshed advection, spectral diffusion), adaptive dt.\n"
    "\n"
    "  --resolution N        points per axis (default 64)\n"
    "  --z-periods K         a box of K periods along z (K x resolution points): the same\n"
    "                        flow, K times the work, for weak scaling (default 1)\n"
    "  --pencils P1          pencil decomposition: ranks in a 1 x P1 x (ranks / P1) grid, y\n"
    "                        and z split (default 0: slabs along z where every rank gets at\n"
    "                        least the advection's ghost planes, else pencils chosen by MPI)\n"
    "  --reynolds RE         Reynolds number, nu = 1 / RE (default 1600)\n"
    "  --t-end T             end time (default 20)\n"
    "  --max-steps N         stop at step N even before t-end; a restart stops at the same\n"
    "                        step (default: no limit)\n"
    "  --precision P         float or double (default float)\n"
    "  --formula F           remeshing kernel: L2_1 (M'4), L2_2, L4_2, L6_4, L8_4 (default L4_2)\n"
    "  --splitting S         directions of advection: alternating (X Y Z, then Z Y X: second\n"
    "                        order over a pair of steps, 3 substeps), strang (X/2 Y/2 Z Y/2\n"
    "                        X/2: 5 substeps) or first (X Y Z) (default alternating)\n"
    "  --time-splitting T    operators of a step: strang (velocity extrapolated to mid-step,\n"
    "                        stretching in two halves around advection) or lie (u^n, one\n"
    "                        after the other: first order) (default strang)\n"
    "  --spectral-pass P     fused (diffusion and Biot-Savart share the forward transforms\n"
    "                        of the vorticity: 9 FFTs) or separate (two passes: 12 FFTs)\n"
    "                        (default fused)\n"
    "  --diffusion D         spectral (exact, in the spectral pass), fd (explicit, 4th-order\n"
    "                        differences, a pass of its own) or stretching (the same\n"
    "                        differences in the conservative stretching's stages: no pass,\n"
    "                        no byte more); not spectral, the spectral pass is Biot-Savart\n"
    "                        alone: 6 FFTs, and 6 all-to-alls instead of 9 on several ranks\n"
    "                        (default spectral)\n"
    "  --advection-rk R      particle push: 2, 3 or 4 (default 2)\n"
    "  --stretching F        conservative or gradient (default conservative: the gradient\n"
    "                        form lets the vorticity drift from divergence-free and diverges\n"
    "                        on coarse grids)\n"
    "  --stretching-rk R     2 or 3 (default 2)\n"
    "  --cfl C               dt max|u_d| / dx <= C (default 1; advection is built for it)\n"
    "  --lcfl L              dt max|grad u| <= L (default 0.125)\n"
    "  --dt-max D            largest dt (default 0.02)\n"
    "  --dt D                a fixed dt: no dt measure; the advection checks its CFL bound\n"
    "                        without waiting for the device, some steps late\n"
    "  --device SPEC         device, platform:device; 'cuda' or 'cuda:N' for the CUDA\n"
    "                        backend (default FLOWCL_DEVICE, else OpenCL's first GPU, else\n"
    "                        the first device)\n"
    "  --fft B               auto, vkfft or fftw (default auto)\n"
    "  --output DIR          output directory, created with its parents (default\n"
    "                        tgv-output)\n"
    "  --snapshot-every T    HDF5/XDMF snapshot of the vorticity every T time units (default 0:\n"
    "                        none)\n"
    "  --checkpoint-every N  checkpoint every N steps (default 0: none; the last two are kept)\n"
    "  --restart FILE        continue from a checkpoint file, or 'latest' in the output dir\n"
    "  --diagnostics-every N diagnostics row every N steps (default 1)\n"
    "  --benchmark           time the steps and the operators against the copy bandwidth;\n"
    "                        writes no files but --json\n"
    "  --json FILE           benchmark results as JSON\n"
    "  --no-plot             do not draw the PNG at the end\n"
    "  --quiet               no progress line\n"
    "  --overwrite           replace the outputs of an earlier run in the output directory\n"
    "                        (without it, such a directory is refused: its checkpoints\n"
    "                        would mix with this run's)\n"
    "  --help                this text\n"
    "\n"
    "Writes OUTPUT/diagnostics.csv, a row per diagnostics step: step, t, dt, energy\n"
    "(<|u|^2>/2), enstrophy (<|w|^2>/2), t_mid and dissipation_dEdt_pair (-dE/dt from the\n"
    "energies of this row and the row two before, at the middle of their times: two\n"
    "intervals, a pair of steps by default, a whole period of the alternating directions,\n"
    "whose two orders lose energy differently; nan on the first two rows),\n"
    "dissipation_2nu_enstrophy, max_vorticity (max|w|) and divergence_rms;\n"
    "OUTPUT/report.txt (per-operator statistics), snapshots, checkpoints and OUTPUT/tgv.png\n"
    "(dissipation and enstrophy against the 512^3 DNS of Dairay et al. 2017, below 512^3 marked\n"
    "under-resolved; needs python3-matplotlib, else gnuplot; skipped without them).\n";

static int fail(int rank, const char *format, const char *a, const char *b) {
  if (rank == 0) {
    fprintf(stderr, "flowcl-tgv: ");
    fprintf(stderr, format, a, b);
    fprintf(stderr, "\n(flowcl-tgv --help lists the options)\n");
  }
  return 2;
}

static bool number(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return *s && !*end && !errno;
}

static bool integer(const char *s, int64_t *v) {
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  *v = x;
  return *s && !*end && !errno;
}

int tgv_options_parse(int argc, char **argv, int rank, tgv_options *o) {
  *o = (tgv_options){.resolution = 64,
                     .z_periods = 1,
                     .reynolds = 1600,
                     .t_end = 20,
                     .dtype = FCL_FLOAT32,
                     .formula = FCL_REMESH_L4_2,
                     .splitting = FCL_SPLIT_ALTERNATING,
                     .advection_rk = 2,
                     .stretching_rk = 2,
                     .stretching = TGV_STRETCH_CONSERVATIVE,
                     .cfl = 1,
                     .lcfl = 0.125,
                     .dt_max = 0.02,
                     .fft = FCL_FFT_AUTO,
                     .output_dir = "tgv-output",
                     .diagnostics_every = 1,
                     .plot = true};
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "--help")) {
      if (rank == 0) fputs(usage, stdout);
      return 1;
    }
    if (!strcmp(a, "--benchmark")) {
      o->benchmark = true;
      continue;
    }
    if (!strcmp(a, "--no-plot")) {
      o->plot = false;
      continue;
    }
    if (!strcmp(a, "--quiet")) {
      o->quiet = true;
      continue;
    }
    if (!strcmp(a, "--overwrite")) {
      o->overwrite = true;
      continue;
    }
    if (strncmp(a, "--", 2)) return fail(rank, "unexpected argument '%s'%s", a, "");
    if (i + 1 >= argc) return fail(rank, "option %s needs a value%s", a, "");
    const char *v = argv[++i];
    double d;
    int64_t n;
    if (!strcmp(a, "--resolution")) {
      if (!integer(v, &n) || n < 8 || n > 65536)
        return fail(rank, "--resolution %s: an integer from 8 to 65536%s", v, "");
      o->resolution = n;
    } else if (!strcmp(a, "--z-periods")) {
      if (!integer(v, &n) || n < 1 || n > 64)
        return fail(rank, "--z-periods %s: an integer from 1 to 64%s", v, "");
      o->z_periods = (int)n;
    } else if (!strcmp(a, "--pencils")) {
      if (!integer(v, &n) || n < 0 || n > 65536)
        return fail(rank, "--pencils %s: ranks along y, an integer from 0 (automatic) up%s", v, "");
      o->pencils = (int)n;
    } else if (!strcmp(a, "--reynolds")) {
      if (!number(v, &d) || !(d > 0)) return fail(rank, "--reynolds %s: a number > 0%s", v, "");
      o->reynolds = d;
    } else if (!strcmp(a, "--t-end")) {
      if (!number(v, &d) || !(d > 0)) return fail(rank, "--t-end %s: a time > 0%s", v, "");
      o->t_end = d;
    } else if (!strcmp(a, "--max-steps")) {
      if (!integer(v, &n) || n < 1) return fail(rank, "--max-steps %s: an integer >= 1%s", v, "");
      o->max_steps = n;
    } else if (!strcmp(a, "--precision")) {
      if (!strcmp(v, "float"))
        o->dtype = FCL_FLOAT32;
      else if (!strcmp(v, "double"))
        o->dtype = FCL_FLOAT64;
      else
        return fail(rank, "--precision %s: float or double%s", v, "");
    } else if (!strcmp(a, "--formula")) {
      if (fcl_remesh_formula_parse(v, &o->formula) != FCL_OK)
        return fail(rank, "--formula %s: L2_1, L2_2, L4_2, L6_4 or L8_4%s", v, "");
    } else if (!strcmp(a, "--splitting")) {
      if (!strcmp(v, "strang"))
        o->splitting = FCL_SPLIT_STRANG;
      else if (!strcmp(v, "first"))
        o->splitting = FCL_SPLIT_FIRST_ORDER;
      else if (!strcmp(v, "alternating"))
        o->splitting = FCL_SPLIT_ALTERNATING;
      else
        return fail(rank, "--splitting %s: strang, alternating or first%s", v, "");
    } else if (!strcmp(a, "--time-splitting")) {
      if (!strcmp(v, "strang"))
        o->lie = false;
      else if (!strcmp(v, "lie"))
        o->lie = true;
      else
        return fail(rank, "--time-splitting %s: strang or lie%s", v, "");
    } else if (!strcmp(a, "--spectral-pass")) {
      if (!strcmp(v, "fused"))
        o->separate_spectral = false;
      else if (!strcmp(v, "separate"))
        o->separate_spectral = true;
      else
        return fail(rank, "--spectral-pass %s: fused or separate%s", v, "");
    } else if (!strcmp(a, "--diffusion")) {
      int m = TGV_DIFFUSE_SPECTRAL;
      while (m <= TGV_DIFFUSE_STRETCHING && strcmp(v, tgv_diffusion_name((tgv_diffusion)m))) ++m;
      if (m > TGV_DIFFUSE_STRETCHING)
        return fail(rank, "--diffusion %s: spectral, fd or stretching%s", v, "");
      o->diffusion = (tgv_diffusion)m;
    } else if (!strcmp(a, "--advection-rk")) {
      if (!integer(v, &n) || n < 2 || n > 4)
        return fail(rank, "--advection-rk %s: 2, 3 or 4%s", v, "");
      o->advection_rk = (int)n;
    } else if (!strcmp(a, "--stretching")) {
      if (!strcmp(v, "gradient"))
        o->stretching = TGV_STRETCH_GRADIENT;
      else if (!strcmp(v, "conservative"))
        o->stretching = TGV_STRETCH_CONSERVATIVE;
      else
        return fail(rank, "--stretching %s: gradient or conservative%s", v, "");
    } else if (!strcmp(a, "--stretching-rk")) {
      if (!integer(v, &n) || n < 2 || n > 3)
        return fail(rank, "--stretching-rk %s: 2 or 3%s", v, "");
      o->stretching_rk = (int)n;
    } else if (!strcmp(a, "--cfl")) {
      if (!number(v, &d) || !(d > 0 && d <= 8)) return fail(rank, "--cfl %s: in (0, 8]%s", v, "");
      o->cfl = d;
    } else if (!strcmp(a, "--lcfl")) {
      if (!number(v, &d) || !(d > 0 && d <= 1)) return fail(rank, "--lcfl %s: in (0, 1]%s", v, "");
      o->lcfl = d;
    } else if (!strcmp(a, "--dt-max")) {
      if (!number(v, &d) || !(d > 0)) return fail(rank, "--dt-max %s: a time > 0%s", v, "");
      o->dt_max = d;
    } else if (!strcmp(a, "--dt")) {
      if (!number(v, &d) || !(d > 0)) return fail(rank, "--dt %s: a time > 0%s", v, "");
      o->dt_fixed = d;
    } else if (!strcmp(a, "--device")) {
      o->device = v;
    } else if (!strcmp(a, "--fft")) {
      if (fcl_fft_backend_parse(v, &o->fft) != FCL_OK)
        return fail(rank, "--fft %s: auto, vkfft or fftw%s", v, "");
    } else if (!strcmp(a, "--output")) {
      if (!*v) return fail(rank, "--output: an empty directory name%s%s", "", "");
      o->output_dir = v;
    } else if (!strcmp(a, "--snapshot-every")) {
      if (!number(v, &d) || !(d >= 0))
        return fail(rank, "--snapshot-every %s: a time >= 0%s", v, "");
      o->snapshot_every = d;
    } else if (!strcmp(a, "--checkpoint-every")) {
      if (!integer(v, &n) || n < 0)
        return fail(rank, "--checkpoint-every %s: an integer >= 0%s", v, "");
      o->checkpoint_every = n;
    } else if (!strcmp(a, "--restart")) {
      o->restart = v;
    } else if (!strcmp(a, "--diagnostics-every")) {
      if (!integer(v, &n) || n < 1)
        return fail(rank, "--diagnostics-every %s: an integer >= 1%s", v, "");
      o->diagnostics_every = n;
    } else if (!strcmp(a, "--json")) {
      o->json = v;
    } else {
      return fail(rank, "unknown option '%s'%s", a, "");
    }
  }
  if (o->diffusion == TGV_DIFFUSE_STRETCHING && o->stretching != TGV_STRETCH_CONSERVATIVE)
    return fail(rank,
                "--diffusion stretching: the conservative stretching's right side only "
                "(not with --stretching gradient)%s",
                "", "");
  return 0;
}

const char *tgv_diffusion_name(tgv_diffusion d) {
  static const char *const names[] = {"spectral", "fd", "stretching"};
  return names[d];
}
