#include "evidence/kernel_tally.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
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

double KernelSummary::attention_share() const {
  if (total_ns <= 0) return 0;
  return static_cast<double>(fused_ns + unfused_ns) / static_cast<double>(total_ns);
}

KernelSummary classify_kernels(const KernelTally& tally, const RuntimeSignatures& sigs) {
  KernelSummary s;
  s.source = tally.source;
  s.records = tally.kernels.size();
  s.status = tally.status;
  s.reason = tally.reason;
  s.devices_known = !tally.kernels.empty();
  for (const auto& k : tally.kernels) s.devices_known = s.devices_known && k.device >= 0;
  std::map<std::string, std::vector<Ranked>> by_backend;
  for (const auto& rule : sigs.kernels) {
    if (rule.kind == RuleKind::FusedKernel) s.fused_patterns.push_back(rule.pattern);
    if (!rule.backend.empty() && std::find(s.backends_with_patterns.begin(), s.backends_with_patterns.end(),
                                           rule.backend) == s.backends_with_patterns.end())
      s.backends_with_patterns.push_back(rule.backend);
  }
  std::vector<Ranked> fused, unfused;
  std::smatch m;
  for (const auto& k : tally.kernels) {
    add_saturating(s.total_launches, k.launches);
    add_saturating(s.total_ns, k.gpu_ns);
    for (const auto& rule : sigs.kernels) {
      if (!rule_search(rule, k.name, m)) continue;
      bool is_fused = rule.kind == RuleKind::FusedKernel;
      add_saturating(is_fused ? s.fused_launches : s.unfused_launches, k.launches);
      add_saturating(is_fused ? s.fused_ns : s.unfused_ns, k.gpu_ns);
      (is_fused ? fused : unfused).push_back({k.gpu_ns, k.name});
      if (is_fused) add_saturating(s.fused_launches_by_device[k.device], k.launches);
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
  for (auto& [backend, ranked] : by_backend) s.top_by_backend[backend] = top3(std::move(ranked));
  return s;
}

}  // namespace fp
