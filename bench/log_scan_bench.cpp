// Time and memory of the log scan (issue 46): a runtime log read the way `flashproof explain` reads
// it (records, level-1 rules, placement, cause facts and rules, last words), repeated, with the
// median wall time per stage and the process's peak resident set. Optionally pads one record with
// filler bytes (--pad N inside the `flash_attn = enabled` record) to time a long record read whole.
//
//   build/bench/log_scan_bench [--runs N] [--pad BYTES] [--runtime llama-server] LOG[.gz]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "evidence/causes.h"
#include "evidence/instrument_rules.h"
#include "evidence/log_records.h"
#include "evidence/log_scan.h"
#include "evidence/placement.h"
#include "runtime/runtime_data.h"
#include "util/text.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  size_t pad = 0;
  std::string runtime = "llama-server", path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--pad" && i + 1 < argc) pad = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--runtime" && i + 1 < argc) runtime = argv[++i];
    else path = a;
  }
  if (path.empty()) {
    std::fprintf(stderr, "usage: log_scan_bench [--runs N] [--pad BYTES] [--runtime NAME] LOG[.gz]\n");
    return 64;
  }
  auto sigs = fp::load_runtime_signatures(runtime);
  if (!sigs) {
    std::fprintf(stderr, "%s\n", sigs.error().message.c_str());
    return 1;
  }
  auto text = fp::read_file(path);
  if (!text) {
    std::fprintf(stderr, "%s\n", text.error().message.c_str());
    return 1;
  }
  if (pad > 0) {  // filler inside the flash_attn record, before its key: found only when read whole
    const std::string key = "llama_context: flash_attn";
    size_t at = text->find(key);
    if (at == std::string::npos) {
      std::fprintf(stderr, "--pad: no `%s` in %s\n", key.c_str(), path.c_str());
      return 1;
    }
    text->insert(at + 15, std::string(pad, 'x') + " ");
  }
  const long rss_loaded = peak_rss_kib();
  std::vector<double> t_split, t_scan, t_place, t_causes, t_words, t_total;
  size_t records = 0, longest = 0, found = 0, nodes = 0;
  for (int r = 0; r < runs; ++r) {
    using clock = std::chrono::steady_clock;
    auto ms = [](clock::time_point a, clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    auto t0 = clock::now();
    auto recs = fp::split_records(*text, *sigs);
    auto t1 = clock::now();
    auto scan = fp::scan_log(recs, *sigs);
    auto t2 = clock::now();
    auto place = fp::scan_placement(recs, *sigs);
    auto t3 = clock::now();
    fp::Facts facts = fp::gather_facts({}, {}, recs, sigs->causes);
    auto causes = fp::match_causes(sigs->causes, facts, recs);
    auto t4 = clock::now();
    auto words = fp::last_words(*text, sigs->instruments);
    auto t5 = clock::now();
    t_split.push_back(ms(t0, t1));
    t_scan.push_back(ms(t1, t2));
    t_place.push_back(ms(t2, t3));
    t_causes.push_back(ms(t3, t4));
    t_words.push_back(ms(t4, t5));
    t_total.push_back(ms(t0, t5));
    records = recs.size();
    longest = 0;
    for (const auto& rec : recs) longest = std::max(longest, rec.text.size());
    found = scan.states.size();
    nodes = static_cast<size_t>(place.fused_total() + place.unfused_total());
    (void)causes;
    (void)words;
  }
  std::printf("log: %s (%zu bytes, %zu records, longest %zu bytes)\n", path.c_str(), text->size(), records, longest);
  std::printf("found: %zu flash-attention state lines, %zu placement node records\n", found, nodes);
  std::printf("median of %d runs, ms: records %.1f, log rules %.1f, placement %.1f, causes %.1f, last words %.1f, total %.1f\n",
              runs, median(t_split), median(t_scan), median(t_place), median(t_causes), median(t_words), median(t_total));
  std::printf("peak resident set: %ld KiB (%ld KiB after loading the log, %+ld KiB by the scans)\n", peak_rss_kib(),
              rss_loaded, peak_rss_kib() - rss_loaded);
  return 0;
}
