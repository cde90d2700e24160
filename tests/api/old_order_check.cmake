# Compile tests/api/old_orders.c for one case (CASE) twice with the public headers: in today's
# order it must compile; in the order before 0.2 it must fail, and the compiler's output must
# match EXPECT (what the mistake is). -Werror=int-conversion makes Clang before 15 refuse a
# pointer passed for an enum as GCC does by default (Clang 14 only warns).
string(REPLACE "|" ";" dirs "${DIRS}")
set(flags "")
foreach(d IN LISTS dirs)
  if(d)
    list(APPEND flags "-I${d}")
  endif()
endforeach()
set(compile ${COMPILER} -std=c11 -fsyntax-only -Werror=int-conversion ${flags} -DCASE_${CASE}
            ${SOURCE})
execute_process(COMMAND ${compile} -DNEW_ORDER RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CASE}: today's order does not compile:\n${err}")
endif()
execute_process(COMMAND ${compile} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${CASE}: the order before 0.2 compiles:\n${err}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "${CASE}: failed, but not with \"${EXPECT}\":\n${err}")
endif()
message(STATUS "${CASE}: the old order fails to compile:\n${err}")
