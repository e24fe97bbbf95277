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
  p.splits_per_graph.back() = std::max(p.splits_per_graph.back(), index + 1);
}

}  // namespace

int Placement::fused_total() const { return total(fused_nodes); }
int Placement::unfused_total() const { return total(unfused_nodes); }

Placement scan_placement(const std::vector<LogRecord>& records, const RuntimeSignatures& sigs) {
  Placement p;
  if (sigs.placement.empty()) return p;
  std::smatch m;
  for (const auto& rec : records) {
    for (const auto& rule : sigs.placement) {
      if (!rule_search(rule, rec.text, m)) continue;
      Quote q{rec.text, rec.line, rule.name};
      std::string op = capture(rule, m, "op");
      if (rule.kind == RuleKind::FusedNode) {
        if (!op.empty() && p.fused_nodes.empty()) p.fused_op = op;
        count_node(p.fused_nodes, p.fused_example, capture(rule, m, "backend"), std::move(q));
      } else if (rule.kind == RuleKind::UnfusedNode) {
        if (!op.empty() && p.unfused_nodes.empty()) p.unfused_op = op;
        count_node(p.unfused_nodes, p.unfused_example, capture(rule, m, "backend"), std::move(q));
      } else if (rule.kind == RuleKind::Split) {
        count_split(p, split_index(capture(rule, m, "index")));
      }
      break;  // one placement rule per record
    }
  }
  return p;
}

std::string format_counts(const std::map<std::string, int>& counts) {
  std::vector<std::pair<std::string, int>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [backend, n] : v) parts.push_back(backend + " " + std::to_string(n));
  return parts.empty() ? "none" : join(parts, ", ");
}

}  // namespace fp
