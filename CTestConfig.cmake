# CDash: where `ctest -D Experimental|Nightly` and `ctest -S ci/dashboard.cmake` submit (docs/reports.md).
# The operator names the server: FLASHPROOF_CDASH_SUBMIT_URL in the environment (read when CMake
# configures the build, for `ctest -D`, and when the dashboard script runs), or -DFLASHPROOF_CDASH_SUBMIT_URL=
# at configure time, e.g. https://cdash.example.org/submit.php?project=flashproof
# What CDash receives per case: pass/fail/skip, the output (the failure's explanation), the key
# figures as measurements (<CTestMeasurement>, graphed per test by CDash) and the failure as Details.
set(CTEST_PROJECT_NAME "flashproof")
set(CTEST_NIGHTLY_START_TIME "01:00:00 UTC")
if(DEFINED ENV{FLASHPROOF_CDASH_SUBMIT_URL} AND NOT "$ENV{FLASHPROOF_CDASH_SUBMIT_URL}" STREQUAL "")
  set(CTEST_SUBMIT_URL "$ENV{FLASHPROOF_CDASH_SUBMIT_URL}")
elseif(FLASHPROOF_CDASH_SUBMIT_URL)
  set(CTEST_SUBMIT_URL "${FLASHPROOF_CDASH_SUBMIT_URL}")
else()
  # Nothing named: a submission fails with this address in the message instead of going anywhere.
  set(CTEST_SUBMIT_URL "http://cdash.invalid/submit.php?project=flashproof")
endif()
# Keep whole outputs of failing cases (the evidence quotes), and enough of passing ones.
set(CTEST_CUSTOM_MAXIMUM_FAILED_TEST_OUTPUT_SIZE 65536)
set(CTEST_CUSTOM_MAXIMUM_PASSED_TEST_OUTPUT_SIZE 16384)
