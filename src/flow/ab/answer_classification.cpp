#include "flow/ab/answer_classification.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace fp {
namespace {

bool same_token(const TokenCandidate& a, const TokenCandidate& b) { return a.id && b.id ? *a.id == *b.id : a.text == b.text; }

// The token and the candidates listed at one position.
std::vector<const TokenCandidate*> tokens_listed_at(const AnsweredToken& t) {
  std::vector<const TokenCandidate*> out{&t.chosen};
  for (const auto& c : t.candidates) out.push_back(&c);
  return out;
}

std::optional<double> logprob_of(const AnsweredToken& t, const TokenCandidate& token) {
  for (const TokenCandidate* c : tokens_listed_at(t))
    if (same_token(*c, token)) return c->logprob;
  return std::nullopt;
}

// The largest change in log-probability of a token both arms list, over the positions before `k`.
double arms_disagreement(const AnswerWithProbabilities& off, const AnswerWithProbabilities& on, size_t k) {
  double d = 0;
  for (size_t i = 0; i < k; ++i)
    for (const TokenCandidate* c : tokens_listed_at(off.tokens[i]))
      if (auto lp = logprob_of(on.tokens[i], *c)) d = std::max(d, std::fabs(c->logprob - *lp));
  return d;
}

struct Margin {
  double nats = 0;
  bool at_least = false;  // the other token is not listed: its margin is at least the last candidate's
};

// How far below its own choice an arm put the other arm's token.
Margin margin_at(const AnsweredToken& mine, const TokenCandidate& theirs) {
  if (auto lp = logprob_of(mine, theirs)) return {mine.chosen.logprob - *lp, false};
  double lowest = mine.chosen.logprob;
  for (const TokenCandidate* c : tokens_listed_at(mine)) lowest = std::min(lowest, c->logprob);
  return {mine.chosen.logprob - lowest, true};
}

}  // namespace

AnswerDifference classify_answer_difference(const std::string& timed_off, const std::string& timed_on, const AnswerWithProbabilities& off,
                                            const AnswerWithProbabilities& on) {
  AnswerDifference d;
  d.factor = kNearTieFactor;
  auto unclassified = [&](UnclassifiedWhy why, const std::string& detail = "") {
    d.kind = AnswerDifferenceKind::unclassified;
    d.why = why;
    d.detail = detail;
    return d;
  };
  if (off.text != timed_off) return unclassified(UnclassifiedWhy::not_reproduced, "off");
  if (on.text != timed_on) return unclassified(UnclassifiedWhy::not_reproduced, "on");
  if (off.tokens.empty() || on.tokens.empty()) return unclassified(UnclassifiedWhy::no_probabilities, off.tokens.empty() ? "off" : "on");
  const size_t common = std::min(off.tokens.size(), on.tokens.size());
  size_t k = 0;
  while (k < common && same_token(off.tokens[k].chosen, on.tokens[k].chosen)) ++k;
  d.first_token = k + 1;
  d.agreeing_tokens = k;
  if (k == common) {
    if (off.tokens.size() == on.tokens.size()) return unclassified(UnclassifiedWhy::not_reproduced, "tokens");
    return unclassified(UnclassifiedWhy::one_arm_ended, off.tokens.size() < on.tokens.size() ? "off" : "on");
  }
  const AnsweredToken &a = off.tokens[k], &b = on.tokens[k];
  d.off_token = a.chosen.text;
  d.on_token = b.chosen.text;
  if (k == 0) return unclassified(UnclassifiedWhy::first_token);
  d.disagreement_nats = arms_disagreement(off, on, k);
  d.bound_nats = kNearTieFactor * d.disagreement_nats;
  const Margin m_off = margin_at(a, b.chosen), m_on = margin_at(b, a.chosen);
  const bool off_larger = m_off.nats >= m_on.nats;
  const Margin& m = off_larger ? m_off : m_on;
  d.margin_nats = m.nats;
  d.margin_arm = off_larger ? "off" : "on";
  d.margin_at_least = m.at_least;
  if (m.nats > d.bound_nats) {
    d.kind = AnswerDifferenceKind::not_expected;
    return d;
  }
  if (m_off.at_least || m_on.at_least) {
    // A lower bound within the bound says nothing: the token may sit anywhere below the list.
    const bool off_unlisted = m_off.at_least;
    d.margin_nats = off_unlisted ? m_off.nats : m_on.nats;
    d.margin_arm = off_unlisted ? "off" : "on";
    d.margin_at_least = true;
    return unclassified(UnclassifiedWhy::token_not_listed, d.margin_arm);
  }
  d.kind = AnswerDifferenceKind::expected_near_tie;
  return d;
}

}  // namespace fp
