#include "golden/kernel_families.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "measure/stats.h"
#include "util/text.h"

namespace fp {
namespace {

std::string share_pct(double share) {
  char buf[32];
  const double v = 100.0 * share;
  std::snprintf(buf, sizeof buf, v == 0 || v >= 9.95 ? "%.0f%%" : "%.1f%%", v);
  return buf;
}

std::string points(double share) {
  if (std::isinf(share)) return "unknown";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f points", 100.0 * share);
  return buf;
}

std::string family_message(const FamilyComparison& f) {
  const ShareJudgement& j = f.judgement;
  std::string m = f.family + (f.fused ? "" : " (unfused)") + ": " + share_pct(f.golden_share) + " -> " + share_pct(f.run_share) +
                  " of the attention GPU time (" + to_string(j.status);
  if (j.status == ShareStatus::appeared && !f.failed) m += ", under the minimum effect";
  m += "; golden " + std::to_string(f.golden_n) + ", this run " + std::to_string(f.run_n) + " probed launches; minimum effect " +
       points(j.effect) + ", noise band " + points(j.noise) + ")";
  if (j.status == ShareStatus::within_noise)
    m += "; the golden cannot resolve this move: record it from more launches (at least " + std::to_string(kMinGoldenLaunches) +
         " probed) or use the side-by-side gate";
  return m;
}

// "fattn-mma, fattn-helpers" and "43% -> 0%, 27% -> 0%".
std::string names_of(const std::vector<const FamilyComparison*>& fs) {  // "fattn-mma, fattn-helpers"
  std::vector<std::string> n;
  for (const auto* f : fs) n.push_back(f->family);
  return join(n, ", ");
}

std::string moves_of(const std::vector<const FamilyComparison*>& fs) {
  std::vector<std::string> n;
  for (const auto* f : fs) n.push_back(share_pct(f->golden_share) + " -> " + share_pct(f->run_share));
  return join(n, ", ");
}

// Names a swap: the families lost, and what took their place (families new, or grown beyond the
// minimum effect and the noise). Marks the families it names.
std::string swap_sentence(std::vector<FamilyComparison>& families) {
  std::vector<FamilyComparison*> lost, gained;
  for (auto& f : families) {
    const ShareStatus st = f.judgement.status;
    if (st == ShareStatus::lost) lost.push_back(&f);
    // What grew in a lost family's place: new, or up by more than the minimum effect (named even
    // where the golden cannot resolve the move: the loss is what fails).
    const bool grew = (st == ShareStatus::moved || st == ShareStatus::within_noise) && f.judgement.change > f.judgement.effect;
    if ((st == ShareStatus::appeared && f.failed) || grew) gained.push_back(&f);
  }
  auto by_share = [](bool golden) {
    return [golden](const FamilyComparison* a, const FamilyComparison* b) {
      return golden ? a->golden_share > b->golden_share : a->run_share > b->run_share;
    };
  };
  std::stable_sort(lost.begin(), lost.end(), by_share(true));
  std::stable_sort(gained.begin(), gained.end(), by_share(false));
  std::vector<const FamilyComparison*> l(lost.begin(), lost.end()), g(gained.begin(), gained.end());
  if (!lost.empty()) {
    for (auto* f : lost) f->in_swap = true;
    if (gained.empty()) return names_of(l) + " kernels lost: share " + moves_of(l);
    for (auto* f : gained) f->in_swap = true;
    return names_of(l) + " kernels replaced by " + names_of(g) + " kernels: share " + moves_of(l) + " / " + moves_of(g);
  }
  std::vector<const FamilyComparison*> fresh;
  for (auto* f : gained)
    if (f->judgement.status == ShareStatus::appeared) {
      f->in_swap = true;
      fresh.push_back(f);
    }
  if (!fresh.empty()) return names_of(fresh) + " kernels new: share " + moves_of(fresh);
  return "";
}

}  // namespace

void add_probed_launch(std::vector<FamilySamples>& samples, const std::vector<FamilyLaunchShare>& launch) {
  if (launch.empty()) return;
  const size_t before = samples.empty() ? 0 : samples.front().shares.size();
  for (auto& s : samples) s.shares.push_back(0.0);
  for (const auto& l : launch) {
    auto it = std::find_if(samples.begin(), samples.end(), [&](const FamilySamples& s) { return s.family == l.family; });
    if (it == samples.end()) {
      samples.push_back({l.family, l.fused, std::vector<double>(before + 1, 0.0)});
      it = samples.end() - 1;
    }
    it->shares.back() = l.share;
  }
}

std::map<std::string, GoldenKernelFamily> golden_kernel_families(const std::vector<FamilySamples>& samples) {
  std::map<std::string, GoldenKernelFamily> out;
  for (const auto& s : samples) {
    if (s.shares.empty()) continue;
    const LaunchSpread ls = launch_spread(s.shares);
    out[s.family] = GoldenKernelFamily{s.fused, ls.median, ls.spread, ls.n};
  }
  return out;
}

bool KernelFamilyComparison::failed() const {
  return std::any_of(families.begin(), families.end(), [](const FamilyComparison& f) { return f.failed; });
}

std::vector<std::string> KernelFamilyComparison::failures() const {
  std::vector<std::string> out;
  if (!swap.empty()) out.push_back("KERNEL SWAP: " + swap);
  for (const auto& f : families)  // lost, new and grown families are in the swap sentence
    if (f.failed && !f.in_swap) out.push_back("KERNEL SHARE MOVED: " + f.message);
  return out;
}

std::vector<std::string> KernelFamilyComparison::lines() const {
  std::vector<std::string> out;
  for (const auto& f : families) out.push_back(f.message);
  return out;
}

KernelFamilyComparison compare_kernel_families(const std::map<std::string, GoldenKernelFamily>& golden,
                                               const std::vector<FamilySamples>& run) {
  KernelFamilyComparison c;
  size_t run_n = 0;
  for (const auto& s : run) run_n = std::max(run_n, s.shares.size());
  auto run_of = [&](const std::string& family) -> const FamilySamples* {
    for (const auto& s : run)
      if (s.family == family) return &s;
    return nullptr;
  };
  auto judge = [&](FamilyComparison& f, const GoldenKernelFamily* g, const FamilySamples* r) {
    LaunchSpread gs{0.0, 0.0, g ? g->n : 0}, rs{0.0, 0.0, run_n};
    if (g) {
      gs.median = g->share_median;
      gs.spread = g->share_spread;
    }
    if (r) rs = launch_spread(r->shares);
    if (!g) gs.n = std::max<size_t>(1, golden.empty() ? 1 : golden.begin()->second.n);
    f.golden_share = g ? g->share_median : 0.0;
    f.run_share = r ? rs.median : 0.0;
    f.golden_n = g ? g->n : gs.n;
    f.run_n = rs.n;
    f.judgement = judge_share(gs, rs, g != nullptr, r != nullptr);
    const ShareStatus st = f.judgement.status;
    f.failed = st == ShareStatus::lost || st == ShareStatus::moved ||
               (st == ShareStatus::appeared && f.run_share > f.judgement.effect);
    f.message = family_message(f);
  };
  for (const auto& [name, g] : golden) {
    FamilyComparison f;
    f.family = name;
    f.fused = g.fused;
    judge(f, &g, run_of(name));
    c.families.push_back(f);
  }
  for (const auto& s : run) {
    if (golden.count(s.family)) continue;
    FamilyComparison f;
    f.family = s.family;
    f.fused = s.fused;
    judge(f, nullptr, &s);
    c.families.push_back(f);
  }
  c.swap = swap_sentence(c.families);
  return c;
}

std::string kernel_families_text(const std::map<std::string, GoldenKernelFamily>& families) {
  if (families.empty()) return "none";
  std::vector<std::pair<std::string, double>> v;
  for (const auto& [name, f] : families) v.push_back({name, f.share_median});
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [name, share] : v) parts.push_back(name + " " + share_pct(share));
  return join(parts, ", ");
}

}  // namespace fp
