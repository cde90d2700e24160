# Warning and sanitizer flags, applied to flowcl's own targets through flowcl_warnings().
add_library(flowcl_warnings INTERFACE)
target_compile_options(flowcl_warnings INTERFACE -Wall -Wextra -Wshadow -Wstrict-prototypes
                                                 $<$<BOOL:${FLOWCL_WERROR}>:-Werror>)
if(FLOWCL_SANITIZE)
  target_compile_options(flowcl_warnings INTERFACE -fsanitize=address,undefined
                                                   -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(flowcl_warnings INTERFACE -fsanitize=address,undefined)
endif()
if(FLOWCL_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "FLOWCL_FUZZ needs clang (libFuzzer); use the fuzz preset")
  endif()
  target_compile_options(flowcl_warnings INTERFACE -fsanitize=fuzzer-no-link)
endif()
