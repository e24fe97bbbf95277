#include "evidence/verdict.h"

#include <algorithm>
#include <iomanip>
#include <regex>
#include <set>
#include <sstream>

#include "evidence/kernel_set.h"
#include "util/split_list.h"
#include "util/text.h"

namespace fp {
namespace {

// ggml and most runtimes name the host backend this; kernels (level 3) say nothing about it.
const char* const kCpuBackend = "CPU";

std::string hint(const VerdictInput& in, const std::string& level) {
  auto it = in.hints.find(level);
  return it == in.hints.end() ? std::string() : "; " + it->second;
}

// GPU backend names and the device numbers the kernel probe records (CUDA1 <-> 1).
class GpuDevices {
 public:
  explicit GpuDevices(const std::string& pattern) {
    if (pattern.empty()) return;
    try {
      re_ = std::regex(pattern);
      valid_ = true;
    } catch (const std::regex_error&) {
    }
  }
  bool valid() const { return valid_; }
  std::optional<int> device(const std::string& backend) const {
    std::smatch m;
    if (!valid_ || !std::regex_match(backend, m, re_) || m.size() < 2) return std::nullopt;
    return std::stoi(m[1].str());
  }
  bool is_gpu(const std::string& backend) const { return valid_ ? device(backend).has_value() : backend != kCpuBackend; }

 private:
  std::regex re_;
  bool valid_ = false;
};

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

std::string process_name(const std::string& p) { return p.empty() ? "main process" : p; }

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Level 1 when the expectation names an attention backend (vLLM): every process that logged a
// backend decision must have decided the expected one, and no fallback line may speak against it.
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

// Level 3 when the expectation names an attention backend: did that backend's kernels run?
LevelFinding kernel_level_backend(const KernelSummary& k, const std::string& expected, LevelFinding f) {
  if (!contains(k.backends_with_patterns, expected)) {
    f.unavailable_why = "no kernel pattern for backend " + expected + " in the runtime data file (patterns for: " +
                        (k.backends_with_patterns.empty() ? std::string("none") : join(k.backends_with_patterns, ", ")) + ")";
    return f;
  }
  f.used = true;
  auto it = k.launches_by_backend.find(expected);
  long long launches = it == k.launches_by_backend.end() ? 0 : it->second;
  f.active = f.any_on_expected = launches > 0;
  std::ostringstream s;
  if (launches > 0) {
    s << launches << " " << expected << " kernel launches";
    for (const auto& n : k.top_by_backend.at(expected)) f.quotes.push_back(kernel_display_name(n));
  } else {
    s << "no " << expected << " kernel among " << k.records << " kernels";
  }
  std::vector<std::string> others;
  for (const auto& [backend, n] : k.launches_by_backend)
    if (backend != expected && n > 0) {
      others.push_back(backend + " " + std::to_string(n));
      for (const auto& name : k.top_by_backend.at(backend)) f.quotes.push_back(kernel_display_name(name));
    }
  if (!others.empty()) s << "; other backends' kernel launches: " << join(others, ", ");
  if (!f.quotes.empty()) s << " (" << quote(f.quotes.front()) << ")";
  if (k.processes > 1) s << "; tally of " << k.processes << " processes";
  f.summary = s.str();
  return f;
}

// The name a person reads for a probe device: the backend that maps to it, else "device N".
std::string device_name(int device, const std::vector<std::string>& backends, const GpuDevices& gpus) {
  if (device < 0) return "device ?";
  for (const auto& b : backends)
    if (gpus.device(b) == device) return b;
  return "device " + std::to_string(device);
}

std::vector<std::string> known_backends(const VerdictInput& in, const Verdict& v) {
  std::vector<std::string> out = v.expected_backends;
  out.insert(out.end(), in.gpu_backends.begin(), in.gpu_backends.end());
  if (in.placement) {
    for (const auto& [b, n] : in.placement->fused_nodes) out.push_back(b);
    for (const auto& [b, n] : in.placement->unfused_nodes) out.push_back(b);
  }
  if (in.log)
    for (const auto& [b, mib] : in.log->kv_mib_by_device()) out.push_back(b);
  return out;
}

// Expected backends that are devices the kernel probe cannot see: neither the host nor a GPU of the
// runtime's gpu_backend pattern (a Vulkan device: CUPTI records CUDA kernels only).
std::vector<std::string> unprobed_devices(const VerdictInput& in, const Verdict& v) {
  const GpuDevices gpus(in.gpu_backend_pattern);
  std::vector<std::string> out;
  if (!gpus.valid() || !in.attention_backends.empty()) return out;
  for (const auto& e : v.expected_backends)
    if (e != kCpuBackend && !gpus.is_gpu(e)) out.push_back(e);
  return out;
}

LevelFinding kernel_level(const VerdictInput& in, Verdict& v) {
  LevelFinding f{3, "kernels"};
  const KernelSummary* k = in.kernels;
  const std::string& expected = v.expected_backend;
  if (auto unseen = unprobed_devices(in, v); !unseen.empty()) {
    f.unavailable_why = "not applicable: the kernel probe (CUPTI) does not see what " + join(unseen, ",") +
                        " dispatches; levels 1 and 2 decide";
    return f;
  }
  if (!k) {
    f.unavailable_why = "no tally given" + hint(in, "kernels");
    return f;
  }
  if (!k->has_records()) {
    f.unavailable_why = "tally " + k->source + " has no kernel records (no evidence: the probe saw nothing" +
                        (k->status.empty() || k->status == "ok" ? std::string() : "; probe status " + k->status) +
                        (k->reason.empty() ? std::string() : ": " + k->reason) + ")";
    return f;
  }
  if (!in.attention_backends.empty() && !expected.empty()) return kernel_level_backend(*k, expected, f);
  const GpuDevices gpus(in.gpu_backend_pattern);
  std::vector<std::string> expected_gpus;
  for (const auto& e : v.expected_backends)
    if (gpus.is_gpu(e)) expected_gpus.push_back(e);
  if (!v.expected_backends.empty() && expected_gpus.empty()) {
    f.unavailable_why = "not applicable: the expected backend is " + expected + " and kernels show only the GPU";
    return f;
  }
  const std::vector<std::string> names = known_backends(in, v);
  for (const auto& [device, n] : k->fused_launches_by_device)
    if (n > 0) v.fused_kernels_by_backend[device_name(device, names, gpus)] = n;
  f.used = true;
  const bool per_device = k->devices_known && gpus.valid() && !expected_gpus.empty();
  long long on = k->fused_launches, off = 0;
  std::vector<std::string> missing;
  if (per_device) {
    on = 0;
    std::set<int> wanted;
    for (const auto& e : expected_gpus) {
      auto d = gpus.device(e);
      if (!d) continue;
      wanted.insert(*d);
      auto it = k->fused_launches_by_device.find(*d);
      if (it == k->fused_launches_by_device.end() || it->second == 0) missing.push_back(e);
    }
    for (const auto& [device, n] : k->fused_launches_by_device) (wanted.count(device) ? on : off) += n;
  }
  f.active = on > 0 && off == 0 && missing.empty();
  f.any_on_expected = on > 0;
  f.partial = on > 0 && off > 0;
  std::ostringstream s;
  if (k->fused_launches > 0) {
    s << std::fixed << std::setprecision(1) << k->fused_launches << " fused attention kernel launches, "
      << (100.0 * static_cast<double>(k->fused_ns) / static_cast<double>(k->total_ns ? k->total_ns : 1))
      << "% of GPU time";
    for (const auto& n : k->top_fused) f.quotes.push_back(kernel_display_name(n));
  } else {
    s << "no fused attention kernel (" << join(k->fused_patterns, " or ") << ") among " << k->records
      << " kernels";
    if (k->unfused_launches > 0) s << "; " << k->unfused_launches << " unfused attention launches";
    for (const auto& n : k->top_unfused) f.quotes.push_back(kernel_display_name(n));
  }
  if (per_device && k->fused_launches > 0) {
    std::vector<std::string> parts;
    for (const auto& [device, n] : k->fused_launches_by_device)
      if (n > 0) parts.push_back(device_name(device, names, gpus) + " " + std::to_string(n));
    s << "; by device: " << join(parts, ", ");
    if (!missing.empty()) s << "; none on " << join(missing, ",");
    if (off > 0) s << "; " << off << " on devices not expected";
  } else if (!k->devices_known && !expected_gpus.empty() && k->fused_launches > 0) {
    s << " (the tally has no device column: which GPU ran them is not known)";
  }
  if (!f.quotes.empty()) s << " (" << quote(f.quotes.front()) << ")";
  if (k->processes > 1) s << "; tally of " << k->processes << " processes";
  f.summary = s.str();
  return f;
}

// Levels 2 and 3 per GPU: every GPU with fused nodes placed on it ran fused kernels, and no GPU ran
// fused kernels without fused nodes placed on it. Only when the tally records devices.
void find_device_disagreement(const VerdictInput& in, Verdict& v) {
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

std::string conclusion(const Verdict& v) {
  std::string where = v.expected_backend.empty() ? std::string()
                      : v.names_attention_backend ? " with backend " + v.expected_backend
                                                  : " on " + v.expected_backend;
  switch (v.activity) {
    case Activity::NoEvidence:
      return v.missing_required.empty() ? "no evidence either way" : "no evidence: " + join(v.missing_required, "; ");
    case Activity::Active:
      return "fused attention is active" + where;
    case Activity::NotActive:
      break;
  }
  if (v.partial_offload) return "fused attention is only partly" + where + ": partial offload";
  if (!v.missing_backends.empty() && v.levels[1].any_on_expected == true)
    return "fused attention is not active on each of " + v.expected_backend + ": none on " + join(v.missing_backends, ",");
  if (v.silent_fallback)
    return "fused attention is NOT running" + where +
           (v.names_attention_backend ? " (the log names it, the kernels do not)" : " (silent fallback: the log says enabled)");
  return "fused attention is not active" + where;
}

std::string explain(const Verdict& v, const LogScan* log) {
  std::vector<std::string> parts;
  for (const auto& f : v.levels)
    parts.push_back(f.name + ": " + (f.used ? f.summary : "unavailable (" + f.unavailable_why + ")"));
  if (log && !log->split_counts().empty()) {
    std::vector<std::string> n;
    for (int c : log->split_counts()) n.push_back(std::to_string(c));
    parts.push_back("graph splits " + join(n, ", "));
  }
  std::string text = join(parts, "; ") + ": " + conclusion(v);
  if (v.disagreement) text += ". Levels disagree: " + v.disagreement_detail;
  return text;
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

std::string backends_text(const std::map<std::string, int>& fused_backends) {
  std::vector<std::string> parts;
  for (const auto& [k, n] : fused_backends) parts.push_back(k + " " + std::to_string(n));
  return join(parts, ", ");
}

std::string to_string(Activity a) {
  switch (a) {
    case Activity::Active: return "active";
    case Activity::NotActive: return "not active";
    case Activity::NoEvidence: return "no evidence";
  }
  return "unknown";
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
  return in;
}

namespace {

// "all-gpus": the machine's GPUs when given, else every GPU backend the log names.
std::vector<std::string> all_gpus(const VerdictInput& in) {
  if (!in.gpu_backends.empty()) return in.gpu_backends;
  const GpuDevices gpus(in.gpu_backend_pattern);
  std::set<std::string> seen;
  if (in.placement) {
    for (const auto& [b, n] : in.placement->fused_nodes) seen.insert(b);
    for (const auto& [b, n] : in.placement->unfused_nodes) seen.insert(b);
    for (const auto& [key, candidates] : in.placement->ambiguous) seen.insert(candidates.begin(), candidates.end());
  }
  if (in.log)
    for (const auto& [b, mib] : in.log->kv_mib_by_device()) seen.insert(b);
  std::vector<std::string> out;
  for (const auto& b : seen)
    if (gpus.is_gpu(b)) out.push_back(b);
  return out;
}

void resolve_expected(const VerdictInput& in, Verdict& v) {
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

Verdict decide(const VerdictInput& in_given) {
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

std::string format_verdict(const Verdict& v) {
  std::ostringstream out;
  out << "verdict: " << to_string(v.activity) << "\n";
  out << "expected backend: " << (v.expected_backend.empty() ? "(not given, not inferable)" : v.expected_backend);
  if (!v.expected_from.empty()) out << " (" << v.expected_from << ")";
  out << "\n";
  if (!v.fused_backends.empty()) out << "fused op placed on: " << format_counts(v.fused_backends) << "\n";
  if (!v.fused_kernels_by_backend.empty()) {
    std::vector<std::string> parts;
    for (const auto& [b, n] : v.fused_kernels_by_backend) parts.push_back(b + " " + std::to_string(n));
    out << "fused kernels ran on: " << join(parts, ", ") << "\n";
  }
  if (!v.placement_completeness.empty()) out << "placement completeness: " << v.placement_completeness << "\n";
  if (!v.backend_names.empty()) out << "backend names: " << v.backend_names << "\n";
  for (const auto& f : v.levels) {
    out << "level " << f.level << " " << f.name << ": ";
    out << (f.used ? f.summary : "unavailable: " + f.unavailable_why) << "\n";
    for (const auto& q : f.quotes) out << "    " << quote(q) << "\n";
  }
  if (v.partial_offload) out << "partial offload: the fused op is split between backends\n";
  if (v.silent_fallback) out << "silent fallback: the log says enabled, the evidence says otherwise\n";
  if (v.backends_by_process.size() > 1)
    for (const auto& [proc, backends] : v.backends_by_process) out << "process " << proc << ": " << join(backends, ", ") << "\n";
  if (v.disagreement) out << "DISAGREEMENT: " << v.disagreement_detail << "\n";
  for (const auto& m : v.missing_required) out << "NO EVIDENCE: " << m << "\n";
  out << "\n" << v.explanation << "\n";
  return out.str();
}

}  // namespace fp
