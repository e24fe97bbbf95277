#include "report/answer_difference_text.h"

#include "util/format_number.h"
#include "util/text.h"

namespace fp {
namespace {

std::string nats_text(double v) { return significant(v, 3) + " nats"; }

// "bound 0.0125 nats: 4 x 0.00313, the largest change in log-probability of the same token between
// the arms over the 69 tokens both chose alike"
std::string bound_text(const AnswerDifference& d) {
  return "bound " + nats_text(d.bound_nats) + ": " + significant(d.factor, 3) + " x " + significant(d.disagreement_nats, 3) +
         ", the largest change in log-probability of the same token between the arms over the " + std::to_string(d.agreeing_tokens) +
         " tokens both chose alike";
}

std::string tokens_text(const AnswerDifference& d) { return "flag off chose " + quote(d.off_token) + ", flag on " + quote(d.on_token); }

}  // namespace

const char* to_string(AnswerDifferenceKind k) {
  switch (k) {
    case AnswerDifferenceKind::expected_near_tie: return "expected";
    case AnswerDifferenceKind::not_expected: return "not expected";
    case AnswerDifferenceKind::unclassified: return "unclassified";
  }
  return "?";
}

std::string first_token_text(const AnswerDifference& d) {
  if (d.first_token == 0) return "not known (" + answer_difference_text(d) + ")";
  std::string s = "token " + std::to_string(d.first_token);
  if (!d.off_token.empty() || !d.on_token.empty()) s += " (" + tokens_text(d) + ")";
  return s;
}

std::string answer_difference_text(const AnswerDifference& d) {
  const std::string at = "token " + std::to_string(d.first_token);
  switch (d.kind) {
    case AnswerDifferenceKind::expected_near_tie:
      return "expected: a near-tie at " + at + " (margin " + nats_text(d.margin_nats) + "), the flag changes the summation order (" +
             bound_text(d) + ")";
    case AnswerDifferenceKind::not_expected:
      return "not expected: at " + at + " " + tokens_text(d) + ", a margin of " + (d.margin_at_least ? "more than " : "") +
             nats_text(d.margin_nats) + " (flag " + d.margin_arm + ")" +
             (d.margin_at_least ? ", the other token not among its candidates" : "") + ", beyond the " + bound_text(d);
    case AnswerDifferenceKind::unclassified: break;
  }
  switch (d.why) {
    case UnclassifiedWhy::not_asked:
      return "unclassified: the runtime data names no way to ask for token probabilities (adapter.token_probabilities)";
    case UnclassifiedWhy::pass_failed: return "unclassified: the answers pass failed: " + d.detail;
    case UnclassifiedWhy::no_probabilities: return "unclassified: the runtime returned no token probabilities (flag " + d.detail + ")";
    case UnclassifiedWhy::not_reproduced:
      if (d.detail == "tokens") return "unclassified: the answers pass's tokens agree although its answers differ";
      return "unclassified: flag " + d.detail +
             "'s answers pass (one request at a time, probabilities asked) answered otherwise than its timed launches";
    case UnclassifiedWhy::first_token:
      return "unclassified: the answers differ at their first token (" + tokens_text(d) +
             "): no token both arms chose alike to measure their disagreement on";
    case UnclassifiedWhy::one_arm_ended: return "unclassified: flag " + d.detail + "'s answer ends at " + at + " where the other's goes on";
    case UnclassifiedWhy::token_not_listed:
      return "unclassified: at " + at + " " + tokens_text(d) + "; flag " + d.detail +
             " does not list the other arm's token among its candidates, the last of which is " + nats_text(d.margin_nats) +
             " below its choice, within the " + bound_text(d) + ": ask for more candidates (token_probabilities.request)";
    case UnclassifiedWhy::none: break;
  }
  return "unclassified";
}

nlohmann::ordered_json answer_difference_json(const AnswerDifference& d) {
  using json = nlohmann::ordered_json;
  const bool tokens = d.first_token > 0 && (!d.off_token.empty() || !d.on_token.empty());
  const bool bound = d.agreeing_tokens > 0 && (d.kind != AnswerDifferenceKind::unclassified || d.why == UnclassifiedWhy::token_not_listed);
  auto number = [](bool known, double v) { return known ? json(v) : json(nullptr); };
  return {{"kind", to_string(d.kind)},
          {"line", answer_difference_text(d)},
          {"first_token", d.first_token > 0 ? json(d.first_token) : json(nullptr)},
          {"off_token", tokens ? json(d.off_token) : json(nullptr)},
          {"on_token", tokens ? json(d.on_token) : json(nullptr)},
          {"margin_nats", number(bound, d.margin_nats)},
          {"margin_arm", bound ? json(d.margin_arm) : json(nullptr)},
          {"margin_at_least", d.margin_at_least},
          {"bound_nats", number(bound, d.bound_nats)},
          {"disagreement_nats", number(bound, d.disagreement_nats)},
          {"factor", d.factor},
          {"agreeing_tokens", d.agreeing_tokens}};
}

}  // namespace fp
