/* flowcl-scalar command line. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalar.h"

static const char usage[] =
    "usage: flowcl-scalar [options]\n"
    "A passive scalar c at Schmidt number Sc in the ABC flow u = (sin z + cos y, sin x + cos z,\n"
    "sin y + cos x) of [0, 2 pi)^3 (a Beltrami flow: the vorticity is u; it decays as\n"
    "exp(-nu t)), by the remeshed vortex method: the velocity on N^3 points (spectral\n"
    "Biot-Savart and diffusion, vortex stretching), the scalar on (R N)^3, advected by the\n"
    "velocity interpolated to its grid (cubic, transfer.h) and diffused spectrally there.\n"
    "Initial scalar cos(x). Time unit: the turnover time 1 / (k u') = 1.\n"
    "\n"
    "  --resolution N        velocity points per axis (default 64)\n"
    "  --refinement R        the scalar's grid refines the velocity's R times: 1, 2 or 4\n"
    "                        (default 4)\n"
    "  --substeps S          scalar advection steps per velocity step, each over dt / S\n"
    "                        (default R: the velocity steps at its own grid's CFL number)\n"
    "  --viscosity NU        kinematic viscosity (default 0.1)\n"
    "  --schmidt SC          Schmidt number nu / kappa (default 16)\n"
    "  --t-end T             end time (default 10)\n"
    "  --dt D                largest step (default 0.1)\n"
    "  --cfl C               dt / S max|u_d| / dx_d <= C on the scalar's grid (default 1)\n"
    "  --max-steps N         stop after N steps (default: no limit)\n"
    "  --precision P         float or double (default float)\n"
    "  --device SPEC         device (default FLOWCL_DEVICE, else the first GPU, else the first\n"
    "                        device); 'cuda' for the CUDA backend\n"
    "  --output DIR          output directory (default scalar-output)\n"
    "  --diagnostics-every N a diagnostics row every N steps (default 10)\n"
    "  --snapshot-every T    HDF5/XDMF snapshot of the scalar every T (default 0: none)\n"
    "  --overwrite           replace an earlier run's outputs in the output directory\n"
    "  --quiet               no progress line\n"
    "  --help                this text\n"
    "\n"
    "Writes OUTPUT/diagnostics.csv: step, t, dt, energy (<|u|^2> / 2, exactly 1.5 exp(-2 nu t)),\n"
    "variance (<c^2> - <c>^2 on the scalar's grid), mean (<c>), c_max (max|c|); then\n"
    "OUTPUT/report.txt (with the time loop's wall time) and snapshots.\n";

static int fail(int rank, const char *what, const char *value) {
  if (rank == 0) fprintf(stderr, "flowcl-scalar: %s: '%s'\n%s", what, value, usage);
  return 2;
}

static bool number(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !isfinite(v)) return false;
  *out = v;
  return true;
}

int scalar_parse(int argc, char **argv, int rank, scalar_options *o) {
  *o = (scalar_options){.resolution = 64,
                        .refinement = 4,
                        .viscosity = 0.1,
                        .schmidt = 16,
                        .t_end = 10,
                        .dt_max = 0.1,
                        .cfl = 1,
                        .diagnostics_every = 10,
                        .dtype = FCL_FLOAT32,
                        .output_dir = "scalar-output"};
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    double x = 0;
    if (!strcmp(a, "--help")) {
      if (rank == 0) fputs(usage, stdout);
      return 1;
    } else if (!strcmp(a, "--overwrite")) {
      o->overwrite = true;
    } else if (!strcmp(a, "--quiet")) {
      o->quiet = true;
    } else if (!v) {
      return fail(rank, "missing value or unknown option", a);
    } else if (!strcmp(a, "--device")) {
      o->device = argv[++i];
    } else if (!strcmp(a, "--output")) {
      o->output_dir = argv[++i];
    } else if (!strcmp(a, "--precision")) {
      ++i;
      if (!strcmp(v, "float"))
        o->dtype = FCL_FLOAT32;
      else if (!strcmp(v, "double"))
        o->dtype = FCL_FLOAT64;
      else
        return fail(rank, "--precision must be float or double", v);
    } else {
      if (!number(v, &x)) return fail(rank, a, v);
      ++i;
      if (!strcmp(a, "--resolution") && x >= 8 && x == floor(x))
        o->resolution = (int64_t)x;
      else if (!strcmp(a, "--refinement") && (x == 1 || x == 2 || x == 4))
        o->refinement = (int)x;
      else if (!strcmp(a, "--substeps") && x >= 1 && x <= 16 && x == floor(x))
        o->substeps = (int)x;
      else if (!strcmp(a, "--viscosity") && x > 0)
        o->viscosity = x;
      else if (!strcmp(a, "--schmidt") && x > 0)
        o->schmidt = x;
      else if (!strcmp(a, "--t-end") && x > 0)
        o->t_end = x;
      else if (!strcmp(a, "--dt") && x > 0)
        o->dt_max = x;
      else if (!strcmp(a, "--cfl") && x > 0)
        o->cfl = x;
      else if (!strcmp(a, "--max-steps") && x >= 0 && x == floor(x))
        o->max_steps = (int64_t)x;
      else if (!strcmp(a, "--diagnostics-every") && x >= 1 && x == floor(x))
        o->diagnostics_every = (int64_t)x;
      else if (!strcmp(a, "--snapshot-every") && x >= 0)
        o->snapshot_every = x;
      else
        return fail(rank, "unknown option or value out of range", a);
    }
  }
  if (!o->substeps) o->substeps = o->refinement;
  if (o->substeps > 1 && o->refinement == 1)
    return fail(rank, "--substeps above 1 needs a refined scalar grid (--refinement 2 or 4)", "");
  return 0;
}
