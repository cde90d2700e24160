# flowcl-tgv on 1, 2 and 4 ranks (20 steps, 32^3, float): energy, enstrophy, 2 nu enstrophy and
# max|w| of the last diagnostics row agree to 1e-6 relative (the decompositions only reorder
# float sums). -dE/dt, a difference of two energies over dt, amplifies those reorderings by
# E / dE (about 1e3 here) and is compared to 1e-2.
# cmake -DTGV=... -DMPIEXEC=... [-DOVERSUBSCRIBE=--oversubscribe] -DWORK_DIR=... -P tgv_ranks_agree.cmake
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(columns 3 4 6 7 8) # energy, enstrophy, -dE/dt, 2 nu enstrophy, max|w| (0-based)
foreach(n 1 2 4)
  execute_process(COMMAND ${MPIEXEC} -n ${n} ${OVERSUBSCRIBE} ${TGV} --resolution 32 --max-steps 20
                          --no-plot --quiet --output ${WORK_DIR}/r${n}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "flowcl-tgv on ${n} rank(s) failed (${rc}): ${err}")
  endif()
  file(STRINGS ${WORK_DIR}/r${n}/diagnostics.csv rows)
  list(GET rows -1 last)
  string(REPLACE "," ";" last "${last}")
  set(row${n} "${last}")
endforeach()
list(GET row1 0 step)
if(NOT step EQUAL 20)
  message(FATAL_ERROR "the 1-rank run stopped at step ${step}, not 20")
endif()
foreach(n 2 4)
  foreach(c IN LISTS columns)
    list(GET row1 ${c} a)
    list(GET row${n} ${c} b)
    set(tol 1e-6)
    if(c EQUAL 6)
      set(tol 1e-2)
    endif()
    # cmake has no floating point: compare in awk
    execute_process(COMMAND awk -v a=${a} -v b=${b} -v t=${tol}
                            "BEGIN { d = (a - b) / a; if (d < 0) d = -d; printf \"%.3g\", d; exit !(d <= t) }"
                    RESULT_VARIABLE bad OUTPUT_VARIABLE rel)
    message(STATUS "column ${c}: 1 rank ${a}, ${n} ranks ${b}, relative difference ${rel} (tolerance ${tol})")
    if(bad)
      message(FATAL_ERROR "column ${c} of the diagnostics differs between 1 and ${n} ranks by ${rel} (tolerance ${tol})")
    endif()
  endforeach()
endforeach()
