# flowcl-info must exit with 0 and print a passed self-check for every test device.
# cmake -DINFO=... -P flowcl_info.cmake
execute_process(COMMAND ${INFO} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 250)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "flowcl-info exited with ${rc}:\n${out}\n${err}")
endif()
if(NOT out MATCHES "self-check on .*: passed" OR out MATCHES "self-check on [^\n]*: FAILED")
  message(FATAL_ERROR "flowcl-info did not pass its self-check:\n${out}")
endif()
message(STATUS "${out}")
