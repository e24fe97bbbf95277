#include "evidence/verdict_levels.h"
#include "util/text.h"

namespace fp::verdict_detail {
namespace {

std::string process_name(const std::string& p) { return p.empty() ? "main process" : p; }

}  // namespace

LevelFinding log_level(const VerdictInput& in) {
  LevelFinding f{1, "log"};
  if (!in.log || in.log->empty()) {
    f.unavailable_why = "no line matched the runtime's log signatures" + hint(in, "log");
    return f;
  }
  const LogScan& log = *in.log;
  for (const auto& q : log.fatal) f.quotes.push_back(q.text);
  if (!log.fatal.empty()) {
    f.used = true;
    f.active = f.any_on_expected = false;
    f.summary = "fatal: " + quote(log.fatal.front().text);
    return f;
  }
  ResolvedState r = log.resolved();
  for (const auto& q : r.quotes) f.quotes.push_back(q.text);
  for (const auto& q : log.reasons) f.quotes.push_back(q.text);
  for (int n : log.split_counts())  // one quote per distinct count
    for (const auto& c : log.graph_splits)
      if (c.value == n) {
        if (std::find(f.quotes.begin(), f.quotes.end(), c.quote.text) == f.quotes.end())
          f.quotes.push_back(c.quote.text);
        break;
      }
  if (!r.fused) {
    f.unavailable_why = r.requested.empty() ? "no flash-attention state line" + hint(in, "log")
                                            : "requested " + r.requested + ", no line says how it resolved";
    return f;
  }
  f.used = true;
  f.active = f.any_on_expected = *r.fused;
  f.summary = quote(r.quotes.front().text);
  if (r.by_decision && r.quotes.size() > 1) f.summary += ", resolved: " + quote(r.quotes.back().text);
  if (!log.reasons.empty()) f.summary += ", reason: " + quote(log.reasons.front().text);
  return f;
}

LevelFinding log_level_backend(const VerdictInput& in, Verdict& v) {
  LevelFinding f{1, "log"};
  const std::string& expected = v.expected_backend;
  if (!expected.empty() && !contains(in.attention_backends, expected)) {
    f.unavailable_why = "expected backend " + quote(expected) + " is not an attention backend of this runtime; valid: " +
                        join(in.attention_backends, ", ");
    return f;
  }
  if (!in.log || in.log->empty()) {
    f.unavailable_why = "the log holds no attention backend decision (cut off during start-up?): no line matched "
                        "the runtime's log signatures" + hint(in, "log");
    return f;
  }
  const LogScan& log = *in.log;
  for (const auto& q : log.notes) f.quotes.push_back(quoted_with_process(q));
  if (!log.fatal.empty()) {
    for (const auto& q : log.fatal) f.quotes.push_back(quoted_with_process(q));
    f.used = true;
    f.active = f.any_on_expected = false;
    f.summary = "fatal: " + quote(quoted_with_process(log.fatal.front()));
    return f;
  }
  // Fallback lines against the expectation: those naming the expected backend, or naming none.
  // Without an expectation, every fallback line counts.
  std::vector<const ReasonLine*> against;
  for (const auto& r : log.reason_lines)
    if (expected.empty() || r.backend.empty() || r.backend == expected) against.push_back(&r);
  auto decisions = log.backend_decisions();
  for (const auto* d : decisions) {
    auto& seen = v.backends_by_process[process_name(d->quote.process)];
    if (!contains(seen, d->backend)) seen.push_back(d->backend);
  }
  for (const auto* r : against) f.quotes.push_back(quoted_with_process(r->quote));
  if (decisions.empty()) {
    if (against.empty()) {
      f.unavailable_why = "the log holds no attention backend decision (cut off during start-up?)" + hint(in, "log");
      return f;
    }
    f.used = true;
    f.active = f.any_on_expected = false;
    f.summary = "no backend decision, but a fallback: " + quote(quoted_with_process(against.front()->quote));
    return f;
  }
  auto ok = [&](const StateLine* d) { return expected.empty() ? d->fused == true : d->backend == expected; };
  bool all_ok = true, any_ok = false;
  const StateLine* first_bad = nullptr;
  for (const auto* d : decisions) {
    if (ok(d)) any_ok = true;
    else if (all_ok) {
      all_ok = false;
      first_bad = d;
    }
  }
  // One quote per distinct (process, backend).
  std::vector<std::string> seen;
  for (const auto* d : decisions) {
    std::string key = d->quote.process + "|" + d->backend;
    if (contains(seen, key)) continue;
    seen.push_back(key);
    f.quotes.insert(f.quotes.begin() + static_cast<long>(seen.size() - 1), quoted_with_process(d->quote));
  }
  f.used = true;
  f.active = all_ok && against.empty();
  f.any_on_expected = any_ok && against.empty();
  std::vector<std::string> chosen = log.decided_backends();
  f.summary = "attention backend " + join(chosen, " and ") + " (" + quote(quoted_with_process(decisions.front()->quote)) + ")";
  if (first_bad && !expected.empty())
    f.summary += "; expected " + expected + ", got " + first_bad->backend + ": " + quote(quoted_with_process(first_bad->quote));
  else if (first_bad)
    f.summary += "; " + first_bad->backend + " is not a fused attention backend";
  if (!against.empty()) f.summary += "; fallback: " + quote(quoted_with_process(against.front()->quote));
  // Processes that decided differently: reported, and a failure.
  if (v.backends_by_process.size() > 1) {
    const auto& first = *v.backends_by_process.begin();
    for (const auto& [proc, backends] : v.backends_by_process) {
      if (backends == first.second) continue;
      v.disagreement = true;
      v.measured_disagreement = true;
      std::string a, b;
      for (const auto* d : decisions) {
        if (a.empty() && process_name(d->quote.process) == first.first) a = d->quote.text;
        if (b.empty() && process_name(d->quote.process) == proc) b = d->quote.text;
      }
      v.disagreement_detail = "processes disagree: " + first.first + " decided " + join(first.second, ", ") + " (" +
                              quote(a) + "); " + proc + " decided " + join(backends, ", ") + " (" + quote(b) + ")";
      break;
    }
  }
  return f;
}

}  // namespace fp::verdict_detail
