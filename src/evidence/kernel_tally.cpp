#include "evidence/kernel_tally.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <set>

#include "util/text.h"

namespace fp {
namespace {

bool parse_count(const std::string& s, long long& out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  out = std::strtoll(s.c_str(), nullptr, 10);
  return errno == 0;
}

Error bad_line(const std::string& source, size_t line, const std::string& text, const std::string& why) {
  return make_error(source + ":" + std::to_string(line) + ": " + why + " in " + quote(text) +
                    "; expected launches<TAB>total_gpu_ns<TAB>[device<TAB>]kernel name (non-negative integers)");
}

// Counts are non-negative and each fits a long long, their sum need not: it saturates (found by
// fuzz/fuzz_kernel_tally: two lines of 9223372036854775807 launches overflowed).
void add_saturating(long long& sum, long long x) {
  if (__builtin_add_overflow(sum, x, &sum)) sum = std::numeric_limits<long long>::max();
}

struct Ranked {
  long long ns;
  std::string name;
};

std::vector<std::string> top3(std::vector<Ranked> v) {
  std::stable_sort(v.begin(), v.end(), [](const Ranked& a, const Ranked& b) { return a.ns > b.ns; });
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size() && i < 3; ++i) out.push_back(v[i].name);
  return out;
}

// "# flashproof-probe v2 status=refused state=final pid=1 cupti=130001 reason=cuptiSubscribe: ..."
void read_header(const std::string& line, KernelTally& t) {
  size_t st = line.find(" status=");
  if (st != std::string::npos) {
    size_t end = line.find(' ', st + 8);
    t.status = line.substr(st + 8, end == std::string::npos ? std::string::npos : end - st - 8);
  }
  size_t rs = line.find(" reason=");
  if (rs != std::string::npos) t.reason = trim(line.substr(rs + 8));
}

}  // namespace

Result<KernelTally> parse_kernel_tally(std::string_view text, const std::string& source) {
  KernelTally tally;
  tally.source = source;
  std::vector<std::string> lines = split_lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (starts_with(line, "# flashproof-probe ")) {
      read_header(line, tally);
      continue;
    }
    if (trim(line).empty() || starts_with(line, "#")) continue;
    size_t t1 = line.find('\t');
    size_t t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    if (t2 == std::string::npos) return bad_line(source, i + 1, line, "fewer than three tab-separated fields");
    KernelLine k;
    k.line = i + 1;
    k.name = trim(line.substr(t2 + 1));
    // Probe v2: a device column before the name (names never hold a tab: the probe replaces them).
    size_t t3 = line.find('\t', t2 + 1);
    long long device = 0;
    if (t3 != std::string::npos && parse_count(line.substr(t2 + 1, t3 - t2 - 1), device) && device < 1 << 20) {
      k.device = static_cast<int>(device);
      k.name = trim(line.substr(t3 + 1));
    }
    if (!parse_count(line.substr(0, t1), k.launches))
      return bad_line(source, i + 1, line, "launches " + quote(line.substr(0, t1)) + " is not a count");
    if (!parse_count(line.substr(t1 + 1, t2 - t1 - 1), k.gpu_ns))
      return bad_line(source, i + 1, line,
                      "total_gpu_ns " + quote(line.substr(t1 + 1, t2 - t1 - 1)) + " is not a count");
    if (k.name.empty()) return bad_line(source, i + 1, line, "empty kernel name");
    tally.kernels.push_back(std::move(k));
  }
  return tally;
}

Result<KernelTally> read_kernel_tally(const std::string& path) {
  FP_TRY(std::string text, read_file(path));
  return parse_kernel_tally(text, path);
}

std::string per_process_tally_pattern(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  return (p.parent_path() / (p.stem().string() + ".%p" + p.extension().string())).string();
}

Result<KernelTally> read_process_tallies(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string prefix = p.stem().string() + ".", suffix = p.extension().string();
  std::vector<std::string> files;
  std::error_code ec;
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() <= prefix.size() + suffix.size() || !starts_with(name, prefix) || !ends_with(name, suffix)) continue;
    const std::string pid = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (pid.find_first_not_of("0123456789") == std::string::npos) files.push_back(e.path().string());
  }
  if (files.empty()) return read_kernel_tally(path);
  std::sort(files.begin(), files.end());
  std::vector<KernelTally> tallies;
  for (const auto& f : files) {
    FP_TRY(KernelTally t, read_kernel_tally(f));
    tallies.push_back(std::move(t));
  }
  return merge_kernel_tallies(tallies);
}

KernelTally merge_kernel_tallies(const std::vector<KernelTally>& tallies) {
  KernelTally out;
  out.processes = 0;
  std::vector<std::string> sources, reasons;
  std::map<std::pair<int, std::string>, size_t> at;  // (device, name) -> index in out.kernels
  for (const auto& t : tallies) {
    out.processes += t.processes;
    sources.push_back(t.source);
    if (t.status == "ok") out.status = "ok";
    else if (out.status.empty()) out.status = t.status;
    if (!t.status.empty() && t.status != "ok")
      reasons.push_back(t.source + ": " + t.status + (t.reason.empty() ? "" : " (" + t.reason + ")"));
    for (const auto& k : t.kernels) {
      auto [it, fresh] = at.emplace(std::make_pair(k.device, k.name), out.kernels.size());
      if (fresh) {
        out.kernels.push_back(k);
        continue;
      }
      KernelLine& m = out.kernels[it->second];
      add_saturating(m.launches, k.launches);
      add_saturating(m.gpu_ns, k.gpu_ns);
    }
  }
  out.source = join(sources, " + ");
  out.reason = join(reasons, "; ");
  return out;
}

std::string kernel_tally_text(const KernelTally& t) {
  std::string out = "# flashproof-probe merged processes=" + std::to_string(t.processes) +
                    (t.status.empty() ? "" : " status=" + t.status) + " from=" + t.source;
  for (char& c : out)
    if (c == '\n' || c == '\t') c = ' ';
  if (!t.reason.empty()) out += " reason=" + t.reason;
  out += "\n";
  std::vector<const KernelLine*> rows;
  for (const auto& k : t.kernels) rows.push_back(&k);
  std::stable_sort(rows.begin(), rows.end(), [](const KernelLine* a, const KernelLine* b) { return a->gpu_ns > b->gpu_ns; });
  for (const auto* k : rows) {
    out += std::to_string(k->launches) + "\t" + std::to_string(k->gpu_ns) + "\t";
    if (k->device >= 0) out += std::to_string(k->device) + "\t";
    out += k->name + "\n";
  }
  return out;
}

double KernelSummary::attention_share() const {
  if (total_ns <= 0) return 0;
  return static_cast<double>(fused_ns + unfused_ns) / static_cast<double>(total_ns);
}

double KernelSummary::conversion_share() const {
  if (total_ns <= 0) return 0;
  return static_cast<double>(conversion_ns) / static_cast<double>(total_ns);
}

KernelSummary classify_kernels(const KernelTally& tally, const RuntimeSignatures& sigs) {
  KernelSummary s;
  s.source = tally.source;
  s.processes = tally.processes;
  s.records = tally.kernels.size();
  s.status = tally.status;
  s.reason = tally.reason;
  s.devices_known = !tally.kernels.empty();
  for (const auto& k : tally.kernels) s.devices_known = s.devices_known && k.device >= 0;
  std::map<std::string, std::vector<Ranked>> by_backend;
  // A probe tally meets the probe's rules, device timings the timings' rules.
  std::vector<const Rule*> rules;
  for (const auto& rule : sigs.kernels)
    if (rule.device_timings == tally.device_timings) rules.push_back(&rule);
  for (const Rule* r : rules) {
    const Rule& rule = *r;
    const std::string looked_for = rule.family.empty() ? rule.pattern : rule.family;
    if (rule.kind == RuleKind::FusedKernel &&
        std::find(s.fused_patterns.begin(), s.fused_patterns.end(), looked_for) == s.fused_patterns.end())
      s.fused_patterns.push_back(looked_for);
    if (!rule.backend.empty() && std::find(s.backends_with_patterns.begin(), s.backends_with_patterns.end(),
                                           rule.backend) == s.backends_with_patterns.end())
      s.backends_with_patterns.push_back(rule.backend);
  }
  std::vector<Ranked> fused, unfused, conversion;
  RegexMatch m;
  for (const auto& k : tally.kernels) {
    add_saturating(s.total_launches, k.launches);
    add_saturating(s.total_ns, k.gpu_ns);
    for (const Rule* r : rules) {  // conversion kernels apart: they are not attention
      if (r->kind != RuleKind::ConversionKernel || !rule_search(*r, k.name, m)) continue;
      add_saturating(s.conversion_launches, k.launches);
      add_saturating(s.conversion_ns, k.gpu_ns);
      conversion.push_back({k.gpu_ns, k.name});
      const std::string type = capture(*r, m, "type");
      add_saturating(s.conversion_ns_by_type[type], k.gpu_ns);
      if (!type.empty() && std::find(s.conversion_types.begin(), s.conversion_types.end(), type) == s.conversion_types.end())
        s.conversion_types.push_back(type);
      break;
    }
    for (const Rule* r : rules) {
      const Rule& rule = *r;
      if (rule.kind == RuleKind::ConversionKernel || !rule_search(rule, k.name, m)) continue;
      bool is_fused = rule.kind == RuleKind::FusedKernel;
      if (is_fused && (rule.captures.count("k_type") || rule.captures.count("v_type"))) {
        const auto named = [&](const std::string& role) {
          const std::string t = capture(rule, m, role);
          auto it = rule.type_names.find(t);
          return it == rule.type_names.end() ? t : it->second;
        };
        const std::string pair = named("k_type") + "-" + named("v_type");
        if (std::find(s.fused_kv_types.begin(), s.fused_kv_types.end(), pair) == s.fused_kv_types.end())
          s.fused_kv_types.push_back(pair);
      }
      if (is_fused && !rule.reads_kv.empty() &&
          std::find(s.fused_reads_kv.begin(), s.fused_reads_kv.end(), rule.reads_kv) == s.fused_reads_kv.end())
        s.fused_reads_kv.push_back(rule.reads_kv);
      add_saturating(is_fused ? s.fused_launches : s.unfused_launches, k.launches);
      add_saturating(is_fused ? s.fused_ns : s.unfused_ns, k.gpu_ns);
      (is_fused ? fused : unfused).push_back({k.gpu_ns, k.name});
      if (is_fused) add_saturating(s.fused_launches_by_device[k.device], k.launches);
      KernelFamilyTally& fam =
          s.families[!rule.family.empty() ? rule.family : is_fused ? kOtherFusedFamily : kOtherUnfusedFamily];
      fam.fused = is_fused;
      add_saturating(fam.launches, k.launches);
      add_saturating(fam.gpu_ns, k.gpu_ns);
      if (!rule.backend.empty()) {
        add_saturating(s.launches_by_backend[rule.backend], k.launches);
        by_backend[rule.backend].push_back({k.gpu_ns, k.name});
      }
      break;
    }
  }
  std::set<std::string> fused_set, unfused_set;
  for (const auto& r : fused) fused_set.insert(r.name);
  for (const auto& r : unfused) unfused_set.insert(r.name);
  s.fused_names.assign(fused_set.begin(), fused_set.end());
  s.unfused_names.assign(unfused_set.begin(), unfused_set.end());
  s.top_fused = top3(std::move(fused));
  s.top_unfused = top3(std::move(unfused));
  s.top_conversion = top3(std::move(conversion));
  for (auto& [backend, ranked] : by_backend) s.top_by_backend[backend] = top3(std::move(ranked));
  return s;
}

}  // namespace fp
