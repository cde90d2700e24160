# flowcl-tgv with outputs it cannot write: each fails at once (before computing 100000 steps)
# with the system's reason. cmake -DTGV=... -P tgv_bad_outputs.cmake
function(expect_failure expect)
  string(REPLACE ";" " " shown "${ARGN}")
  execute_process(COMMAND ${TGV} --resolution 16 --quiet --no-plot --max-steps 100000 ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
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
