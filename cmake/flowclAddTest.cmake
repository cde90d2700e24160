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
