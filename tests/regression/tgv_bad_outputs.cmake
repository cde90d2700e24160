# flowcl-tgv with outputs it cannot write: each fails at once (before computing 100000 steps)
# with the system's reason. cmake -DTGV=... -P tgv_bad_outputs.cmake
# a run's limit, longer under the sanitizers (-DSLOWDOWN: flowcl_test_timeout's factor)
if(NOT SLOWDOWN)
  set(SLOWDOWN 1)
endif()
math(EXPR run_timeout "120 * ${SLOWDOWN}")
function(expect_failure expect)
  string(REPLACE ";" " " shown "${ARGN}")
  execute_process(COMMAND ${TGV} --resolution 16 --quiet --no-plot --max-steps 100000 ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${run_timeout})
  if(rc EQUAL 0)
    message(FATAL_ERROR "flowcl-tgv ${shown}: succeeded")
  endif()
  if(NOT err MATCHES "${expect}.*: No such file or directory")
    message(FATAL_ERROR "flowcl-tgv ${shown} (${rc}): no '${expect}' with the reason in: ${err}")
  endif()
  message(STATUS "flowcl-tgv ${shown}: ${err}")
endfunction()
expect_failure("cannot create the output directory" --output /proc/flowcl-no-such/out)
expect_failure("cannot write" --benchmark --json /proc/flowcl-no-such/bench.json)

# A fresh run into a directory holding an earlier run is refused (its checkpoints would outlive
# this run's, and --restart latest would take them); --overwrite replaces them.
get_filename_component(work ${TGV} DIRECTORY)
set(dir ${work}/tgv-owned-output)
file(REMOVE_RECURSE ${dir})
execute_process(COMMAND ${TGV} --resolution 16 --quiet --no-plot --max-steps 4 --checkpoint-every 1
                        --output ${dir} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "first run failed: ${err}")
endif()
file(GLOB first ${dir}/tgv_*.chk.h5)
execute_process(COMMAND ${TGV} --resolution 16 --quiet --no-plot --max-steps 2 --output ${dir}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "holds an earlier run")
  message(FATAL_ERROR "a second run into ${dir} was not refused (${rc}): ${err}")
endif()
execute_process(COMMAND ${TGV} --resolution 16 --quiet --no-plot --max-steps 2 --checkpoint-every 1
                        --output ${dir} --overwrite RESULT_VARIABLE rc ERROR_VARIABLE err)
file(GLOB second ${dir}/tgv_*.chk.h5)
list(SORT second)
if(NOT rc EQUAL 0 OR NOT second MATCHES "tgv_000000001.chk.h5;.*tgv_000000002.chk.h5$")
  message(FATAL_ERROR "--overwrite (${rc}): checkpoints ${second} (before: ${first}): ${err}")
endif()
file(REMOVE_RECURSE ${dir})
message(STATUS "a second run refused, --overwrite kept only its own checkpoints: ${second}")

# An output directory whose checkpoint paths MPI-IO cannot take (Open MPI aborted the run with a
# buffer overflow at the first checkpoint) is refused before computing.
string(REPEAT "d" 230 long)
execute_process(COMMAND ${TGV} --resolution 16 --quiet --no-plot --max-steps 4 --checkpoint-every 1
                        --output ${work}/${long} RESULT_VARIABLE rc ERROR_VARIABLE err)
file(REMOVE_RECURSE ${work}/${long})
if(rc EQUAL 0 OR NOT err MATCHES "is too long for snapshots and checkpoints")
  message(FATAL_ERROR "a ${long} output directory (${rc}): ${err}")
endif()
message(STATUS "a long output directory: ${err}")

# --restart latest with a damaged newest checkpoint falls back to the one before (it failed).
set(dir ${work}/tgv-restart-fallback)
file(REMOVE_RECURSE ${dir})
execute_process(COMMAND ${TGV} --resolution 16 --quiet --no-plot --max-steps 4 --checkpoint-every 1
                        --output ${dir} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS ${dir}/tgv_000000004.chk.h5)
  message(FATAL_ERROR "checkpointing run (${rc}): ${err}")
endif()
execute_process(COMMAND truncate -s 3000 ${dir}/tgv_000000004.chk.h5)
execute_process(COMMAND ${TGV} --resolution 16 --quiet --no-plot --max-steps 6 --output ${dir}
                        --restart latest RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
# diagnostics.csv: each step once, in order (the rows after the checkpoint were dropped, the
# restart's first row not repeated)
file(STRINGS ${dir}/diagnostics.csv rows)
list(POP_FRONT rows)
set(expect 0)
foreach(row IN LISTS rows)
  string(REGEX MATCH "^[0-9]+" got "${row}")
  if(NOT got EQUAL expect)
    message(FATAL_ERROR "diagnostics.csv after the restart: step ${got} where ${expect} was due")
  endif()
  math(EXPR expect "${expect} + 1")
endforeach()
file(REMOVE_RECURSE ${dir})
if(NOT rc EQUAL 0 OR NOT out MATCHES "restarting from [^\n]*tgv_000000003.chk.h5"
   OR NOT err MATCHES "skipping [^\n]*tgv_000000004.chk.h5")
  message(FATAL_ERROR "restart from a damaged newest checkpoint (${rc}): ${out} ${err}")
endif()
message(STATUS "a damaged newest checkpoint was skipped: ${err}")
