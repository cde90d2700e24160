# flowcl-sphere's smoke run (PoCL, seconds): Re = 100 on 4 points per diameter in a 6 x 3 x 3 box
# to t = 2 on 2 ranks. The drag must point along the stream with a coefficient of the right
# order (the published 1.09 at Re = 100 needs a finer grid and a larger box: 0.5 to 10 here),
# the lift must stay small beside it (the flow is axisymmetric at Re = 100), and the velocity
# divergence-free to the differences' accuracy (rms(div u) / max|grad u| below 0.05); snapshots
# at t = 0, 1, 2 with a well-formed XDMF sidecar; the last step, shortened to reach t = 2 (dt 56
# times smaller), shows the drag of the steps before it (within 10 %: the penalization removes
# the slip of the full step before it, and the force is that over its dt); --benchmark gives a median step and the
# report per operator and writes no files.
# cmake -DSPHERE=... -DMPIEXEC=... [-DOVERSUBSCRIBE=--oversubscribe] -DWORK_DIR=... -P sphere_smoke.cmake
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${MPIEXEC} -n 2 ${OVERSUBSCRIBE} ${SPHERE} --resolution 4 --box 6,3,3
                        --t-end 2 --snapshot-every 1 --quiet --output ${WORK_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "flowcl-sphere failed (${rc}): ${err}")
endif()
string(REGEX MATCH "drag coefficient: ([-0-9.e+]+)" m "${out}")
set(cd ${CMAKE_MATCH_1})
string(REGEX MATCH "max\\|grad u\\| = ([-0-9.e+]+)" m "${out}")
set(div ${CMAKE_MATCH_1})
file(STRINGS ${WORK_DIR}/diagnostics.csv rows)
list(GET rows -1 last)
list(GET rows -2 before)
string(REPLACE "," ";" last "${last}")
string(REPLACE "," ";" before "${before}")
list(GET last 3 cd_last)
list(GET before 3 cd_before)
list(GET last 4 cly)
list(GET last 5 clz)
if("${cd}" STREQUAL "" OR "${div}" STREQUAL "")
  message(FATAL_ERROR "no drag coefficient or divergence in the output")
endif()
execute_process(COMMAND awk -v cd=${cd} -v div=${div} -v y=${cly} -v z=${clz}
                        "BEGIN { ly = y < 0 ? -y : y; lz = z < 0 ? -z : z; exit !(cd > 0.5 && cd < 10 && div < 0.05 && ly < 0.01 * cd && lz < 0.01 * cd) }"
                RESULT_VARIABLE bad)
if(bad)
  message(FATAL_ERROR "drag coefficient ${cd} (0.5 to 10), lift ${cly} ${clz} (below 1 % of it), divergence ratio ${div} (below 0.05)")
endif()
execute_process(COMMAND awk -v a=${cd_last} -v b=${cd_before} "BEGIN { exit !(a > 0.9 * b && a < 1.1 * b) }"
                RESULT_VARIABLE bad)
if(bad)
  message(FATAL_ERROR "the last step's drag ${cd_last} is not the step before's ${cd_before} (within 10 %)")
endif()
file(GLOB snapshots ${WORK_DIR}/flow_*.h5)
list(LENGTH snapshots count)
if(NOT count EQUAL 3)
  message(FATAL_ERROR "${count} snapshots, expected 3 (t = 0, 1, 2)")
endif()
find_program(XMLLINT xmllint)
if(XMLLINT)
  execute_process(COMMAND ${XMLLINT} --noout ${WORK_DIR}/flow.xdmf RESULT_VARIABLE bad)
  if(bad)
    message(FATAL_ERROR "flow.xdmf is not well-formed XML")
  endif()
endif()
# --benchmark: a median step and the report per operator, no files
execute_process(COMMAND ${MPIEXEC} -n 2 ${OVERSUBSCRIBE} ${SPHERE} --resolution 4 --box 6,3,3
                        --benchmark --max-steps 3 --output ${WORK_DIR}/benchmark
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "step \\(median of 3" OR NOT out MATCHES "penalization"
   OR EXISTS ${WORK_DIR}/benchmark)
  message(FATAL_ERROR "flowcl-sphere --benchmark (${rc}): ${out}${err}")
endif()
