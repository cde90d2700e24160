/* Process-wide counters of what flowcl asked of the device: programs built (and of them those
 * compiled from source) and host waits. */
#include <stdatomic.h>

#include "runtime_impl.h"

static atomic_uint_fast64_t programs_built, programs_compiled, host_syncs;

uint64_t fcl_count_programs_built(void) { return atomic_load(&programs_built); }

uint64_t fcl_count_programs_compiled(void) { return atomic_load(&programs_compiled); }

uint64_t fcl_count_host_syncs(void) { return atomic_load(&host_syncs); }

void fcl__count_program_built(void) { atomic_fetch_add(&programs_built, 1); }

void fcl__count_program_compiled(void) { atomic_fetch_add(&programs_compiled, 1); }

void fcl__count_host_sync(void) { atomic_fetch_add(&host_syncs, 1); }
