# The first flowcl-tgv run on a device tunes its kernels (FLOWCL_TUNE=measure here, as on a
# GPU by default) and says so; a second run in the same cache tunes nothing and prints no
# tuning line. cmake -DTGV=... -DWORK_DIR=... -P tgv_tuning_remembered.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(ENV{FLOWCL_CACHE_DIR} ${WORK_DIR}/cache)
set(ENV{FLOWCL_TUNE} measure)
foreach(run first second)
  execute_process(COMMAND ${TGV} --resolution 16 --max-steps 2 --no-plot --quiet --overwrite
                          --output ${WORK_DIR}/out
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out_${run} ERROR_VARIABLE err TIMEOUT 500)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${run} run failed (${rc}): ${err}")
  endif()
endforeach()
if(NOT out_first MATCHES "tuning: ([0-9]+) kernel\\(s\\) measured" OR CMAKE_MATCH_1 EQUAL 0)
  message(FATAL_ERROR "the first run printed no tuning line:\n${out_first}")
endif()
message(STATUS "first run: ${CMAKE_MATCH_1} kernels tuned")
if(out_second MATCHES "tuning:")
  message(FATAL_ERROR "the second run tuned again:\n${out_second}")
endif()
file(GLOB entries ${WORK_DIR}/cache/tune/*)
list(LENGTH entries n)
message(STATUS "second run: no tuning; ${n} remembered choices")
