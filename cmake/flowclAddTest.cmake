# flowcl_add_test(NAME SOURCES files... LABELS labels... [ARGS args...] [ENVIRONMENT vars...])
# One executable per test, linked with the library and the shared test helpers; exit code 77
# means "skipped: hardware absent" (never a silent pass). Tests use a binary cache of their own.
function(flowcl_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LABELS;ARGS;ENVIRONMENT" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE flowcl::flowcl flowcl_test_common flowcl_warnings)
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  set_tests_properties(${name} PROPERTIES
    LABELS "${T_LABELS}"
    SKIP_RETURN_CODE 77
    TIMEOUT 600
    ENVIRONMENT "FLOWCL_CACHE_DIR=${PROJECT_BINARY_DIR}/test-cache;${T_ENVIRONMENT}")
endfunction()

# flowcl_add_mpi_test(NAME SOURCES files... LABELS labels... RANKS n...): one executable, one
# CTest test per rank count (NAME_<n>ranks) run through mpiexec (--oversubscribe: CI has fewer
# cores than ranks; running as root is allowed for containers).
function(flowcl_add_mpi_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LABELS;RANKS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE flowcl::flowcl flowcl_test_mpi flowcl_warnings)
  foreach(n IN LISTS T_RANKS)
    add_test(NAME ${name}_${n}ranks
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} --oversubscribe
                     ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}_${n}ranks PROPERTIES
      LABELS "${T_LABELS};mpi"
      SKIP_RETURN_CODE 77
      TIMEOUT 600
      PROCESSORS ${n}
      ENVIRONMENT "FLOWCL_CACHE_DIR=${PROJECT_BINARY_DIR}/test-cache;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
  endforeach()
endfunction()
