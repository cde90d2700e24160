# Compile one line, #include "HEADER", with a layer's include path (DIRS, '|'-separated) and
# EXTRA dirs (system headers the layer gets from its libraries), and check that it compiles
# (EXPECT pass) or fails because the header is not found (EXPECT fail): a layer sees its own
# private headers and those below it, never a higher layer's.
string(REPLACE "|" ";" dirs "${DIRS}|${EXTRA}")
set(flags "")
foreach(d IN LISTS dirs)
  if(d)
    list(APPEND flags "-I${d}")
  endif()
endforeach()
file(WRITE ${WORK}/probe_${NAME}.c "#include \"${HEADER}\"\nint flowcl_layer_probe;\n")
execute_process(COMMAND ${COMPILER} -std=c11 -D_POSIX_C_SOURCE=200809L -fsyntax-only ${flags}
                        ${WORK}/probe_${NAME}.c
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(EXPECT STREQUAL "pass" AND NOT rc EQUAL 0)
  message(FATAL_ERROR "${NAME}: \"${HEADER}\" should compile with this layer's path:\n${err}")
endif()
if(EXPECT STREQUAL "fail")
  if(rc EQUAL 0)
    message(FATAL_ERROR "${NAME}: \"${HEADER}\" compiled with a lower layer's include path")
  endif()
  # GCC: "field_impl.h: No such file or directory"; Clang: "'field_impl.h' file not found"
  if(NOT err MATCHES "${HEADER}: No such file" AND NOT err MATCHES "'${HEADER}' file not found")
    message(FATAL_ERROR "${NAME}: failed for another reason than the missing header:\n${err}")
  endif()
endif()
message(STATUS "${NAME}: ${EXPECT} as expected")
