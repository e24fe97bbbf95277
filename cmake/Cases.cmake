# One CTest test per case file: cases/NAME.json -> test "case:NAME" running `flashproof run`.
#
# A test never compares timing with a golden recorded by the same CTest run (a few minutes apart, one
# launch each, it would measure nothing). The setup test "golden:NAME" (a CTest fixture) records only
# what is exact and machine-specific into the build tree: the reference answers and the verdict
# (`--record-missing-answers`). "case:NAME" then runs the case again: its answers must match the
# setup's (stable across launches), its verdict the recorded one, and its timing figures are compared
# only with the committed, reviewed goldens in golden/ for this machine's fingerprint
# (`--timing-golden`); where there are none, the result says "figures not compared: no reviewed golden
# for fingerprint ID" and that is no failure. Timing regressions are the paired gate's job
# (gate:same-build, gate:reduced-build).
# A case with a "ctest" block is a self-test of flashproof: it must FAIL with the given exit code and
# print every given pattern (tests/expect_failure.cmake checks both).

set(FP_CASE_GOLDEN_DIR ${CMAKE_BINARY_DIR}/golden-ci)
set(FP_REVIEWED_GOLDEN_DIR ${PROJECT_SOURCE_DIR}/golden)
set(FP_CASE_RESULTS_DIR ${CMAKE_BINARY_DIR}/results-ci)

function(fp_json_or out json default)
  string(JSON value ERROR_VARIABLE err GET "${json}" ${ARGN})
  if(err)
    set(value "${default}")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

function(fp_add_case case_file)
  get_filename_component(name ${case_file} NAME_WE)
  file(READ ${case_file} json)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${case_file})
  fp_json_or(runtime "${json}" "unknown" runtime)
  fp_json_or(job "${json}" "unknown" job)
  fp_json_or(model "${json}" "" model recipe)
  if(model STREQUAL "")
    fp_json_or(model "${json}" "model" model path)
  endif()
  get_filename_component(model ${model} NAME_WE)
  fp_json_or(timeout "${json}" 300 plan timeout_s)
  fp_json_or(backend "${json}" "CPU" expect backend)
  math(EXPR test_timeout "${timeout} * 2 + 60")
  set(labels ${runtime} ${job} model-${model} case)
  # Where a case runs decides how CTest shares the machine: CPU cases take the one CPU lock (they
  # time on the same cores); GPU cases take their GPUs from the resource spec
  # (`flashproof gpus --resource-spec FILE`, `ctest --resource-spec-file FILE`), and the harness hands
  # CTEST_RESOURCE_GROUP_0_GPUS to the runtime as CUDA_VISIBLE_DEVICES (src/runtime/ctest_gpus.h).
  # How many (gpus_needed in src/flow/gpu_machine.h): the highest CUDA<k> in expect.backend (a name,
  # a comma list or an array) plus one, so "CUDA1" and ["CUDA0","CUDA1"] both need gpus:2; "all-gpus"
  # needs the GPUs the machine declares ($FLASHPROOF_EXPECT_GPUS at configure time), else 1. N GPUs
  # are N resource groups of one slot each ("2,gpus:1"): two distinct GPUs, never two slots of one.
  # Vulkan cases carry the label "vulkan". On a machine without a GPU they run on Mesa's lavapipe, on
  # the CPU cores: they take the CPU lock (NVML's resource spec counts NVIDIA GPUs only).
  if(backend MATCHES "Vulkan")
    list(APPEND labels vulkan)
  endif()
  if(backend MATCHES "(CUDA|ROCm|Metal|all-gpus)")
    list(APPEND labels gpu)
    set(gpus 1)
    string(REGEX MATCHALL "CUDA[0-9]+" cuda_names "${backend}")
    foreach(n ${cuda_names})
      string(SUBSTRING "${n}" 4 -1 k)
      math(EXPR need "${k} + 1")
      if(need GREATER gpus)
        set(gpus ${need})
      endif()
    endforeach()
    if(backend MATCHES "all-gpus" AND DEFINED ENV{FLASHPROOF_EXPECT_GPUS})
      set(gpus $ENV{FLASHPROOF_EXPECT_GPUS})
    endif()
    if(gpus GREATER 1)
      set(share RESOURCE_GROUPS "${gpus},gpus:1")
    else()
      set(share RESOURCE_GROUPS "gpus:1")
    endif()
  else()
    if(NOT backend MATCHES "Vulkan")
      list(APPEND labels cpu)
    endif()
    # Timings on a 2-core box mean nothing while another test (a fuzz build, a browser) runs: alone.
    set(share RESOURCE_LOCK runtime-cpu RUN_SERIAL TRUE)
  endif()
  string(JSON nlabels ERROR_VARIABLE err LENGTH "${json}" labels)
  if(NOT err AND nlabels GREATER 0)
    math(EXPR last "${nlabels} - 1")
    foreach(i RANGE ${last})
      string(JSON l GET "${json}" labels ${i})
      list(APPEND labels ${l})
    endforeach()
    list(REMOVE_DUPLICATES labels)
  endif()

  set(run $<TARGET_FILE:flashproof> run ${case_file} --quiet --results ${FP_CASE_RESULTS_DIR})
  string(JSON expect_exit ERROR_VARIABLE no_ctest GET "${json}" ctest expect_exit)
  if(NOT no_ctest)
    string(JSON patterns_json GET "${json}" ctest expect_output)
    add_test(NAME case:${name}
      COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=${expect_exit} "-DPATTERNS_JSON=${patterns_json}"
              "-DCOMMAND=$<TARGET_FILE:flashproof>;run;${case_file};--results;${FP_CASE_RESULTS_DIR};--golden;${FP_CASE_GOLDEN_DIR}"
              -P ${PROJECT_SOURCE_DIR}/tests/expect_failure.cmake
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(case:${name} PROPERTIES LABELS "${labels};self-test" TIMEOUT ${test_timeout}
      FIXTURES_REQUIRED models ${share}
      # flashproof skipped it (no runtime, model or GPU here): a skip, not a failed self-test.
      SKIP_REGULAR_EXPRESSION "flashproof run: SKIP: ")
    return()
  endif()

  add_test(NAME golden:${name}
    COMMAND ${run} --golden ${FP_CASE_GOLDEN_DIR} --record-missing-answers
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(golden:${name} PROPERTIES LABELS "${labels};golden-setup" TIMEOUT ${test_timeout}
    FIXTURES_SETUP golden-${name} FIXTURES_REQUIRED models SKIP_RETURN_CODE 125 ${share} ENVIRONMENT "FLASHPROOF_CTEST=1")
  add_test(NAME case:${name}
    COMMAND ${run} --golden ${FP_CASE_GOLDEN_DIR} --timing-golden ${FP_REVIEWED_GOLDEN_DIR}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(case:${name} PROPERTIES LABELS "${labels}" TIMEOUT ${test_timeout}
    FIXTURES_REQUIRED "golden-${name};models" SKIP_RETURN_CODE 125 ${share} ENVIRONMENT "FLASHPROOF_CTEST=1")
endfunction()

# The generated models every case needs, before any case runs.
file(GLOB FP_MODEL_RECIPES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/fixtures/models/*.json)
add_test(NAME models:generate
  COMMAND $<TARGET_FILE:flashproof> make-model ${FP_MODEL_RECIPES}
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(models:generate PROPERTIES FIXTURES_SETUP models LABELS "models")

file(GLOB FP_CASE_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/cases/*.json)
foreach(case_file ${FP_CASE_FILES})
  fp_add_case(${case_file})
endforeach()
