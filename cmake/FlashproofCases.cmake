# flashproof_add_cases(): one CTest test per case file of a folder. The installed CMake package
# (find_package(flashproof)) provides it to every suite; this repository registers its own cases/
# with it too.
#
#   flashproof_add_cases(DIR <folder of case files>
#                        [SUITE_ROOT <dir>]       the suite (flashproof-suite.json); default: this source folder
#                        [RESULTS <dir>]          results of the CTest runs; default <build>/results-ci
#                        [GOLDEN_SETUP <dir>]     answers and verdicts the setup tests record; default <build>/golden-ci
#                        [REVIEWED_GOLDEN <dir>]  reviewed goldens timing is compared with; default the suite's golden/
#                        [MODEL_RECIPES <file>...])  recipes to generate first; default: those the cases name
#
# cases/NAME.json -> test "case:NAME" running `flashproof run`. A test never compares timing with a
# golden recorded by the same CTest run (a few minutes apart, one launch each, it would measure
# nothing). The setup test "golden:NAME" (a CTest fixture) records only what is exact and
# machine-specific into the build tree: the reference answers and the verdict
# (`--record-missing-answers`). "case:NAME" then runs the case again: its answers must match the
# setup's (stable across launches), its verdict the recorded one, and its timing figures are compared
# only with the reviewed goldens (REVIEWED_GOLDEN, for this machine's fingerprint, `--timing-golden`);
# where there are none, the result says "figures not compared: no reviewed golden for fingerprint ID"
# and that is no failure. Timing regressions are the paired gate's job (`flashproof gate`).
# A case with a "ctest" block is a self-test of flashproof: it must FAIL with the given exit code and
# print every given pattern (FLASHPROOF_EXPECT_FAILURE_SCRIPT checks both).
# The generated models the cases name ("model": {"recipe": ...}) are written first by the setup test
# "models:generate" (fixture "models").
#
# Needs the executable target flashproof::flashproof and FLASHPROOF_EXPECT_FAILURE_SCRIPT (the package
# sets both).

function(_flashproof_json_or out json default)
  string(JSON value ERROR_VARIABLE err GET "${json}" ${ARGN})
  if(err)
    set(value "${default}")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# Registers one case file (flashproof_add_cases passes its settings as _FP_* variables).
function(_flashproof_add_case case_file)
  get_filename_component(name ${case_file} NAME_WE)
  file(READ ${case_file} json)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${case_file})
  _flashproof_json_or(runtime "${json}" "unknown" runtime)
  _flashproof_json_or(job "${json}" "unknown" job)
  _flashproof_json_or(model "${json}" "" model recipe)
  if(model STREQUAL "")
    _flashproof_json_or(model "${json}" "model" model path)
  endif()
  get_filename_component(model ${model} NAME_WE)
  _flashproof_json_or(timeout "${json}" 300 plan timeout_s)
  _flashproof_json_or(backend "${json}" "CPU" expect backend)
  math(EXPR test_timeout "${timeout} * 2 + 60")
  set(labels ${runtime} ${job} model-${model} case)
  # Where a case runs decides how CTest shares the machine: CPU cases take the one CPU lock (they
  # time on the same cores); GPU cases take their GPUs from the resource spec
  # (`flashproof gpus --resource-spec FILE`, `ctest --resource-spec-file FILE`), and the harness hands
  # CTEST_RESOURCE_GROUP_0_GPUS to the runtime as CUDA_VISIBLE_DEVICES (src/runtime/ctest_gpus.h).
  # How many (gpus_needed in src/flow/passes/gpu_machine.h): the highest CUDA<k> in expect.backend (a name,
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
    # Timings on a small box mean nothing while another test (a fuzz build, a browser) runs: alone.
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

  set(fp $<TARGET_FILE:flashproof::flashproof>)
  set(run ${fp} run ${case_file} --root ${_FP_SUITE_ROOT} --quiet --results ${_FP_RESULTS})
  string(JSON expect_exit ERROR_VARIABLE no_ctest GET "${json}" ctest expect_exit)
  if(NOT no_ctest)
    string(JSON patterns_json GET "${json}" ctest expect_output)
    add_test(NAME case:${name}
      COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=${expect_exit} "-DPATTERNS_JSON=${patterns_json}"
              "-DCOMMAND=${fp};run;${case_file};--root;${_FP_SUITE_ROOT};--results;${_FP_RESULTS};--golden;${_FP_GOLDEN_SETUP}"
              -P ${FLASHPROOF_EXPECT_FAILURE_SCRIPT}
      WORKING_DIRECTORY ${_FP_SUITE_ROOT})
    set_tests_properties(case:${name} PROPERTIES LABELS "${labels};self-test" TIMEOUT ${test_timeout}
      FIXTURES_REQUIRED models ${share}
      # flashproof skipped it (no runtime, model or GPU here): a skip, not a failed self-test.
      SKIP_REGULAR_EXPRESSION "flashproof run: SKIP: ")
    return()
  endif()

  add_test(NAME golden:${name}
    COMMAND ${run} --golden ${_FP_GOLDEN_SETUP} --record-missing-answers
    WORKING_DIRECTORY ${_FP_SUITE_ROOT})
  set_tests_properties(golden:${name} PROPERTIES LABELS "${labels};golden-setup" TIMEOUT ${test_timeout}
    FIXTURES_SETUP golden-${name} FIXTURES_REQUIRED models SKIP_RETURN_CODE 125 ${share} ENVIRONMENT "FLASHPROOF_CTEST=1")
  add_test(NAME case:${name}
    COMMAND ${run} --golden ${_FP_GOLDEN_SETUP} --timing-golden ${_FP_REVIEWED_GOLDEN}
    WORKING_DIRECTORY ${_FP_SUITE_ROOT})
  set_tests_properties(case:${name} PROPERTIES LABELS "${labels}" TIMEOUT ${test_timeout}
    FIXTURES_REQUIRED "golden-${name};models" SKIP_RETURN_CODE 125 ${share} ENVIRONMENT "FLASHPROOF_CTEST=1")
endfunction()

function(flashproof_add_cases)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "DIR;SUITE_ROOT;RESULTS;GOLDEN_SETUP;REVIEWED_GOLDEN" "MODEL_RECIPES")
  if(NOT arg_DIR)
    message(FATAL_ERROR "flashproof_add_cases: give DIR, the folder of case files (e.g. DIR \${CMAKE_CURRENT_SOURCE_DIR}/cases)")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "flashproof_add_cases: unknown arguments ${arg_UNPARSED_ARGUMENTS}; valid: DIR SUITE_ROOT RESULTS GOLDEN_SETUP REVIEWED_GOLDEN MODEL_RECIPES")
  endif()
  if(NOT TARGET flashproof::flashproof)
    message(FATAL_ERROR "flashproof_add_cases: no target flashproof::flashproof (find_package(flashproof) defines it)")
  endif()
  get_filename_component(dir "${arg_DIR}" ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  if(NOT IS_DIRECTORY "${dir}")
    message(FATAL_ERROR "flashproof_add_cases: DIR ${dir}: not a folder")
  endif()
  set(_FP_SUITE_ROOT ${CMAKE_CURRENT_SOURCE_DIR})
  if(arg_SUITE_ROOT)
    get_filename_component(_FP_SUITE_ROOT "${arg_SUITE_ROOT}" ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
  # The suite's golden folder as its marker names it (case/suite.h), for the reviewed goldens.
  set(golden_name golden)
  if(EXISTS ${_FP_SUITE_ROOT}/flashproof-suite.json)
    file(READ ${_FP_SUITE_ROOT}/flashproof-suite.json marker)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_FP_SUITE_ROOT}/flashproof-suite.json)
    _flashproof_json_or(golden_name "${marker}" golden golden)
  endif()
  set(_FP_REVIEWED_GOLDEN ${_FP_SUITE_ROOT}/${golden_name})
  if(arg_REVIEWED_GOLDEN)
    set(_FP_REVIEWED_GOLDEN ${arg_REVIEWED_GOLDEN})
  endif()
  set(_FP_RESULTS ${CMAKE_BINARY_DIR}/results-ci)
  if(arg_RESULTS)
    set(_FP_RESULTS ${arg_RESULTS})
  endif()
  set(_FP_GOLDEN_SETUP ${CMAKE_BINARY_DIR}/golden-ci)
  if(arg_GOLDEN_SETUP)
    set(_FP_GOLDEN_SETUP ${arg_GOLDEN_SETUP})
  endif()

  file(GLOB case_files CONFIGURE_DEPENDS ${dir}/*.json)
  set(recipes ${arg_MODEL_RECIPES})
  if(NOT recipes)
    foreach(case_file ${case_files})
      file(READ ${case_file} json)
      _flashproof_json_or(recipe "${json}" "" model recipe)
      if(recipe)
        list(APPEND recipes ${_FP_SUITE_ROOT}/${recipe})
      endif()
    endforeach()
    list(REMOVE_DUPLICATES recipes)
  endif()
  # The generated models every case needs, before any case runs (once per build tree).
  if(recipes AND NOT TEST models:generate)
    add_test(NAME models:generate
      COMMAND $<TARGET_FILE:flashproof::flashproof> make-model ${recipes} --root ${_FP_SUITE_ROOT}
      WORKING_DIRECTORY ${_FP_SUITE_ROOT})
    set_tests_properties(models:generate PROPERTIES FIXTURES_SETUP models LABELS "models")
  endif()
  foreach(case_file ${case_files})
    _flashproof_add_case(${case_file})
  endforeach()
endfunction()
