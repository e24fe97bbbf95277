#include "flow/ab/answer_classification.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "report/answer_difference_text.h"
#include "runtime/adapter.h"
#include "testing/fixtures.h"
#include "util/text.h"

namespace fp {
namespace {

using ::testing::HasSubstr;

// llama-server (build 11669) on the tiny model, one thread, the same chat request with -fa off and
// -fa on, not streamed, logprobs with top_logprobs 4: the answers part at their 70th token, where
// flag off chose " list" and flag on ",".
AnswerWithProbabilities recorded(const std::string& flag) {
  auto adapter = load_adapter("llama-server");
  EXPECT_TRUE(adapter && adapter->token_probabilities);
  const TokenProbabilityKeys& k = *adapter->token_probabilities;
  auto text = read_file(testing::fixture("responses/answers-pass/tiny-story-fa-" + flag + ".json"));
  EXPECT_TRUE(text);
  auto a = read_token_probabilities(*text, k.chat, k, flag);
  EXPECT_TRUE(a) << a.error().message;
  return *a;
}

double logprob_listed(const AnsweredToken& t, long long id) {
  for (const auto& c : t.candidates)
    if (c.id && *c.id == id) return c.logprob;
  return NAN;
}

TEST(AnswerClassification, ARecordedFlipIsANearTieWithinTheMeasuredDisagreement) {
  const AnswerWithProbabilities off = recorded("off"), on = recorded("on");
  const AnswerDifference d = classify_answer_difference(off.text, on.text, off, on);
  ASSERT_EQ(d.kind, AnswerDifferenceKind::expected_near_tie) << answer_difference_text(d);
  EXPECT_EQ(d.first_token, 70u);
  EXPECT_EQ(d.off_token, " list");
  EXPECT_EQ(d.on_token, ",");
  EXPECT_EQ(d.agreeing_tokens, 69u);

  // The margin, from the recorded numbers: each arm's choice against the other's token, the larger.
  const AnsweredToken &a = off.tokens[69], &b = on.tokens[69];
  const double m_off = a.chosen.logprob - logprob_listed(a, *b.chosen.id);
  const double m_on = b.chosen.logprob - logprob_listed(b, *a.chosen.id);
  EXPECT_DOUBLE_EQ(d.margin_nats, std::max(m_off, m_on));
  // The bound, from the recorded numbers: at least every chosen token's change before the flip.
  double chosen = 0;
  for (size_t i = 0; i < 69; ++i) chosen = std::max(chosen, std::fabs(off.tokens[i].chosen.logprob - on.tokens[i].chosen.logprob));
  EXPECT_GE(d.disagreement_nats, chosen);
  EXPECT_GT(d.disagreement_nats, 0);
  EXPECT_DOUBLE_EQ(d.bound_nats, kNearTieFactor * d.disagreement_nats);
  EXPECT_LE(d.margin_nats, d.bound_nats);
  EXPECT_THAT(answer_difference_text(d), HasSubstr("expected: a near-tie at token 70 (margin "));
  EXPECT_THAT(answer_difference_text(d), HasSubstr("the flag changes the summation order"));
}

TEST(AnswerClassification, AMarginBeyondTheBoundIsNotExpected) {
  const AnswerWithProbabilities off = recorded("off");
  AnswerWithProbabilities on = recorded("on");
  // Flag on puts flag off's token a whole nat below its choice: no rounding does that.
  AnsweredToken& b = on.tokens[69];
  for (auto& c : b.candidates)
    if (c.id == off.tokens[69].chosen.id) c.logprob = b.chosen.logprob - 1.0;
  const AnswerDifference d = classify_answer_difference(off.text, on.text, off, on);
  ASSERT_EQ(d.kind, AnswerDifferenceKind::not_expected) << answer_difference_text(d);
  EXPECT_NEAR(d.margin_nats, 1.0, 1e-9);
  EXPECT_EQ(d.margin_arm, "on");
  const std::string line = answer_difference_text(d);
  EXPECT_THAT(line, HasSubstr("not expected: at token 70 flag off chose \" list\", flag on \",\", a margin of 1 nats (flag on)"));
  EXPECT_THAT(line, HasSubstr("beyond the bound "));
}

TEST(AnswerClassification, TheOtherTokenNotListed) {
  const AnswerWithProbabilities off = recorded("off");
  AnswerWithProbabilities on = recorded("on");
  AnsweredToken& b = on.tokens[69];
  auto drop_other = [&] {
    std::vector<TokenCandidate> kept;
    for (const auto& c : b.candidates)
      if (c.id != off.tokens[69].chosen.id) kept.push_back(c);
    b.candidates = kept;
  };
  drop_other();
  // Its last candidate within the bound: nothing known.
  for (size_t i = 1; i < b.candidates.size(); ++i) b.candidates[i].logprob = b.chosen.logprob - 1e-6;
  AnswerDifference d = classify_answer_difference(off.text, on.text, off, on);
  EXPECT_EQ(d.kind, AnswerDifferenceKind::unclassified);
  EXPECT_EQ(d.why, UnclassifiedWhy::token_not_listed);
  EXPECT_THAT(answer_difference_text(d), HasSubstr("ask for more candidates"));
  // Its last candidate far below: more than that, beyond the bound.
  b.candidates.back().logprob = b.chosen.logprob - 2.0;
  d = classify_answer_difference(off.text, on.text, off, on);
  EXPECT_EQ(d.kind, AnswerDifferenceKind::not_expected);
  EXPECT_TRUE(d.margin_at_least);
  EXPECT_THAT(answer_difference_text(d), HasSubstr("a margin of more than 2 nats (flag on), the other token not among its candidates"));
}

TEST(AnswerClassification, NeverAGuess) {
  const AnswerWithProbabilities off = recorded("off"), on = recorded("on");
  AnswerWithProbabilities bare_on = on;
  bare_on.tokens.clear();
  AnswerDifference d = classify_answer_difference(off.text, on.text, off, bare_on);
  EXPECT_EQ(d.why, UnclassifiedWhy::no_probabilities);
  EXPECT_EQ(answer_difference_text(d), "unclassified: the runtime returned no token probabilities (flag on)");

  d = classify_answer_difference(off.text, on.text + "!", off, on);
  EXPECT_EQ(d.why, UnclassifiedWhy::not_reproduced);
  EXPECT_THAT(answer_difference_text(d), HasSubstr("flag on's answers pass"));

  // Different from the first token: no agreeing position measures the disagreement.
  AnswerWithProbabilities first = on;
  first.tokens[0].chosen.id = 99999;
  d = classify_answer_difference(off.text, on.text, off, first);
  EXPECT_EQ(d.why, UnclassifiedWhy::first_token);
  EXPECT_EQ(d.first_token, 1u);

  // One arm's answer is the other's beginning.
  AnswerWithProbabilities shorter = off;
  shorter.tokens.resize(40);
  AnswerWithProbabilities same = off;
  d = classify_answer_difference(shorter.text, same.text, shorter, same);
  EXPECT_EQ(d.why, UnclassifiedWhy::one_arm_ended);
  EXPECT_EQ(d.first_token, 41u);
  EXPECT_THAT(answer_difference_text(d), HasSubstr("flag off's answer ends at token 41"));
}

}  // namespace
}  // namespace fp
