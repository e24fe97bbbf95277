#include "evidence/placement.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "util/text.h"

namespace fp {
namespace {

int total(const std::map<std::string, int>& m) {
  int n = 0;
  for (const auto& [k, v] : m) n += v;
  return n;
}

void count_node(std::map<std::string, int>& counts, std::map<std::string, Quote>& examples,
                const std::string& backend, Quote q) {
  ++counts[backend];
  examples.emplace(backend, std::move(q));
}

// A split index as logged; absurd values clamp so that index + 1 stays an int (found by
// fuzz/fuzz_log: "## SPLIT #2147483647" overflowed).
int split_index(const std::string& digits) {
  long long v = std::strtoll(digits.c_str(), nullptr, 10);
  return static_cast<int>(std::clamp<long long>(v, 0, std::numeric_limits<int>::max() - 1));
}

void count_split(Placement& p, int index) {
  ++p.split_headers;
  if (index == 0 || p.splits_per_graph.empty()) p.splits_per_graph.push_back(0);
  if (index == 0 || p.attention_per_graph.empty()) p.attention_per_graph.push_back(0);
  p.splits_per_graph.back() = std::max(p.splits_per_graph.back(), index + 1);
}

// The key a node is counted under: the whole name, or ambiguous_key with its candidates noted.
std::string node_backend(Placement& p, const std::string& printed, const std::string& split) {
  BackendName b = p.backends.resolve(printed, split);
  if (b.ambiguous()) {
    std::string key = ambiguous_key(printed);
    p.ambiguous[key] = b.candidates;
    return key;
  }
  if (!b.how.empty()) {
    auto& seen = p.resolved[printed];
    std::string note = b.name + " (" + b.how + ")";
    if (std::find(seen.begin(), seen.end(), note) == seen.end()) seen.push_back(note);
  }
  return b.name;
}

void count_attention_in_graph(Placement& p) {
  if (p.attention_per_graph.empty()) p.attention_per_graph.push_back(0);
  ++p.attention_per_graph.back();
}

}  // namespace

RunBackends run_backends(const std::vector<LogRecord>& records, const RuntimeSignatures& sigs) {
  int width = 0;
  for (const auto& rule : sigs.placement) width = std::max(width, rule.name_width);
  RunBackends backends(width);
  RegexMatch m;
  for (const auto& rec : records)
    for (const auto& rule : sigs.placement) {
      if (rule.kind != RuleKind::Device && rule.kind != RuleKind::Split) continue;
      if (!rule_search(rule, rec.text, m)) continue;
      backends.add(capture(rule, m, rule.kind == RuleKind::Device ? "name" : "backend"));
      break;
    }
  return backends;
}

int Placement::fused_total() const { return total(fused_nodes); }
int Placement::unfused_total() const { return total(unfused_nodes); }

Placement scan_placement(const std::vector<LogRecord>& records, const RuntimeSignatures& sigs) {
  Placement p;
  if (sigs.placement.empty()) return p;
  p.backends = run_backends(records, sigs);  // a first pass: names resolve against every backend the log names
  std::string split;  // the whole name of the split the next nodes belong to
  RegexMatch m;
  for (const auto& rec : records) {
    for (const auto& rule : sigs.placement) {
      if (rule.kind == RuleKind::Device || !rule_search(rule, rec.text, m)) continue;
      Quote q{rec.text, rec.line, rule.name};
      std::string op = capture(rule, m, "op");
      if (rule.kind == RuleKind::FusedNode) {
        if (!op.empty() && p.fused_nodes.empty()) p.fused_op = op;
        count_node(p.fused_nodes, p.fused_example, node_backend(p, capture(rule, m, "backend"), split), std::move(q));
        count_attention_in_graph(p);
      } else if (rule.kind == RuleKind::UnfusedNode) {
        if (!op.empty() && p.unfused_nodes.empty()) p.unfused_op = op;
        count_node(p.unfused_nodes, p.unfused_example, node_backend(p, capture(rule, m, "backend"), split), std::move(q));
        count_attention_in_graph(p);
      } else if (rule.kind == RuleKind::Split) {
        count_split(p, split_index(capture(rule, m, "index")));
        split = capture(rule, m, "backend");
      }
      break;  // one placement rule per record
    }
  }
  return p;
}

std::string Placement::completeness_problem(int layers) const {
  if (layers <= 0) return "";
  for (size_t g = 0; g < attention_per_graph.size(); ++g) {
    int n = attention_per_graph[g];
    if (n == layers) continue;
    return "graph " + std::to_string(g + 1) + " of " + std::to_string(attention_per_graph.size()) + " holds " +
           std::to_string(n) + " attention nodes, the model has " + std::to_string(layers) +
           " attention layers: the log is cut off or the runtime's node format changed, so the counts are partial";
  }
  if (attention_per_graph.empty()) return "no graph with attention nodes";
  return "";
}

std::string Placement::completeness_text(int layers) const {
  return std::to_string(attention_per_graph.size()) + " graphs, " + std::to_string(layers) +
         " attention nodes each (the model's " + std::to_string(layers) + " attention layers)";
}

std::string Placement::names_text() const {
  std::vector<std::string> parts;
  for (const auto& [printed, wholes] : resolved) parts.push_back(quote(printed) + " is " + join(wholes, " or "));
  for (const auto& [key, candidates] : ambiguous)
    parts.push_back(quote(key.substr(0, key.size() - 1)) + " (counted as " + key + ") may be " + candidates_text(candidates) +
                    ": no split header says which");
  if (parts.empty()) return "";
  return "the scheduler prints backend names cut to " + std::to_string(backends.width()) + " characters: " + join(parts, "; ");
}

std::string format_counts(const std::map<std::string, int>& counts) {
  std::vector<std::pair<std::string, int>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [backend, n] : v) parts.push_back(backend + " " + std::to_string(n));
  return parts.empty() ? "none" : join(parts, ", ");
}

}  // namespace fp
