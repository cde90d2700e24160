/* flowcl-convection command line. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convection.h"

static const char usage[] =
    "usage: flowcl-convection [options]\n"
    "Free-slip Rayleigh-Benard convection between plates at z = 0 (T = 1) and z = 1 (T = 0),\n"
    "periodic horizontally: vorticity and the temperature deviation theta = T - (1 - z) by the\n"
    "remeshed vortex method (advection with mirror images at the plates), spectral\n"
    "Biot-Savart, buoyancy and exact diffusion (sine/cosine transforms at the plates). Units:\n"
    "height H, time H^2 / kappa. The vertical is the first axis (x in the output files).\n"
    "\n"
    "  --dim D               2 or 3 (default 2)\n"
    "  --rayleigh RA         Rayleigh number (default 5000)\n"
    "  --prandtl PR          Prandtl number (default 1)\n"
    "  --aspect A            horizontal period over the height (default 2 sqrt(2): one pair\n"
    "                        of rolls at the critical wavenumber pi / sqrt(2))\n"
    "  --resolution N        points along the vertical, plates included (default 33); the\n"
    "                        horizontal axes get A (N - 1) rounded\n"
    "  --scalar-refinement R theta on a grid R times finer per axis (1, 2 or 4; default 1):\n"
    "                        advected by the velocity interpolated to it, diffused there,\n"
    "                        restricted to the velocity's grid for the buoyancy\n"
    "  --t-end T             end time (default 1)\n"
    "  --dt D                largest step, the step while the flow is slow (default 1e-4)\n"
    "  --cfl C               dt max|u_d| / dx_d <= C on theta's grid (default 0.5)\n"
    "  --amplitude A         initial theta = A sin(pi z) cos(k x) (3D: + cos(k y)) (default\n"
    "                        1e-3)\n"
    "  --max-steps N         stop after N steps (default: no limit)\n"
    "  --precision P         float or double (default double)\n"
    "  --device SPEC         device (default FLOWCL_DEVICE, else the first GPU, else the first\n"
    "                        device); 'cuda' for the CUDA backend\n"
    "  --output DIR          output directory (default convection-output)\n"
    "  --diagnostics-every N a diagnostics row every N steps (default 10)\n"
    "  --snapshot-every T    HDF5/XDMF snapshot of theta and the vorticity every T (default 0:\n"
    "                        none)\n"
    "  --overwrite           replace an earlier run's outputs in the output directory\n"
    "  --no-plot             do not draw the PNG\n"
    "  --quiet               no progress line\n"
    "  --help                this text\n"
    "\n"
    "Writes OUTPUT/diagnostics.csv: step, t, dt, energy (<|u|^2> / 2), nu_bottom and nu_top\n"
    "(the Nusselt numbers 1 - <d theta / dz> at each plate), theta_max (max|theta|); then\n"
    "OUTPUT/report.txt, snapshots (with --scalar-refinement, theta on its own grid in the\n"
    "series theta_fine besides) and OUTPUT/convection.png (python3-matplotlib).\n";

static int fail(int rank, const char *what, const char *value) {
  if (rank == 0) fprintf(stderr, "flowcl-convection: %s: '%s'\n%s", what, value, usage);
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

int convection_parse(int argc, char **argv, int rank, convection_options *o) {
  *o = (convection_options){.dim = 2,
                            .rayleigh = 5000,
                            .prandtl = 1,
                            .aspect = 2 * sqrt(2.0),
                            .resolution = 33,
                            .refinement = 1,
                            .t_end = 1,
                            .dt_max = 1e-4,
                            .cfl = 0.5,
                            .amplitude = 1e-3,
                            .diagnostics_every = 10,
                            .dtype = FCL_FLOAT64,
                            .output_dir = "convection-output"};
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
    } else if (!strcmp(a, "--no-plot")) {
      o->no_plot = true;
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
      if (!strcmp(a, "--dim") && (x == 2 || x == 3))
        o->dim = (int)x;
      else if (!strcmp(a, "--rayleigh") && x >= 0)
        o->rayleigh = x;
      else if (!strcmp(a, "--prandtl") && x > 0)
        o->prandtl = x;
      else if (!strcmp(a, "--aspect") && x > 0)
        o->aspect = x;
      else if (!strcmp(a, "--resolution") && x >= 5 && x == floor(x))
        o->resolution = (int64_t)x;
      else if (!strcmp(a, "--scalar-refinement") && (x == 1 || x == 2 || x == 4))
        o->refinement = (int)x;
      else if (!strcmp(a, "--t-end") && x > 0)
        o->t_end = x;
      else if (!strcmp(a, "--dt") && x > 0)
        o->dt_max = x;
      else if (!strcmp(a, "--cfl") && x > 0)
        o->cfl = x;
      else if (!strcmp(a, "--amplitude"))
        o->amplitude = x;
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
  if (convection_horizontal_points(o) < 4)
    return fail(rank, "--aspect times the vertical intervals gives fewer than 4 points", "");
  return 0;
}

int64_t convection_horizontal_points(const convection_options *o) {
  return (int64_t)llround(o->aspect * (double)(o->resolution - 1));
}
