// The goldens committed in golden/ serve the default run on the machines they name, and CTest's case
// tests compare timing with them where the fingerprint matches (cmake/FlashproofCases.cmake): each must load
// (schema 2: medians of launches), belong to a case that exists, carry its fingerprint, and hold a
// reference answer for every prompt of that case's prompt set.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "case/case_file.h"
#include "case/prompt_set.h"
#include "golden/answers.h"
#include "golden/golden_file.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

TEST(CommittedGoldens, EveryGoldenLoadsAndMatchesItsCase) {
  auto suite = load_suite(FLASHPROOF_SOURCE_DIR);
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  const fs::path root = suite->golden;
  if (!fs::is_directory(root)) GTEST_SKIP() << "no golden/ folder";
  int checked = 0;
  for (const auto& machine : fs::directory_iterator(root)) {
    if (!machine.is_directory()) continue;
    const std::string id = machine.path().filename().string();
    auto fp_text = read_file((machine.path() / "fingerprint.json").string());
    ASSERT_TRUE(fp_text.ok()) << fp_text.error().message;
    auto fp_json = nlohmann::json::parse(*fp_text);
    EXPECT_EQ(fp_json.value("id", ""), id) << "fingerprint.json of " << id << " names another id";
    for (const auto& file : fs::directory_iterator(machine.path())) {
      if (file.path().extension() != ".json" || file.path().filename() == "fingerprint.json") continue;
      const std::string case_name = file.path().stem().string();
      auto golden = load_golden(file.path().string());
      ASSERT_TRUE(golden.ok()) << golden.error().message;
      EXPECT_EQ(golden->fingerprint, id) << file.path();
      const std::string case_path = suite->cases + "/" + case_name + ".json";
      ASSERT_TRUE(fs::exists(case_path)) << "golden for a case that does not exist: " << case_name;
      auto c = load_case(case_path, *suite);
      if (!c.ok()) continue;  // its model is not generated in this checkout
      auto prompts = load_prompt_set(*suite, c->shape.prompt_set, c->shape.long_prompt);
      ASSERT_TRUE(prompts.ok()) << prompts.error().message;
      for (const auto& p : *prompts) {
        auto answer = load_reference_answer((machine.path() / case_name / "answers").string(), p.id);
        EXPECT_TRUE(answer.ok()) << id << "/" << case_name << ": " << (answer.ok() ? "" : answer.error().message);
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0) << "golden/ holds no golden";
}

}  // namespace
}  // namespace fp
