/* flowcl-sphere command line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sphere.h"

static const char usage[] =
    "usage: flowcl-sphere [options]\n"
    "The flow past a sphere of diameter D = 1 in a uniform stream U = 1 along x, by the\n"
    "remeshed vortex method with Brinkman penalization of the sphere in a periodic box:\n"
    "penalization, remeshed advection, stretching (4th-order differences), an absorbing\n"
    "layer before the outflow face, spectral diffusion and Biot-Savart with the free stream.\n"
    "\n"
    "  --reynolds RE         U D / nu (default 100)\n"
    "  --resolution N        grid points per diameter (default 16)\n"
    "  --box X,Y,Z           box lengths in diameters (default 12,9,9)\n"
    "  --center-x X          the sphere's centre from the inlet face (default 2)\n"
    "  --layer W             absorbing layer width before the outflow face (default 1.5)\n"
    "  --smoothing S         the mask's smoothing width in grid spacings (default 0: sharp)\n"
    "  --retraction R        the mask's radius shrunk by R grid spacings (default 0)\n"
    "  --lambda L            penalization factor (default 1e8)\n"
    "  --curl C              the curl of the velocity's change in the vorticity's\n"
    "                        penalization: fd (differences of order 4) or spectral (as\n"
    "                        Biot-Savart inverts it: the drag then depends far less on dt)\n"
    "                        (default spectral)\n"
    "  --t-end T             end time in D / U (default 20)\n"
    "  --cfl C               dt max|u_d| / dx <= C (default 0.25)\n"
    "  --max-steps N         stop at step N even before t-end (default: no limit)\n"
    "  --snapshot-every T    HDF5/XDMF snapshot of the vorticity and the mask every T time\n"
    "                        units, for ParaView (default 0: none)\n"
    "  --checkpoint-every N  checkpoint every N steps (default 0: none; the last two are kept)\n"
    "  --restart FILE        continue from a checkpoint file, or 'latest' in the output dir\n"
    "                        (the run's own options must match the checkpoint's)\n"
    "  --precision P         float or double (default float)\n"
    "  --device SPEC         device, platform:device; 'cuda' or 'cuda:N' for the CUDA\n"
    "                        backend (default FLOWCL_DEVICE, else OpenCL's first GPU, else\n"
    "                        the first device)\n"
    "  --output DIR          output directory (default sphere-output)\n"
    "  --overwrite           replace an earlier run's diagnostics and checkpoints in the output\n"
    "                        directory (without it, such a directory is refused)\n"
    "  --benchmark           time --max-steps steps (default 20) at the CFL's dt after 2\n"
    "                        warm-up steps: the median step and the time per operator; writes\n"
    "                        no files\n"
    "  --quiet               no progress line\n"
    "  --no-plot             do not draw OUTPUT/sphere.png (gnuplot) at the end\n"
    "  --help                this text\n"
    "\n"
    "Writes OUTPUT/diagnostics.csv (step, t, dt, cd, cl_y, cl_z), OUTPUT/report.txt (time\n"
    "per operator), the snapshots (OUTPUT/flow.xdmf) and OUTPUT/sphere.png, and prints the mean "
    "drag coefficient over "
    "the second half of the run and\n"
    "the Strouhal number of the lift once it oscillates.\n";

static bool number(const char *s, double lo, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v > lo) || v != v || v > 1e300) return false;
  *out = v;
  return true;
}

int sphere_options_parse(int argc, char **argv, int rank, sphere_options *o) {
  *o = (sphere_options){.reynolds = 100,
                        .resolution = 16,
                        .box = {12, 9, 9},
                        .center_x = 2,
                        .layer = 1.5,
                        .smoothing = 0,
                        .lambda = 1e8,
                        .t_end = 20,
                        .cfl = 0.25,
                        .dtype = FCL_FLOAT32,
                        .output_dir = "sphere-output",
                        .plot = true,
                        .spectral_curl = true};
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    bool ok = true, takes = true;
    double x = 0;
    if (!strcmp(a, "--help")) {
      if (rank == 0) fputs(usage, stdout);
      return 1;
    } else if (!strcmp(a, "--no-plot")) {
      takes = false;
      o->plot = false;
    } else if (!strcmp(a, "--quiet") || !strcmp(a, "--overwrite") || !strcmp(a, "--benchmark")) {
      takes = false;
      *(a[2] == 'q' ? &o->quiet : a[2] == 'o' ? &o->overwrite : &o->benchmark) = true;
    } else if (!v) {
      ok = false;
    } else if (!strcmp(a, "--reynolds")) {
      ok = number(v, 0, &o->reynolds);
    } else if (!strcmp(a, "--resolution")) {
      ok = number(v, 1, &x) && x == (double)(int64_t)x && x <= 4096;
      o->resolution = (int64_t)x;
    } else if (!strcmp(a, "--box")) {
      char *end;
      for (int k = 0; k < 3 && ok; ++k) {
        o->box[k] = strtod(k ? end + 1 : v, &end);
        ok = o->box[k] > 0 && (k == 2 ? *end == '\0' : *end == ',');
      }
    } else if (!strcmp(a, "--center-x")) {
      ok = number(v, 0, &o->center_x);
    } else if (!strcmp(a, "--layer")) {
      ok = number(v, 0, &o->layer);
    } else if (!strcmp(a, "--smoothing")) {
      ok = number(v, -1e-300, &o->smoothing);
    } else if (!strcmp(a, "--retraction")) {
      ok = number(v, -1e-300, &o->retraction);
    } else if (!strcmp(a, "--curl")) {
      ok = !strcmp(v, "fd") || !strcmp(v, "spectral");
      o->spectral_curl = !strcmp(v, "spectral");
    } else if (!strcmp(a, "--lambda")) {
      ok = number(v, 0, &o->lambda);
    } else if (!strcmp(a, "--t-end")) {
      ok = number(v, 0, &o->t_end);
    } else if (!strcmp(a, "--snapshot-every")) {
      ok = number(v, 0, &o->snapshot_every);
    } else if (!strcmp(a, "--checkpoint-every")) {
      ok = number(v, 0, &x) && x == (double)(int64_t)x;
      o->checkpoint_every = (int64_t)x;
    } else if (!strcmp(a, "--restart")) {
      o->restart = v;
    } else if (!strcmp(a, "--cfl")) {
      ok = number(v, 0, &o->cfl);
    } else if (!strcmp(a, "--max-steps")) {
      ok = number(v, 0, &x) && x == (double)(int64_t)x;
      o->max_steps = (int64_t)x;
    } else if (!strcmp(a, "--precision")) {
      ok = !strcmp(v, "float") || !strcmp(v, "double");
      o->dtype = !strcmp(v, "double") ? FCL_FLOAT64 : FCL_FLOAT32;
    } else if (!strcmp(a, "--device")) {
      o->device = v;
    } else if (!strcmp(a, "--output")) {
      o->output_dir = v;
    } else {
      if (rank == 0) fprintf(stderr, "flowcl-sphere: unknown option '%s' (--help lists them)\n", a);
      return 2;
    }
    if (!ok) {
      if (rank == 0)
        fprintf(stderr, "flowcl-sphere: %s: bad or missing value%s%s%s (--help)\n", a,
                v && takes ? " '" : "", v && takes ? v : "", v && takes ? "'" : "");
      return 2;
    }
    i += takes;
  }
  if ((o->retraction + o->smoothing) / (double)o->resolution >= 0.25) {
    if (rank == 0)
      fprintf(stderr,
              "flowcl-sphere: --retraction %g and --smoothing %g (grid spacings) leave too thin a "
              "sphere at %lld points per diameter: together they must stay below a quarter of "
              "the diameter\n",
              o->retraction, o->smoothing, (long long)o->resolution);
    return 2;
  }
  const double r = 0.5;
  if (o->center_x - r < 1 || o->center_x + r > o->box[0] - o->layer - 1 || o->box[1] < 2 ||
      o->box[2] < 2) {
    if (rank == 0)
      fprintf(stderr,
              "flowcl-sphere: the sphere (centre x = %g, diameter 1) needs a diameter of fluid "
              "before it, and before the absorbing layer [%g, %g]; y and z need 2 diameters\n",
              o->center_x, o->box[0] - o->layer, o->box[0]);
    return 2;
  }
  return 0;
}
