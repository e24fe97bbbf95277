#include "evidence/backend_names.h"
#include "evidence/verdict_levels.h"
#include "util/text.h"

namespace fp::verdict_detail {
namespace {

std::string fused_share(int on, int total, const std::string& op, const std::string& backend) {
  return std::to_string(on) + " of " + std::to_string(total) + " " + op + " nodes on " + backend;
}

// Fused nodes printed under a cut name that may be an expected backend or another (CUDA1 and
// CUDA10..CUDA15 print alike; evidence/backend_names.h): this level cannot tell them apart and says
// so, and the verdict rests on the other levels. "" when no such name.
std::string ambiguity(const Placement& p, const std::vector<std::string>& expected) {
  for (const auto& [key, candidates] : p.ambiguous) {
    auto it = p.fused_nodes.find(key);
    if (it == p.fused_nodes.end() || expected.empty()) continue;
    bool overlap = std::any_of(candidates.begin(), candidates.end(), [&](const std::string& c) { return contains(expected, c); });
    if (!overlap) continue;  // none of them is expected: those nodes are not on an expected backend
    return "cannot tell the backends apart: " + std::to_string(it->second) + " " + p.fused_op + " nodes on " +
           quote(key.substr(0, key.size() - 1)) + ", which may be any of " + candidates_text(candidates) +
           " (the scheduler prints names cut to " + std::to_string(p.backends.width()) +
           " characters and no split header says which)";
  }
  return "";
}

}  // namespace

LevelFinding placement_level(const VerdictInput& in, Verdict& v) {
  LevelFinding f{2, "placement"};
  const Placement* p = in.placement;
  const std::vector<std::string>& expected = v.expected_backends;
  if (!p || !p->has_records()) {
    f.unavailable_why = "no node records" + hint(in, "placement");
    return f;
  }
  int total = p->fused_total();
  if (total == 0 && p->unfused_total() == 0) {
    f.unavailable_why = "scheduler records, but no attention node among them (node format changed?)";
    return f;
  }
  if (in.model_layers > 0) {
    std::string problem = p->completeness_problem(in.model_layers);
    if (!problem.empty()) {
      v.placement_completeness = "INCOMPLETE: " + problem;
      f.unavailable_why = "incomplete: " + problem;
      return f;
    }
    v.placement_completeness = "complete: " + p->completeness_text(in.model_layers) +
                               (in.layers_from.empty() ? "" : ", layers from " + in.layers_from);
  } else {
    v.placement_completeness = "not checked: the model's attention layer count is not known (explain: --model FILE.gguf or --layers N)";
  }
  if (std::string why = ambiguity(*p, expected); !why.empty()) {
    f.unavailable_why = why;
    return f;
  }
  f.used = true;
  for (const auto& [backend, q] : p->fused_example) f.quotes.push_back(q.text);
  if (total == 0) {
    for (const auto& [backend, q] : p->unfused_example) f.quotes.push_back(q.text);
    f.active = f.any_on_expected = false;
    f.summary = "no " + p->fused_op + " node; " + p->unfused_op + " nodes: " + format_counts(p->unfused_nodes);
    return f;
  }
  if (expected.empty()) {
    f.partial = p->fused_nodes.size() > 1;
    f.any_on_expected = true;
    f.active = !f.partial;
    f.summary = p->fused_op + " nodes: " + format_counts(p->fused_nodes);
    return f;
  }
  int on = 0;
  for (const auto& e : expected) {
    auto it = p->fused_nodes.find(e);
    if (it != p->fused_nodes.end() && it->second > 0) on += it->second;
    else v.missing_backends.push_back(e);
  }
  const std::string where = join(expected, ",");
  f.active = on == total && v.missing_backends.empty();
  f.any_on_expected = on > 0;
  f.partial = on > 0 && on < total;
  if (on == total && expected.size() == 1) {
    f.summary = fused_share(on, total, p->fused_op, where);
  } else if (on == 0 && p->fused_nodes.size() == 1) {
    f.summary = fused_share(total, total, p->fused_op, p->fused_nodes.begin()->first) + " (none on " + where + ")";
  } else {
    f.summary = p->fused_op + " nodes: " + format_counts(p->fused_nodes) + " (" + fused_share(on, total, p->fused_op, where) + ")";
    if (on > 0 && !v.missing_backends.empty()) f.summary += "; none on " + join(v.missing_backends, ",");
  }
  if (p->unfused_total() > 0)
    f.summary += "; " + p->unfused_op + " nodes: " + format_counts(p->unfused_nodes);
  return f;
}

}  // namespace fp::verdict_detail
