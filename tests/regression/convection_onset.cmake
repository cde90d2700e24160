# flowcl-convection's linear onset (PoCL, seconds): Ra = 5000, Pr = 7, free slip, the critical
# wavenumber, 17 points vertically; the kinetic energy's growth rate over the last 40 % of the
# run against the dispersion relation's 57.5694 (within 1 %: validate.sh holds every case to
# 0.03 % at finer settings); 2 ranks give the 1-rank energies to 1e-6; the same rate in 3D;
# snapshots at t = 0, 0.04, 0.08 with their XDMF sidecar (HDF5 builds); theta on a grid twice as
# fine (--scalar-refinement 2: 33 x 45 points, the restriction second order: -0.32 % at 17
# points, -0.08 % at 33) grows at the same rate within 1 %.
# cmake -DCONVECTION=... -DMPIEXEC=... [-DOVERSUBSCRIBE=...] -DWORK_DIR=... -DHDF5=ON|OFF -P ...
file(REMOVE_RECURSE ${WORK_DIR})
set(snap "")
if(HDF5)
  set(snap --snapshot-every 0.04)
endif()
foreach(np 1 2)
  execute_process(COMMAND ${MPIEXEC} -n ${np} ${OVERSUBSCRIBE} ${CONVECTION} --rayleigh 5000
                          --prandtl 7 --resolution 17 --t-end 0.08 --dt 2e-4 --amplitude 1e-8
                          --diagnostics-every 10 ${snap} --no-plot --quiet
                          --output ${WORK_DIR}/np${np}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "flowcl-convection on ${np} rank(s) failed (${rc}): ${out} ${err}")
  endif()
endforeach()
# 3D (9 x 23 x 23 points, theta ~ sin(pi z)(cos(k x) + cos(k y))): the same rate, through the
# 3D buoyancy, Biot-Savart and free-slip conditions, with the stretching (negligible here)
execute_process(COMMAND ${MPIEXEC} -n 1 ${OVERSUBSCRIBE} ${CONVECTION} --dim 3 --rayleigh 5000
                        --prandtl 7 --resolution 9 --t-end 0.08 --dt 2e-4 --amplitude 1e-8
                        --diagnostics-every 10 --no-plot --quiet --output ${WORK_DIR}/3d
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "flowcl-convection --dim 3 failed (${rc}): ${out} ${err}")
endif()
execute_process(COMMAND ${MPIEXEC} -n 1 ${OVERSUBSCRIBE} ${CONVECTION} --rayleigh 5000 --prandtl 7
                        --resolution 17 --scalar-refinement 2 --t-end 0.08 --dt 2e-4
                        --amplitude 1e-8 --diagnostics-every 10 --no-plot --quiet
                        --output ${WORK_DIR}/refined
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "flowcl-convection --scalar-refinement 2 failed (${rc}): ${out} ${err}")
endif()
foreach(run np1 3d refined)
execute_process(COMMAND awk -F, "
    /^#/ || $1 == \"step\" { next }
    { t[n] = $2; e[n] = $4; n++ }
    END {
      first = int(0.6 * (n - 1));
      sigma = log(e[n - 1] / e[first]) / (2 * (t[n - 1] - t[first]));
      err = (sigma - 57.5694) / 57.5694;
      printf \"growth rate %.6g (dispersion relation 57.5694, %.3g %%)\\n\", sigma, 100 * err;
      exit !(err < 0.01 && err > -0.01) }" ${WORK_DIR}/${run}/diagnostics.csv
                RESULT_VARIABLE bad OUTPUT_VARIABLE msg)
message(STATUS "${run}: ${msg}")
if(bad)
  message(FATAL_ERROR "the onset's growth rate is off (${run}): ${msg}")
endif()
endforeach()
execute_process(COMMAND awk -F, "
    FNR == 1 { f++ }
    /^#/ || $1 == \"step\" { next }
    f == 1 { e[$1] = $4; next }
    { d = $4 - e[$1]; if (d < 0) d = -d; if (d > 1e-6 * ($4 < 0 ? -$4 : $4) + 1e-300) bad = 1 }
    END { exit bad }" ${WORK_DIR}/np1/diagnostics.csv ${WORK_DIR}/np2/diagnostics.csv
                RESULT_VARIABLE bad)
if(bad)
  message(FATAL_ERROR "2 ranks' energies differ from 1 rank's by more than 1e-6")
endif()
if(HDF5)
  file(GLOB snapshots ${WORK_DIR}/np1/convection_*.h5)
  list(LENGTH snapshots count)
  if(NOT count EQUAL 3)
    message(FATAL_ERROR "${count} snapshots, expected 3 (t = 0, 0.04, 0.08)")
  endif()
endif()
