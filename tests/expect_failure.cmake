# Runs COMMAND and passes only when it exits with EXPECT_EXIT and its output matches every regex in
# PATTERNS_JSON (a JSON array): a self-test that flashproof fails a broken deployment, with the
# evidence quoted, rather than failing for any other reason (or, with EXPECT_EXIT=0, passes a sound
# one and prints what it established).
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
message("${all}")
if(NOT rc EQUAL EXPECT_EXIT)
  message(FATAL_ERROR "expected exit ${EXPECT_EXIT}, got ${rc}")
endif()
string(JSON n LENGTH "${PATTERNS_JSON}")
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  string(JSON pattern GET "${PATTERNS_JSON}" ${i})
  if(NOT all MATCHES "${pattern}")
    message(FATAL_ERROR "the output does not match the expected pattern: ${pattern}")
  endif()
endforeach()
message("flashproof exited as expected (${rc}), every expected pattern present")
