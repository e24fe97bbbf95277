#include "evidence/instrument_rules.h"

#include <gtest/gtest.h>

#include "runtime/runtime_data.h"
#include "testing/recorded_runs.h"

namespace fp {
namespace {

using fp::testing::llama_signatures;

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

std::vector<std::string> breakages(const InstrumentRules& rules, const Facts& facts) {
  std::vector<std::string> names;
  for (const auto& f : match_known_breakages(rules, facts)) names.push_back(f.rule);
  return names;
}

// Iterates the data files: a last-words pattern or a known breakage added without a sample it
// matches, or matching its counter example, fails here.
TEST(InstrumentRules, EveryPatternAndBreakageMatchesItsSamplesAndNotItsCounterExamples) {
  for (const char* runtime : {"llama-server", "vllm", "openai-compatible-llama-server"}) {
    auto sigs = load_runtime_signatures(runtime);
    ASSERT_TRUE(sigs.ok()) << sigs.error().message;
    const InstrumentRules& rules = sigs->instruments;
    for (const auto& r : rules.last_words) {
      for (const auto& ex : r.examples) EXPECT_TRUE(regex_search(ex, r.regex)) << runtime << ": " << r.name << ": " << ex;
      for (const auto& ex : r.counter_examples)
        EXPECT_FALSE(regex_search(ex, r.regex)) << runtime << ": " << r.name << " matches its counter example " << ex;
    }
    for (const auto& b : rules.known_breakages) {
      ASSERT_FALSE(b.examples.empty()) << b.name;
      for (const auto& ex : b.examples) {
        auto names = breakages(rules, ex.facts);
        EXPECT_NE(std::find(names.begin(), names.end(), b.name), names.end()) << runtime << ": " << b.name << " misses its example";
      }
      for (const auto& ex : b.counter_examples) {
        auto names = breakages(rules, ex.facts);
        EXPECT_EQ(std::find(names.begin(), names.end(), b.name), names.end()) << runtime << ": " << b.name << " matches its counter example";
      }
      // The runtime's words it quotes are what the last-words patterns find in a log ending with them.
      EXPECT_EQ(last_words("0.01.000.000 I srv  update_slots: all slots are idle\n" + b.runtime_words + "\n[New LWP 4242]\n", rules),
                b.runtime_words)
          << b.name;
    }
  }
}

// llama-server's data knows the H200 breakage (issue 25): the perf logger with partial offload in
// build 11669, from the launch line and the model's header.
TEST(InstrumentRules, PerfLoggerWithPartialOffloadOnBuild11669) {
  const auto& rules = llama_signatures().instruments;
  const Facts h200 = {{"expected_backend", "Vulkan0"}, {"build", "11669"}, {"gpu_layers", "2"}, {"layers", "4"}};
  auto found = match_known_breakages(rules, h200);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].instrument, "device_timings");
  EXPECT_EQ(found[0].facts, "build 11669; -ngl 2; layers 4");
  EXPECT_TRUE(has(found[0].text(), "partial offload: -ngl 2 of 4 layers")) << found[0].text();
  EXPECT_TRUE(has(found[0].text(), "GGML_ASSERT(ctx->compute_ctx.expired()) failed")) << found[0].text();
  // Every layer offloaded, or no launch-line -ngl at all (the runtime's own choice): not known to break.
  EXPECT_TRUE(match_known_breakages(rules, {{"expected_backend", "Vulkan0"}, {"build", "11669"}, {"layers", "4"}}).empty());
}

// The recorded abort (lavapipe, the H200's configuration: the realistic model, -fa on -ngl 2,
// GGML_VK_PERF_LOGGER=1, build 11669): the rule's words are what the log says, under gdb's backtrace.
TEST(InstrumentRules, TheRecordedAbortSaysTheRulesWords) {
  const auto& rules = llama_signatures().instruments;
  auto text = read_file(fp::testing::fixture("logs/lavapipe-perf/realistic_ngl2_abort.log.gz"));
  ASSERT_TRUE(text.ok()) << text.error().message;
  ASSERT_FALSE(rules.known_breakages.empty());
  EXPECT_EQ(last_words(*text, rules), rules.known_breakages[0].runtime_words);
  EXPECT_TRUE(has(*text, "load_tensors: offloaded 2/5 layers to GPU"));
  EXPECT_TRUE(has(*text, "processing task"));  // on the first request, after the server was ready
}

TEST(InstrumentRules, LastWordsAreTheLastMatchingLineElseTheLastLine) {
  const auto& rules = llama_signatures().instruments;
  const std::string abort_log =
      "0.00.216.053 I slot launch_slot_: id  0 | task 0 | processing task, is_child = 0\n"
      "./src/ggml-vulkan/ggml-vulkan.cpp:14327: GGML_ASSERT(ctx->compute_ctx.expired()) failed\n"
      "[New LWP 4242]\n"
      "\n";
  EXPECT_EQ(last_words(abort_log, rules), "./src/ggml-vulkan/ggml-vulkan.cpp:14327: GGML_ASSERT(ctx->compute_ctx.expired()) failed");
  // The assertion at the end of a scheduler debug line (stderr unbuffered, the debug output not; seen
  // in CTest on lavapipe): the words start at the path, without the debug line's "]".
  EXPECT_EQ(last_words("0.00.715.495 D node # 89 (       ADD):            ffn_inp-2 ( 148K) [Vulka         ]"
                       "./src/ggml-vulkan/ggml-vulkan.cpp:14327: GGML_ASSERT(ctx->compute_ctx.expired()) failed\n",
                       rules),
            "./src/ggml-vulkan/ggml-vulkan.cpp:14327: GGML_ASSERT(ctx->compute_ctx.expired()) failed");
  // ... and at the end of a split's debug line, glued to its last word (seen in CI): not "inputs./src".
  EXPECT_EQ(last_words("0.00.715.101 D ## SPLIT #0: CPU # 0 inputs"
                       "./src/ggml-vulkan/ggml-vulkan.cpp:14327: GGML_ASSERT(ctx->compute_ctx.expired()) failed\n",
                       rules),
            "./src/ggml-vulkan/ggml-vulkan.cpp:14327: GGML_ASSERT(ctx->compute_ctx.expired()) failed");
  // Nothing the patterns know: the last line, as it is.
  EXPECT_EQ(last_words("a\n  model loading failed: reason  \n\n", rules), "model loading failed: reason");
  EXPECT_EQ(last_words("", rules), "");
}

TEST(InstrumentRules, BadRulesNameTheField) {
  auto parse = [](const char* text) { return parse_instrument_rules(nlohmann::json::parse(text), "f.json: evidence.instruments"); };
  auto unknown = parse(R"({"known_breakages": [{"name": "x", "instrument": "perf", "when": {"fact_in": {"build": ["1"]}},
      "breaks": "b", "runtime_words": "w", "seen": "s", "comment": "c", "examples": [{}]}]})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(has(unknown.error().message, "f.json: evidence.instruments.known_breakages[0].instrument: value \"perf\" is not an "
                                           "instrument; valid: device_timings, kernel_probe, scheduler_debug, verbose_logging"))
      << unknown.error().message;
  auto on_log = parse(R"({"known_breakages": [{"name": "x", "instrument": "kernel_probe", "when": {"log": "CUDA"},
      "breaks": "b", "runtime_words": "w", "seen": "s", "comment": "c", "examples": [{}]}]})");
  ASSERT_FALSE(on_log.ok());
  EXPECT_TRUE(has(on_log.error().message, "decides before the launch")) << on_log.error().message;
  auto unquoted = parse(R"J({"last_words": [{"name": "a", "pattern": "GGML_ASSERT.*", "comment": "c", "examples": ["GGML_ASSERT(x)"]}],
      "known_breakages": [{"name": "x", "instrument": "kernel_probe", "when": {"fact_in": {"build": ["1"]}},
      "breaks": "b", "runtime_words": "Segmentation fault", "seen": "s", "comment": "c", "examples": [{"facts": {"build": "1"}}]}]})J");
  ASSERT_FALSE(unquoted.ok());
  EXPECT_TRUE(has(unquoted.error().message, "known_breakages[0].runtime_words: value \"Segmentation fault\" is not matched by any "
                                            "last_words pattern"))
      << unquoted.error().message;
  auto no_sample = parse(R"({"last_words": [{"name": "a", "pattern": "x", "comment": "c"}]})");
  ASSERT_FALSE(no_sample.ok());
  EXPECT_TRUE(has(no_sample.error().message, "last_words[0].examples: missing")) << no_sample.error().message;
}

}  // namespace
}  // namespace fp
