/* Autotuner internals (not installed). */
#ifndef FLOWCL_SRC_TUNE_IMPL_H
#define FLOWCL_SRC_TUNE_IMPL_H

#include "flowcl/tune.h"

/* A remembered result. */
typedef struct {
  int64_t choice[FCL_TUNE_MAX_AXES];
  fcl_tune_effort effort;
  double median_ns;
} fcl__tune_entry;

/* Key of a tuning problem (64 hex digits + NUL). */
fcl_status fcl__tune_key(const fcl_kbuilder *base, size_t num_axes, const fcl_tune_axis *axes,
                         const char *options, const fcl_device *device, const int64_t *params,
                         char key[65]);
/* Load an entry; false when absent, disabled or corrupted (a corrupted one is removed). */
bool fcl__tune_cache_load(const char *key, size_t num_axes, const fcl_tune_axis *axes,
                          fcl__tune_entry *entry);
void fcl__tune_cache_store(const char *key, const char *kernel, size_t num_axes,
                           const fcl__tune_entry *entry);

#endif
