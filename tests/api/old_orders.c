/* Calls in the argument orders before 0.2 must not compile (tests/api/CMakeLists.txt). Each case
 * is compiled alone (-DCASE_...): with -DNEW_ORDER in today's order, which must compile, else in
 * the old one, which must fail naming what was wrong. */
#include <flowcl/codegen.h>

#if defined(CASE_ARRAY_READ)
/* before: fcl_array_read(array, queue, host, blocking, ...) */
fcl_status probe(const fcl_array *array, double *host);
fcl_status probe(const fcl_array *array, double *host) {
#ifdef NEW_ORDER
  return fcl_array_read(array, NULL, FCL_BLOCKING, host, 0, NULL, NULL);
#else
  return fcl_array_read(array, NULL, host, true, 0, NULL, NULL);
#endif
}
#elif defined(CASE_ARRAY_WRITE)
/* before: fcl_array_write(array, queue, host, blocking, ...); false is a null pointer constant,
 * so only host in blocking's place can be caught */
fcl_status probe(fcl_array *array, const double *host);
fcl_status probe(fcl_array *array, const double *host) {
#ifdef NEW_ORDER
  return fcl_array_write(array, NULL, FCL_NON_BLOCKING, host, 0, NULL, NULL);
#else
  return fcl_array_write(array, NULL, host, false, 0, NULL, NULL);
#endif
}
#elif defined(CASE_PREFETCH)
/* before: fcl_kbuilder_add_prefetch(kb, array, sweep, fetch_name, pad), three strings */
fcl_status probe(fcl_kbuilder *kb);
fcl_status probe(fcl_kbuilder *kb) {
#ifdef NEW_ORDER
  return fcl_kbuilder_add_prefetch(
      kb, (fcl_prefetch){.array = "u", .sweep = "i_inner", .fetch_name = "tile", .pad = 1});
#else
  return fcl_kbuilder_add_prefetch(kb, "u", "i_inner", "tile", 1);
#endif
}
#else
#error "no CASE_ given"
#endif
