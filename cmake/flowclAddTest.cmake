# Sanitized builds run several times slower (the advection tests took over 600 s under ASan on
# 2 cores): every test's time limit is flowcl_test_timeout(seconds) of its plain-build value.
if(FLOWCL_SANITIZE)
  set(FLOWCL_TEST_SLOWDOWN 6)
else()
  set(FLOWCL_TEST_SLOWDOWN 1)
endif()
function(flowcl_test_timeout var seconds)
  math(EXPR t "${seconds} * ${FLOWCL_TEST_SLOWDOWN}")
  set(${var} ${t} PARENT_SCOPE)
endfunction()

# flowcl_add_test(NAME SOURCES files... LABELS labels... [ARGS args...] [ENVIRONMENT vars...])
# One executable per test, linked with the library and the shared test helpers; exit code 77
# means "skipped: hardware absent" (never a silent pass). Tests use a binary cache of their own.
function(flowcl_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LABELS;ARGS;ENVIRONMENT" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE flowcl::flowcl flowcl_test_common flowcl_warnings)
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  flowcl_test_timeout(limit 600)
  set_tests_properties(${name} PROPERTIES
    LABELS "${T_LABELS}"
    SKIP_RETURN_CODE 77
    TIMEOUT ${limit}
    ENVIRONMENT "FLOWCL_CACHE_DIR=${PROJECT_BINARY_DIR}/test-cache;${T_ENVIRONMENT}")
endfunction()

# Open MPI's mpiexec refuses more ranks than cores unless told (--oversubscribe; CI has fewer
# cores than ranks); MPICH's has neither the limit nor the flag. The flag of the MPI found:
if(MPIEXEC_EXECUTABLE AND NOT DEFINED CACHE{FLOWCL_MPIEXEC_OVERSUBSCRIBE})
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE mpiexec_version
                  ERROR_VARIABLE mpiexec_version TIMEOUT 30)
  set(flag "")
  if(mpiexec_version MATCHES "Open MPI|OpenRTE")
    set(flag --oversubscribe)
  endif()
  set(FLOWCL_MPIEXEC_OVERSUBSCRIBE "${flag}" CACHE STRING
      "mpiexec's flag to run more ranks than cores (Open MPI: --oversubscribe; MPICH: none)")
endif()

# One CTest test of an MPI executable: target on n ranks through mpiexec (with the flag above;
# running as root is allowed for containers), env prepended to the common environment.
function(flowcl__mpi_test_case test target n labels env)
  flowcl_test_timeout(limit 600)
  add_test(NAME ${test}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${FLOWCL_MPIEXEC_OVERSUBSCRIBE}
                   ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${target}> ${MPIEXEC_POSTFLAGS})
  set_tests_properties(${test} PROPERTIES
    LABELS "${labels};mpi"
    SKIP_RETURN_CODE 77
    TIMEOUT ${limit}
    PROCESSORS ${n}
    ENVIRONMENT "${env}FLOWCL_CACHE_DIR=${PROJECT_BINARY_DIR}/test-cache;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endfunction()

# flowcl_add_mpi_test(NAME SOURCES files... LABELS labels... RANKS n... [ALIGNED_RANKS n...]):
# one executable, one CTest test per rank count (NAME_<n>ranks); ALIGNED_RANKS adds
# NAME_<n>ranks_aligned, the same with FLOWCL_ROW_ALIGN=on (rows of x aligned on the tests' small
# grids too, so the layout that large grids get is exercised).
function(flowcl_add_mpi_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LABELS;RANKS;ALIGNED_RANKS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE flowcl::flowcl flowcl_test_mpi flowcl_warnings)
  foreach(n IN LISTS T_RANKS)
    flowcl__mpi_test_case(${name}_${n}ranks ${name} ${n} "${T_LABELS}" "")
  endforeach()
  foreach(n IN LISTS T_ALIGNED_RANKS)
    flowcl__mpi_test_case(${name}_${n}ranks_aligned ${name} ${n} "${T_LABELS}" "FLOWCL_ROW_ALIGN=on;")
  endforeach()
endfunction()
