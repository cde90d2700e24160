# flowcl-tgv --benchmark counts the host's waits for the device in each step: with the adaptive
# dt, one (the dt measure's reductions, waited for together); with a fixed --dt, at most one:
# the advection's deferred CFL check waits for the reduction of the step cfl_lag = 2 steps back
# (a wait only while the host is that far ahead), and the stretching's stage exchanges only
# enqueue. VkFFT, so that the transforms run on the device too (FFTW's wait on the host).
# cmake -DTGV=... -DWORK_DIR=... -P tgv_host_syncs.cmake
# a run's limit, longer under the sanitizers (-DSLOWDOWN: flowcl_test_timeout's factor)
if(NOT SLOWDOWN)
  set(SLOWDOWN 1)
endif()
math(EXPR run_timeout "500 * ${SLOWDOWN}")
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
foreach(mode adaptive fixed)
  set(args "")
  set(most 1)
  if(mode STREQUAL "fixed")
    set(args --dt 0.01)
  endif()
  execute_process(COMMAND ${TGV} --resolution 16 --benchmark --max-steps 3 --fft vkfft ${args}
                          --json ${WORK_DIR}/${mode}.json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${run_timeout})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${mode} benchmark failed (${rc}): ${err}")
  endif()
  file(READ ${WORK_DIR}/${mode}.json json)
  string(JSON n LENGTH "${json}" results)
  math(EXPR last "${n} - 1")
  set(syncs "")
  foreach(i RANGE ${last})
    string(JSON name GET "${json}" results ${i} name)
    if(name STREQUAL "host_syncs_per_step")
      string(JSON syncs GET "${json}" results ${i} value)
      string(JSON dt GET "${json}" results ${i} dt)
    endif()
  endforeach()
  if(syncs STREQUAL "" OR NOT dt STREQUAL mode)
    message(FATAL_ERROR "${mode}: no host_syncs_per_step for this dt in the JSON")
  endif()
  if(syncs GREATER most)
    message(FATAL_ERROR "${mode} dt: ${syncs} host syncs per step (at most ${most})")
  endif()
  message(STATUS "${mode} dt: ${syncs} host syncs per step")
endforeach()
