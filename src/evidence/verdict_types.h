// The plain data of a verdict that a run's result keeps and the report writes: the activity, the
// fused op's placement per backend, the levels used. Standard library only, so that report/ may
// include it (docs/ARCHITECTURE.md: "evidence (verdict types only)"); the decision is evidence/verdict.h.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fp {

// Whether the fused attention ran where expected, as the verdict decided it.
enum class Activity { Active, NotActive, NoEvidence };

// "active", "not active", "no evidence".
inline std::string to_string(Activity a) {
  switch (a) {
    case Activity::Active: return "active";
    case Activity::NotActive: return "not active";
    case Activity::NoEvidence: return "no evidence";
  }
  return "unknown";
}

// The activity a text of to_string names; nullopt for any other text.
inline std::optional<Activity> activity_from_string(const std::string& s) {
  for (Activity a : {Activity::Active, Activity::NotActive, Activity::NoEvidence})
    if (to_string(a) == s) return a;
  return std::nullopt;
}

// The fused op's placement per backend, "CPU 30, CUDA0 126" (backend order); "" when none.
inline std::string backends_text(const std::map<std::string, int>& fused_backends) {
  std::string out;
  for (const auto& [k, n] : fused_backends) out += (out.empty() ? "" : ", ") + k + " " + std::to_string(n);
  return out;
}

// The placement a backends_text wrote, back as backend -> fused nodes; nullopt when `text` is not
// "<backend> <nodes>, ..." with whole non-negative node counts, or names a backend twice. The one
// reader of that text (a result.json's and a golden verdict.json's "backend").
inline std::optional<std::map<std::string, int>> backends_from_text(const std::string& text) {
  std::map<std::string, int> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(", ", at);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(at, end - at);
    const size_t space = part.rfind(' ');
    if (space == std::string::npos || space == 0 || space + 1 == part.size()) return std::nullopt;
    const std::string count = part.substr(space + 1);
    if (count.size() > 9 || count.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    if (!out.emplace(part.substr(0, space), std::stoi(count)).second) return std::nullopt;
    at = end == text.size() ? end : end + 2;
    if (at == text.size() && end != text.size()) return std::nullopt;  // a trailing ", "
  }
  return out;
}

// "Active, degraded": the fused path ran, but on data the runtime converted first, by its own word
// (ggml-cuda converts a K/V pair it has no fused kernel for to f16 and calls it slow), or by the
// kernels (the fused kernels read another type than the cache holds, beside conversion kernels).
struct Degradation {
  std::string k_type, v_type;      // the K/V pair without a fused kernel ("q5_1", "q5_1")
  std::string converted_to;        // what the fused kernels read instead ("f16"); "" unknown
  std::string quote;               // the runtime's own line ("" when only the kernels say it)
  size_t line = 0;                 // its line in the log
  std::string kernels_say;         // level 3's words ("fused kernels read f16-f16; the KV cache holds q5_1-q5_1"), "" none
  std::string cause, remedy;       // the runtime data's words, filled in
  std::vector<std::string> compiled_pairs;  // the pairs this build compiled (its own list), empty when unstated
  bool all_pairs_compiled = false;          // the build compiled every pair
  // The cost, measured at level 3: conversion kernels' share of all GPU time and their names (most
  // GPU time first); none without a kernel tally.
  std::optional<double> conversion_share;
  std::vector<std::string> conversion_kernels;
};

// The verdict as a run's result keeps it (result/run_result.h), typed; the report writers make the
// words (result.txt, result.json, the HTML, the golden's verdict.json).
struct RunVerdict {
  Activity activity = Activity::NoEvidence;
  std::map<std::string, int> fused_backends;      // placement: backend -> fused nodes
  std::string explanation;                        // one paragraph for a person
  std::vector<std::string> levels_used;           // level names in order: "log", "placement", "kernels"
  std::vector<std::string> levels_unavailable;    // "level 3 kernels: no tally given (...)"
  std::vector<std::string> quotes;                // everything relied on, level by level
  bool as_expected = false;                       // evidence/verdict.h verdict_as_expected for the case
  std::optional<Degradation> degraded;            // active, but on converted data (activity Active only)
};

// "active", "active, degraded", "not active", "no evidence".
inline std::string verdict_state_text(Activity a, bool degraded) {
  return to_string(a) + (degraded && a == Activity::Active ? ", degraded" : "");
}

// "active (CPU 30)", "active, degraded (CUDA0 68)": the activity, and where the fused op ran when
// placement saw it.
inline std::string verdict_text(const RunVerdict& v) {
  const std::string b = backends_text(v.fused_backends);
  return verdict_state_text(v.activity, v.degraded.has_value()) + (b.empty() ? "" : " (" + b + ")");
}

}  // namespace fp
