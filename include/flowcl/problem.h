/** @file
 * flowcl problem layer: an ordered graph of operators over fields, and the time loop that
 * drives it (src/problem).
 *
 * An operator is described to the problem by an fcl_operator: a name, the fields it reads and
 * writes (with the ghost width it reads), and callbacks. The operator modules give these
 * descriptions for their objects (fcl_fd_operator, fcl_advection_operator, the spectral ones);
 * a simulation code can describe its own (a host step, a custom kernel).
 *
 * fcl_problem_setup resolves the graph once: every field an operator uses must belong to the
 * problem; a field read before any operator writes it must be declared as state (it carries
 * the solution from one step to the next, or is given once); the fields of one operator share
 * a precision; a field read with ghosts must have that many on its topology. It then inserts a
 * ghost exchange before each operator that reads a field's ghosts after the field was written
 * (the graph is cyclic: step n + 1 reads what step n wrote), so that operators never exchange
 * ghosts themselves, and nothing is exchanged twice (where every use of the field by the reader
 * takes periodic images, fcl_field_ghosts_begin_unwrapped: the wrapping axes left out). An
 * exchange begins (fcl_field_ghosts_begin) before the operators between the field's last writer
 * and its reader that do not use the field, and ends before the reader, so those operators
 * overlap its messages. Setup errors name the operator and field.
 * fcl_problem_step then only enqueues (the exchanges are MPI messages, Collective).
 *
 * Layouts: flowcl's directional operators read strided lines in place (advection works on
 * tiles of adjacent lines), so no operator requires a transposed field and setup inserts no
 * transposes. */
#ifndef FLOWCL_PROBLEM_H
#define FLOWCL_PROBLEM_H

#include <stdio.h>

#include "flowcl/field.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What the time loop knows when it calls an operator. */
typedef struct {
  int64_t step; /**< index of the step being taken (0 for the first) */
  double t;     /**< time at the start of the step */
  double dt;    /**< the time the operator advances (the step's dt times its dt_fraction) */
  /** max|u_d| over the domain when the time loop measured it for this step (adaptive dt),
   * else NULL; advection uses it as its CFL bound instead of reducing again. */
  const double *umax;
} fcl_step_info;

/** One use of a field by an operator. */
typedef struct {
  fcl_field *field; /**< the field (registered with fcl_problem_add_field) */
  int ghosts;       /**< ghost width the operator reads (0: interior only) */
  bool read;        /**< reads the field's values */
  bool written;     /**< changes them */
  /** reads periodic images of the interior instead of the ghosts along the leading axes that
   * wrap (fcl_field_ghosts_begin_unwrapped): an exchange inserted for this operator alone skips
   * those axes */
  bool periodic_images;
} fcl_field_use;

/** Most field uses an operator describes (fcl_operator.uses). */
#define FCL_OPERATOR_MAX_USES 8

/** An operator as the problem sees it: a name, the fields it uses, and callbacks on its data
 * (fcl_fd_operator, fcl_advection_operator and the spectral ones fill one in). */
typedef struct {
  const char *name; /**< shown in descriptions, errors and reports (copied by the problem) */
  void *data;       /**< the operator's object, passed to every callback */
  /** Enqueue the operator for this step; the ghosts of every field it reads with ghosts are
   * current. Required. */
  fcl_status (*apply)(void *data, const fcl_step_info *info);
  /** The launchers behind it, index 0, 1, ... until NULL, for statistics (device time,
   * bytes); NULL callback: none (the report then shows host time only). */
  fcl_launcher *(*launcher)(void *data, int index);
  /** Largest stable dt (a diffusion bound); NULL: unbounded. */
  double (*max_dt)(void *data);
  /** Complete the checks apply left pending (a deferred CFL check) and report what they found;
   * called by fcl_problem_settle, so before every callback of fcl_simulation_run and before it
   * returns. NULL: apply leaves nothing pending. Collective. */
  fcl_status (*settle)(void *data);
  /** Frees data when the problem is destroyed; NULL: the caller keeps it. */
  void (*destroy)(void *data);
  /** The share of each step's dt the operator advances (0: all of it): an operator listed twice
   * with 0.5 around another makes a Strang splitting. */
  double dt_fraction;
  int nuses;                                 /**< entries of uses (0 .. FCL_OPERATOR_MAX_USES) */
  fcl_field_use uses[FCL_OPERATOR_MAX_USES]; /**< every field the operator reads or writes */
} fcl_operator;

/** An ordered graph of operators over fields, and its statistics (opaque; not thread safe). */
typedef struct fcl_problem fcl_problem;

/** An empty problem called name (copied); destroy *out with fcl_problem_destroy. */
fcl_status fcl_problem_create(const char *name, fcl_problem **out);
/** Destroys the operators' data that the problem owns (their destroy callbacks). */
void fcl_problem_destroy(fcl_problem **problem); /**< accepts NULL */

/** Register a field under its name (fcl_field_name; names are unique). state: its values are
 * valid before the first step (initial condition, or the solution carried between steps).
 * All fields share the communicator of their topology. */
fcl_status fcl_problem_add_field(fcl_problem *problem, fcl_field *field, bool state);
/** Append an operator (copied). Its data passes to the problem when it has a destroy callback,
 * even when this call fails. */
fcl_status fcl_problem_add_operator(fcl_problem *problem, const fcl_operator *op);
/** Resolve the graph (see above); errors name the operator and the field. Once only. */
fcl_status fcl_problem_setup(fcl_problem *problem);
/** Largest stable dt of a step: the least over the operators of their bound divided by their
 * dt_fraction (an operator advancing half of each step allows a step of twice its bound);
 * infinity when none bounds it. After setup. */
double fcl_problem_max_dt(const fcl_problem *problem);
/** An operator that swaps the values of a and b (fcl_field_swap, no copy) when the step reaches
 * it: a time level's history, as "u_prev <- u" before an operator overwrites u. It reads and
 * writes both (their ghosts count as changed); a and b must be swappable (checked here).
 * Its data is freed by the problem it is added to. */
fcl_status fcl_field_swap_operator(fcl_field *a, fcl_field *b, fcl_operator *out);
/** Per-node timing: when on, every node of a step waits for the fields' queues, so that the
 * report's wall times are each node's true time (at the cost of overlap), and the device time
 * of an operator listed twice is split between its nodes. Default off. Resets the per-node
 * statistics (wall time, calls, device time) so that they cover one mode. */
fcl_status fcl_problem_set_timing(fcl_problem *problem, bool synchronize);
/** One step: the exchanges and operators in order, enqueued. The first step also refreshes the
 * ghosts of state fields read with ghosts. The problem keeps track of which fields' ghosts are
 * current from its operators' uses alone: a field changed between steps by other means needs its
 * ghosts refreshed by the caller (fcl_field_ghosts_update) before the next step. Collective. */
fcl_status fcl_problem_step(fcl_problem *problem, const fcl_step_info *info);
/** Complete every check the operators left pending (their settle callbacks, in order), so that
 * what they found is reported now: a step stepped by hand should be settled before its results
 * are read or saved. The first failure is returned, naming the operator and the step checked;
 * the other operators are settled all the same. Collective. */
fcl_status fcl_problem_settle(fcl_problem *problem);
/** The resolved graph, one node per line ("3. ghosts(u) width 2 [inserted: read by
 * 'stretching'; begun before node 2]"), malloc'd. After setup. */
fcl_status fcl_problem_describe(const fcl_problem *problem, char **text);
/** Per-operator statistics (calls, device time per call, share of the total, effective
 * bandwidth), to out; every rank folds its own events, rank 0 prints the mean over ranks.
 * Collective. */
fcl_status fcl_problem_report(fcl_problem *problem, FILE *out);

/** Statistics of one node of the resolved step, on this rank. */
typedef struct {
  char name[64];    /**< the operator's name, or "ghosts(<field>)" */
  int64_t calls;    /**< times the node ran */
  double wall_s;    /**< host time in the node, waits included */
  double device_ns; /**< profiled kernel time of its launchers (0: none or no profiling); of
                         a ghost node, its field's exchange kernels with per-node timing only
                         (fcl_field_ghost_statistics; 0 without) */
  double bytes;     /**< bytes its launchers moved (0: unknown) */
} fcl_node_stats;

/** Nodes of the resolved step (after setup; 0 before). */
int fcl_problem_num_nodes(const fcl_problem *problem);
/** Statistics of node index (0 .. num_nodes - 1). Not collective. */
fcl_status fcl_problem_node_statistics(fcl_problem *problem, int index, fcl_node_stats *out);

/* ---- time step policy ---- */

/** Which bound set a step's dt. */
typedef enum {
  FCL_DT_FIXED,    /**< dt_max (no bound applied but the operators' stability bounds) */
  FCL_DT_CFL,      /**< cfl * dx_d / max|u_d|, smallest over the axes */
  FCL_DT_LCFL,     /**< lcfl / max|grad u| */
  FCL_DT_OPERATOR, /**< an operator's stability bound (diffusion) */
  FCL_DT_MAX,      /**< the user's dt_max */
  FCL_DT_END       /**< shortened to land on the end time */
} fcl_dt_limit;

/** "fixed", "cfl", "lcfl", "operator", "dt_max", "end". */
const char *fcl_dt_limit_name(fcl_dt_limit limit);

/** How the time loop chooses dt: the smallest of dt_max, the bounds set below and the
 * operators' stability bound. */
typedef struct {
  double dt_max; /**< > 0: the step when nothing else limits it (fixed policy: the step) */
  double dt_min; /**< a bound below it stops the run with an error (0: none) */
  double cfl;    /**< > 0: dt max|u_d| / dx_d <= cfl on every axis d */
  double lcfl;   /**< > 0: dt <= lcfl / max|grad u| (Frobenius norm) */
} fcl_dt_policy;

/** Flow quantities the policy needs, measured by the caller (e.g. fcl_analytics). */
typedef struct {
  double umax[3];    /**< max|u_d| */
  double dx[3];      /**< grid spacings (axes beyond dim: 0, ignored) */
  int dim;           /**< the domain's dimension (entries of umax and dx used) */
  double grad_u_max; /**< max|grad u| */
} fcl_dt_inputs;

/** The largest dt the policy allows, and which bound set it; in may be NULL when neither cfl
 * nor lcfl is used. op_max_dt: the operators' bound (fcl_problem_max_dt). Errors: an invalid
 * policy, or a result below dt_min (the message names the limiting bound). */
fcl_status fcl_dt_policy_compute(const fcl_dt_policy *policy, const fcl_dt_inputs *in,
                                 double op_max_dt, double *dt, fcl_dt_limit *limit);

/* ---- simulation: the time loop ---- */

/** Where the time loop is (given to its callbacks, and at the end of a run). */
typedef struct {
  int64_t step; /**< steps taken */
  /** time reached, last dt @{ */
  double t, dt;
  /** @} */
  fcl_dt_limit limit; /**< which bound set the last dt */
} fcl_sim_state;

/** A callback of the loop; a status other than FCL_OK stops the run with that status. */
typedef fcl_status (*fcl_sim_callback)(void *user, const fcl_sim_state *state);
/** Fill in the quantities of the dt policy for the current fields. Collective. */
typedef fcl_status (*fcl_sim_measure)(void *user, fcl_dt_inputs *in);

/** What fcl_simulation_run does: the time span, the dt policy and the callbacks with their
 * cadences (0: never). */
typedef struct {
  /** run from t_start until t_end (inclusive: the last dt lands on it) @{ */
  double t_start, t_end;
  /** @} */
  int64_t step_start;           /**< index of the first step (restart) */
  int64_t max_steps;            /**< > 0: stop after this many steps even before t_end */
  fcl_dt_policy dt;             /**< how dt is chosen */
  fcl_sim_measure measure;      /**< required when dt.cfl or dt.lcfl is set */
  fcl_sim_callback diagnostics; /**< after every diagnostics_every-th step (and at t_start) */
  int64_t diagnostics_every;    /**< steps between diagnostics calls (0: none) */
  fcl_sim_callback output;      /**< after the step that reaches each multiple of output_every_t */
  double output_every_t;        /**< time between outputs (0: none); steps land on its multiples */
  fcl_sim_callback checkpoint;  /**< after every checkpoint_every-th step */
  int64_t checkpoint_every;     /**< steps between checkpoints (0: none) */
  void *user;                   /**< the first argument of every callback */
  FILE *progress;               /**< rank 0 writes a progress line here (NULL: silent) */
  double progress_every_s;      /**< wall seconds between progress lines (0: 2 s) */
} fcl_simulation_options;

/** Run the problem (after setup) from t_start to t_end. Each step: measure (adaptive policies),
 * dt from the policy, the step, then the callbacks due, each after fcl_problem_settle (a check
 * the operators deferred fires before a diagnostics, output or checkpoint callback sees the
 * fields). The final state goes to final (may be NULL). Before returning, the problem is
 * settled and each of the fields' queues finished once. A failure (an operator, a settled check,
 * the measure, the dt policy, dt_min included, or a callback) stops the run with its status and
 * a message naming the step (fcl_step_info.step, counted from 0) and what failed; a callback or
 * operator that fails without recording a message is reported as such. Collective. */
fcl_status fcl_simulation_run(fcl_problem *problem, const fcl_simulation_options *options,
                              fcl_sim_state *final);

/* ---------------- the run's output directory ---------------- */

/** Prepare a run's output directory: create it with its missing parents (FCL_ERR_IO naming it
 * and the system's reason when it cannot be). A fresh run (fresh true) owns it: a directory
 * holding an earlier run, its diagnostics file (a file name, NULL: none) or checkpoints
 * `<checkpoint_name>_*.chk.h5` (fcl_checkpoint_write's, NULL: none), is refused with
 * FCL_ERR_INVALID_ARGUMENT naming what it holds (the earlier checkpoints would outnumber and
 * outlive the new run's, and a restart from the latest would take them), unless overwrite,
 * which removes those checkpoints (their count in *removed, may be NULL). A restart (fresh
 * false) continues what is there. Rank 0 works on the file system; every rank returns its
 * status and message. Collective over comm. */
fcl_status fcl_run_dir_prepare(MPI_Comm comm, const char *directory, const char *checkpoint_name,
                               const char *diagnostics, bool fresh, bool overwrite, int *removed);
/** Cut a diagnostics file (CSV, the step in its first column) back to the rows of steps <= step,
 * rewriting it under a temporary name: a restart from a checkpoint older than the last rows
 * computes them again and would repeat them. Header and comment lines stay; a missing file is
 * not an error; the rows dropped in *dropped (may be NULL). Rank 0 works on the file; every
 * rank returns its status and message. Collective over comm. */
fcl_status fcl_run_dir_keep_rows(MPI_Comm comm, const char *path, int64_t step, int *dropped);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_PROBLEM_H */
