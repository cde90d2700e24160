# flowcl-sphere's checkpoints and restart (2 ranks, 4 points per diameter, a 6 x 3 x 3 box): a
# run to step 14 checkpointing every 5 steps, restarted from its latest checkpoint (step 10) to
# step 20, ends on the diagnostics.csv of a straight 20-step run byte for byte (the rows after
# the checkpoint dropped and computed again) and on the same mean drag (the history before the
# restart read back). A restart with another Reynolds number, and a fresh run into the taken
# directory, are refused; --overwrite removes the earlier checkpoints.
# cmake -DSPHERE=... -DMPIEXEC=... [-DOVERSUBSCRIBE=--oversubscribe] -DWORK_DIR=... -P sphere_restart.cmake
file(REMOVE_RECURSE ${WORK_DIR})
function(sphere dir)
  execute_process(COMMAND ${MPIEXEC} -n 2 ${OVERSUBSCRIBE} ${SPHERE} --resolution 4 --box 6,3,3
                          --quiet --no-plot --output ${WORK_DIR}/${dir} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(rc ${rc} PARENT_SCOPE)
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()
sphere(straight --max-steps 20)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the straight run failed (${rc}): ${err}")
endif()
string(REGEX MATCH "drag coefficient: [^\n]*" drag_straight "${out}")
sphere(restarted --max-steps 14 --checkpoint-every 5)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the checkpointing run failed (${rc}): ${err}")
endif()
sphere(restarted --max-steps 20 --restart latest)
if(NOT rc EQUAL 0 OR NOT out MATCHES "restarting from [^\n]*sphere_000000010.chk.h5"
   OR NOT out MATCHES "dropped 4 row")
  message(FATAL_ERROR "the restart (${rc}): ${out} ${err}")
endif()
string(REGEX MATCH "drag coefficient: [^\n]*" drag_restarted "${out}")
file(READ ${WORK_DIR}/straight/diagnostics.csv a)
file(READ ${WORK_DIR}/restarted/diagnostics.csv b)
if(NOT a STREQUAL b)
  message(FATAL_ERROR "diagnostics differ:\nstraight:\n${a}\nrestarted:\n${b}")
endif()
if(NOT drag_straight STREQUAL drag_restarted OR drag_straight STREQUAL "")
  message(FATAL_ERROR "summary: '${drag_straight}' straight, '${drag_restarted}' restarted")
endif()
message(STATUS "restart: the same 20 rows and '${drag_restarted}'")
sphere(restarted --max-steps 20 --restart latest --reynolds 200)
if(rc EQUAL 0 OR NOT err MATCHES "was written with reynolds = 100, this run has 200")
  message(FATAL_ERROR "a restart with another Reynolds number (${rc}): ${err}")
endif()
sphere(restarted --max-steps 2)
if(rc EQUAL 0 OR NOT err MATCHES "holds an earlier run")
  message(FATAL_ERROR "a fresh run into the taken directory (${rc}): ${err}")
endif()
sphere(restarted --max-steps 2 --overwrite)
file(GLOB left ${WORK_DIR}/restarted/*.chk.h5)
if(NOT rc EQUAL 0 OR NOT out MATCHES "removed 2 checkpoint" OR left)
  message(FATAL_ERROR "--overwrite (${rc}): ${out} ${err}; left: ${left}")
endif()
