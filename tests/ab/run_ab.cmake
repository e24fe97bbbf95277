# Included by the ab checks: runs `flashproof ab ...` (COMMAND) into a fresh OUT. Exit 0, 1 or 3 is a
# finished A/B (the verdict on the flag, or that the budget could not settle it, is the report's
# business); 2 is incomplete and fails; 125 skips. Leaves rc, out and err set.
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 125)
  message("${err}")
  cmake_language(EXIT 125)
endif()
if(NOT (rc EQUAL 0 OR rc EQUAL 1 OR rc EQUAL 3))
  message(FATAL_ERROR "flashproof ab exited ${rc} (expected 0, 1 or 3); files kept in ${OUT}\n${out}\n${err}")
endif()
