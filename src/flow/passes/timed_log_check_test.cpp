#include "flow/passes/timed_log_check.h"

#include <gtest/gtest.h>

#include "testing/fixtures.h"
#include "testing/recorded_runs.h"

namespace fp {
namespace {

using testing::fixture;
using testing::llama_signatures;

const std::string kOn = "logs/cpu/b11669_tiny_fa_on_lv4.log.gz";
const std::string kOff = "logs/cpu/b11669_tiny_fa_off_sched_debug.log.gz";

TEST(TimedLogCheck, TiesALaunchToTheEvidencePassBySignals) {
  auto evidence = check_timed_log(fixture(kOn), llama_signatures(), nullptr);
  ASSERT_TRUE(evidence.ok()) << evidence.error().message;
  EXPECT_TRUE(evidence->mismatches.empty());
  ASSERT_TRUE(evidence->signals.flash_attn.has_value());
  EXPECT_TRUE(*evidence->signals.flash_attn);
  auto timed = check_timed_log(fixture(kOn), llama_signatures(), &evidence->signals);
  ASSERT_TRUE(timed.ok()) << timed.error().message;
  EXPECT_TRUE(timed->mismatches.empty());
  EXPECT_FALSE(timed->log.records.empty());
  // Another flash-attention state differs from the evidence pass, as compare_signals says.
  auto other = check_timed_log(fixture(kOff), llama_signatures(), &evidence->signals);
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ(other->mismatches, compare_signals(evidence->signals, other->signals));
  EXPECT_FALSE(other->mismatches.empty());
  // An unreadable log is an error naming it.
  auto missing = check_timed_log("/nonexistent/timed.log", llama_signatures(), nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/timed.log"), std::string::npos) << missing.error().message;
}

}  // namespace
}  // namespace fp
