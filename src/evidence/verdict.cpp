#include "evidence/verdict.h"

#include <algorithm>
#include <set>

#include "evidence/verdict_gpus.h"
#include "evidence/verdict_levels.h"
#include "evidence/verdict_text.h"
#include "util/split_list.h"
#include "util/text.h"

namespace fp {

namespace {

std::string expected_from_kv(const LogScan* log) {
  if (!log) return "";
  std::string only;
  for (const auto& [device, mib] : log->kv_mib_by_device()) {
    if (mib <= 0) continue;
    if (!only.empty()) return "";
    only = device;
  }
  return only;
}

// Levels 2 and 3 per GPU: every GPU with fused nodes placed on it ran fused kernels, and no GPU ran
// fused kernels without fused nodes placed on it. Only when the tally records devices.
void find_device_disagreement(const VerdictInput& in, Verdict& v) {
  // verdict_detail's names, in the function only: at file scope they would reach the other
  // sources of a unity batch.
  using namespace verdict_detail;
  const LevelFinding& l2 = v.levels[1];
  const LevelFinding& l3 = v.levels[2];
  if (v.disagreement || !l2.used || !l3.used || !in.placement || !in.kernels || !in.kernels->devices_known) return;
  const GpuDevices gpus(in.gpu_backend_pattern);
  if (!gpus.valid()) return;
  std::map<int, int> nodes;  // device -> fused nodes placed
  for (const auto& [backend, n] : in.placement->fused_nodes)
    if (auto d = gpus.device(backend)) nodes[*d] += n;
  std::set<int> devices;
  for (const auto& [d, n] : nodes) devices.insert(d);
  for (const auto& [d, n] : in.kernels->fused_launches_by_device)
    if (n > 0) devices.insert(d);
  const std::vector<std::string> names = known_backends(in, v);
  for (int d : devices) {
    int placed = nodes.count(d) ? nodes[d] : 0;
    auto it = in.kernels->fused_launches_by_device.find(d);
    long long ran = it == in.kernels->fused_launches_by_device.end() ? 0 : it->second;
    if ((placed > 0) == (ran > 0)) continue;
    v.disagreement = true;
    v.measured_disagreement = true;
    const std::string name = device_name(d, names, gpus);
    v.disagreement_detail = "placement says " + std::to_string(placed) + " " + in.placement->fused_op + " nodes on " + name +
                            "; kernels say " + std::to_string(ran) + " fused attention kernel launches on device " +
                            std::to_string(d) + " (kernels by device: " + l3.summary + ")";
    return;
  }
}

// First pair of used levels whose "some fused work on the expected backend" answers differ; and
// whether two measured levels (placement, kernels: not the log) differ.
void find_disagreement(Verdict& v) {
  for (size_t i = 1; i < v.levels.size(); ++i)
    for (size_t j = i + 1; j < v.levels.size(); ++j)
      if (v.levels[i].used && v.levels[j].used && v.levels[i].any_on_expected != v.levels[j].any_on_expected)
        v.measured_disagreement = true;
  for (size_t i = 0; i < v.levels.size(); ++i) {
    for (size_t j = i + 1; j < v.levels.size(); ++j) {
      const LevelFinding& a = v.levels[i];
      const LevelFinding& b = v.levels[j];
      if (!a.used || !b.used || a.any_on_expected == b.any_on_expected) continue;
      v.disagreement = true;
      v.disagreement_detail = a.name + " says " + a.summary + "; " + b.name + " says " + b.summary;
      return;
    }
  }
}

void resolve_expected(const VerdictInput& in, Verdict& v) {
  using namespace verdict_detail;
  v.expected_backend = in.expect_backend;
  v.expected_from = in.expect_backend.empty() ? "" : "given";
  if (v.expected_backend.empty()) {
    v.expected_backend = expected_from_kv(in.log);
    if (!v.expected_backend.empty()) v.expected_from = "KV cache device";
  }
  if (v.names_attention_backend && v.expected_from == "KV cache device") {
    v.expected_backend.clear();  // a device says nothing about an attention backend
    v.expected_from.clear();
  }
  for (const auto& e : split_list(v.expected_backend, ',', ListItems::NonEmptyUnique)) {
    if (e != kAllGpus) {
      if (std::find(v.expected_backends.begin(), v.expected_backends.end(), e) == v.expected_backends.end())
        v.expected_backends.push_back(e);
      continue;
    }
    for (const auto& g : all_gpus(in))
      if (std::find(v.expected_backends.begin(), v.expected_backends.end(), g) == v.expected_backends.end())
        v.expected_backends.push_back(g);
    v.expected_from = in.gpu_backends.empty() ? "all-gpus: the GPU backends the log names" : "all-gpus: this machine's GPUs";
  }
  if (!v.expected_backends.empty()) v.expected_backend = join(v.expected_backends, ",");
}

}  // namespace

std::map<std::string, std::string> verdict_facts(const Verdict& v) {
  std::map<std::string, std::string> f;
  if (!v.expected_backend.empty()) f["expected_backend"] = v.expected_backend;
  std::string placed;
  for (const auto& [backend, nodes] : v.fused_backends)
    if (nodes > 0) placed += (placed.empty() ? "" : ",") + backend;
  if (!placed.empty()) f["placed_on"] = placed;
  return f;
}

bool fused_devices_differ(const std::map<std::string, int>& before, const std::map<std::string, int>& after) {
  return !std::equal(before.begin(), before.end(), after.begin(), after.end(),
                     [](const auto& b, const auto& a) { return b.first == a.first; });
}

const std::vector<std::string>& evidence_level_names() {
  static const std::vector<std::string> names = {"log", "placement", "kernels"};
  return names;
}

std::vector<std::string> evidence_lost(const std::vector<std::string>& before, const std::vector<std::string>& now,
                                       const std::vector<std::string>& now_unavailable, const std::string& before_what,
                                       const std::string& now_what) {
  std::vector<std::string> out;
  const auto& names = evidence_level_names();
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    const auto has = [&](const std::vector<std::string>& v) { return std::find(v.begin(), v.end(), name) != v.end(); };
    if (!has(before) || has(now)) continue;
    const std::string level = "level " + std::to_string(i + 1);
    std::string line = "EVIDENCE LOST: " + level + " (" + name + ") gave evidence " + before_what + " and none " + now_what;
    for (const auto& u : now_unavailable)
      if (starts_with(u, level + " " + name + ": ")) line += ": " + u.substr(level.size() + name.size() + 3);
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> default_evidence_levels(const RuntimeSignatures& sigs, bool probe_attached) {
  std::vector<std::string> out = {"log"};
  if (!sigs.placement.empty()) out.push_back("placement");
  if (probe_attached) out.push_back("kernels");
  return out;
}

VerdictInput verdict_input(const RuntimeSignatures& sigs) {
  VerdictInput in;
  in.hints = sigs.hints;
  in.attention_backends = sigs.attention_backends;
  if (sigs.gpu_backend) in.gpu_backend_pattern = sigs.gpu_backend->pattern;
  in.degraded_kernels = sigs.degraded_kernels;
  for (const auto& rule : sigs.log)
    if (rule.kind == RuleKind::Degraded) {
      in.degraded_cause = rule.cause;
      in.degraded_remedy = rule.remedy;
      break;
    }
  return in;
}

Verdict decide(const VerdictInput& in_given) {
  using namespace verdict_detail;
  VerdictInput in = in_given;
  if (in.attention_backends.empty() && in.log) in.attention_backends = in.log->attention_backends;
  Verdict v;
  v.names_attention_backend = !in.attention_backends.empty();
  resolve_expected(in, v);
  if (in.placement) {
    v.fused_backends = in.placement->fused_nodes;
    v.backend_names = in.placement->names_text();
  }
  v.levels = {v.names_attention_backend ? log_level_backend(in, v) : log_level(in), placement_level(in, v),
              kernel_level(in, v)};
  for (auto& f : v.levels) {
    auto off = in.taken_off.find(f.name);
    if (!f.used && off != in.taken_off.end()) f.unavailable_why = off->second;
  }
  const bool process_disagreement = v.disagreement;
  const LevelFinding* strongest = nullptr;
  for (const auto& f : v.levels) {
    if (!f.used) {
      v.levels_unavailable.push_back("level " + std::to_string(f.level) + " " + f.name + ": " + f.unavailable_why);
      continue;
    }
    v.levels_used.push_back(f.level);
    v.quotes.insert(v.quotes.end(), f.quotes.begin(), f.quotes.end());
    v.partial_offload = v.partial_offload || f.partial;
    strongest = &f;
  }
  if (!process_disagreement) find_disagreement(v);
  find_device_disagreement(in, v);
  const LevelFinding& l1 = v.levels[0];
  if (l1.used && l1.active == true)
    for (size_t i = 1; i < v.levels.size(); ++i)
      if (v.levels[i].used && v.levels[i].any_on_expected == false) v.silent_fallback = true;
  if (strongest)
    v.activity = (!v.partial_offload && strongest->active == true) ? Activity::Active : Activity::NotActive;
  // The log says what was requested and decided, not what ran: alone it never proves "active".
  if (v.activity == Activity::Active && v.levels_used == std::vector<int>{1})
    v.missing_required.push_back("the log alone never proves fused attention active (it says what was requested, "
                                 "not what ran); level 2 placement or level 3 kernels must confirm it");
  for (const auto& name : in.required)
    for (const auto& f : v.levels)
      if (f.name == name && !f.used)
        v.missing_required.push_back("level " + std::to_string(f.level) + " " + f.name + " is required and yielded nothing: " +
                                     f.unavailable_why);
  if (!v.missing_required.empty()) v.activity = Activity::NoEvidence;
  find_degradation(in, v);
  v.explanation = explain(v, in.log);
  return v;
}

bool verdict_as_expected(Activity activity, bool disagreement, bool expect_fused) {
  if (activity == Activity::NoEvidence || disagreement) return false;
  return activity == (expect_fused ? Activity::Active : Activity::NotActive);
}

bool verdict_as_expected(const Verdict& v, bool expect_fused) {
  return verdict_as_expected(v.activity, v.disagreement, expect_fused);
}

}  // namespace fp
