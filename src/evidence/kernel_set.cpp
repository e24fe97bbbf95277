#include "evidence/kernel_set.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

#include "util/text.h"

namespace fp {
namespace {

std::string names_text(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::vector<std::string> shown;
  for (const auto& n : names) shown.push_back(kernel_display_name(n));
  return join(shown, ", ");
}

std::vector<std::string> minus(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

void compare_class(const char* what, const std::vector<std::string>& evidence, const std::vector<std::string>& check,
                   std::vector<std::string>& out) {
  const auto only_evidence = minus(evidence, check);
  const auto only_check = minus(check, evidence);
  if (only_evidence.empty() && only_check.empty()) return;
  std::string m = std::string(what) + " attention kernels differ:";
  if (!only_evidence.empty()) m += " only in the evidence pass: " + names_text(only_evidence) + ";";
  if (!only_check.empty()) m += " only in the probed timed configuration: " + names_text(only_check) + ";";
  m.pop_back();
  out.push_back(m);
}

}  // namespace

AttentionKernelSet attention_kernel_set(const KernelSummary& s) {
  AttentionKernelSet k;
  k.records = s.records;
  k.fused = s.fused_names;
  k.unfused = s.unfused_names;
  std::sort(k.fused.begin(), k.fused.end());
  std::sort(k.unfused.begin(), k.unfused.end());
  return k;
}

std::string kernel_display_name(const std::string& demangled) {
  std::string s = trim(demangled);
  if (starts_with(s, "void ")) s = s.substr(5);
  // Cut at the parameter list: the first '(' outside template brackets ("(ggml_type)1" sits inside).
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>' && depth > 0) --depth;
    else if (s[i] == '(' && depth == 0 && i > 0) return s.substr(0, i);
  }
  return s;
}

std::string kernel_set_text(const AttentionKernelSet& s) {
  if (s.records == 0) return "no kernel records";
  return "fused: " + names_text(s.fused) + "; unfused: " + names_text(s.unfused);
}

std::vector<FamilyShare> family_shares(const KernelSummary& s) {
  double ns = 0, launches = 0;  // doubles: the counts saturate, their sum need not fit a long long
  for (const auto& [name, f] : s.families) {
    ns += static_cast<double>(f.gpu_ns);
    launches += static_cast<double>(f.launches);
  }
  std::vector<FamilyShare> out;
  for (const auto& [name, f] : s.families) {
    const double share = ns > 0 ? static_cast<double>(f.gpu_ns) / ns
                         : launches > 0 ? static_cast<double>(f.launches) / launches : 0.0;
    out.push_back({name, f.fused, share, f.launches});
  }
  std::stable_sort(out.begin(), out.end(), [](const FamilyShare& a, const FamilyShare& b) { return a.share > b.share; });
  return out;
}

std::string family_shares_text(const std::vector<FamilyShare>& shares) {
  if (shares.empty()) return "no attention kernel";
  std::vector<std::string> parts;
  for (const auto& f : shares) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " %.1f%%", 100.0 * f.share);
    parts.push_back(f.family + buf);
  }
  return join(parts, ", ");
}

std::vector<std::string> compare_kernel_sets(const AttentionKernelSet& evidence, const AttentionKernelSet& check) {
  std::vector<std::string> out;
  if (check.records == 0) {
    out.push_back("attention kernels: the evidence pass's tally has " + std::to_string(evidence.records) +
                  " kernel records, the probed timed configuration's has none (the probe saw no kernel: cannot tie)");
    return out;
  }
  compare_class("fused", evidence.fused, check.fused, out);
  compare_class("unfused", evidence.unfused, check.unfused, out);
  return out;
}

std::vector<std::string> compare_kernel_paths(const AttentionKernelSet& evidence, const AttentionKernelSet& check) {
  std::vector<std::string> out;
  if (check.records == 0) return compare_kernel_sets(evidence, check);
  auto side = [&](const char* what, const std::vector<std::string>& e, const std::vector<std::string>& c) {
    if (e.empty() == c.empty()) return;
    out.push_back(std::string(what) + " attention kernels ran in " +
                  (e.empty() ? "the probed timed configuration only: " + names_text(c)
                             : "the evidence pass only: " + names_text(e)) +
                  " (under several requests at once the path must be the same; variants may differ)");
  };
  side("fused", evidence.fused, check.fused);
  side("unfused", evidence.unfused, check.unfused);
  return out;
}

}  // namespace fp
