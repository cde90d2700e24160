/* Internal state of the problem layer (src/problem). */
#ifndef FLOWCL_PROBLEM_IMPL_H
#define FLOWCL_PROBLEM_IMPL_H

#include "flowcl/problem.h"

typedef enum { FCL__NODE_OPERATOR, FCL__NODE_GHOSTS } fcl__node_kind;

/* One node of the resolved step: an operator, or a ghost exchange inserted before one. */
typedef struct {
  fcl__node_kind kind;
  int op;         /* the operator (ghosts: the reader it was inserted for) */
  int field;      /* ghosts: the field exchanged */
  int width;      /* ghosts: the widest read that needs it */
  bool unwrapped; /* ghosts: the wrapping axes left out (every use by the reader takes periodic
                     images) */
  int begin_at;   /* ghosts: the node before which the exchange begins (its own index when no
                    earlier node leaves the field alone), ended here */
  bool in_flight; /* ghosts: begun early, not yet ended */
  double wall_s;  /* host wall time spent in this node (statistics) */
  int64_t calls;
  /* with per-node timing: the device time and bytes of its launchers during its own calls
   * (an operator listed twice shares launchers; this splits their statistics by node); a
   * ghost node's, of its field's exchange kernels (ns0, bytes0: their totals at its begin) */
  double device_ns, bytes;
  double ns0, bytes0;
} fcl__node;

typedef struct {
  fcl_operator desc;
  char *name;
} fcl__op;

struct fcl_problem {
  char *name;
  int nfields;
  fcl_field **fields;
  bool *state;
  int nops;
  fcl__op *ops;
  int nnodes;
  fcl__node *nodes;
  int nprologue; /* fields whose ghosts the first step refreshes */
  int *prologue;
  bool *prologue_unwrapped; /* per field: the refresh leaves the wrapping axes out */
  bool ready;               /* setup done */
  bool timing;              /* wait for the queues after every node */
  int64_t steps;            /* steps taken */
};

/* The communicator of the problem's fields (MPI_COMM_SELF without fields). */
MPI_Comm fcl__problem_comm(const fcl_problem *problem);
/* Device time (ns) and bytes of an operator's launchers so far. */
fcl_status fcl__operator_device_stats(const fcl_operator *d, double *ns, double *bytes);
/* Wait for every field's queue, once per queue. */
fcl_status fcl__problem_finish(const fcl_problem *problem);
/* fcl_problem_settle, its failure's message naming when the check ran (" (settled after step
 * 4, t = 0.2)"; "" says nothing). */
fcl_status fcl__problem_settle(fcl_problem *problem, const char *when);

#endif
