// Test support (header only, for *_test.cpp): loads a recorded run from fixtures/logs: the log scanned
// at levels 1 and 2, the kernel tally classified at level 3, and the verdict on it.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "evidence/kernel_tally.h"
#include "evidence/log_records.h"
#include "evidence/log_scan.h"
#include "evidence/placement.h"
#include "evidence/runtime_signatures.h"
#include "evidence/verdict.h"
#include "runtime/runtime_data.h"
#include "testing/fixtures.h"
#include "util/text.h"

namespace fp::testing {

inline const RuntimeSignatures& llama_signatures() {
  static const RuntimeSignatures sigs = [] {
    auto r = load_runtime_signatures("llama-server",
                                     std::string(FLASHPROOF_SOURCE_DIR) + "/src/runtime/data/llama-server.json");
    if (!r) ADD_FAILURE() << r.error().message;
    return r ? *r : RuntimeSignatures{};
  }();
  return sigs;
}

// One recorded run: log scanned at levels 1 and 2, tally classified at level 3.
struct Run {
  std::vector<LogRecord> records;
  LogScan log;
  Placement placement;
  KernelSummary kernels;
};

inline Run load_run(const std::string& dir, const std::string& name) {
  Run run;
  const auto& sigs = llama_signatures();
  auto text = read_file(fixture("logs/" + dir + "/" + name + ".log.gz"));
  EXPECT_TRUE(text.ok()) << (text ? "" : text.error().message);
  if (!text) return run;
  run.records = split_records(*text, sigs);
  run.log = scan_log(run.records, sigs);
  run.placement = scan_placement(run.records, sigs);
  auto tally = read_kernel_tally(fixture("logs/" + dir + "/" + name + ".kernels.tsv"));
  EXPECT_TRUE(tally.ok()) << (tally ? "" : tally.error().message);
  if (tally) run.kernels = classify_kernels(*tally, sigs);
  return run;
}

// A recorded log without a kernel tally (CPU runs), cached per test binary.
inline const Run& load_run_log_only(const std::string& dir, const std::string& name) {
  static std::map<std::string, Run> cache;
  auto it = cache.find(dir + "/" + name);
  if (it != cache.end()) return it->second;
  Run run;
  const auto& sigs = llama_signatures();
  auto text = read_file(fixture("logs/" + dir + "/" + name + ".log.gz"));
  EXPECT_TRUE(text.ok()) << (text ? "" : text.error().message);
  if (text) {
    run.records = split_records(*text, sigs);
    run.log = scan_log(run.records, sigs);
    run.placement = scan_placement(run.records, sigs);
  }
  return cache.emplace(dir + "/" + name, std::move(run)).first->second;
}

// Cached: each recorded log is scanned once per test binary.
inline const Run& h200_run(const std::string& name) {
  static std::map<std::string, Run> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, load_run("h200", name)).first;
  return it->second;
}

inline Verdict h200_verdict(const std::string& name, const std::string& expect, bool with_kernels = true) {
  const Run& run = h200_run(name);
  VerdictInput in;
  in.log = &run.log;
  in.placement = &run.placement;
  in.kernels = with_kernels ? &run.kernels : nullptr;
  in.expect_backend = expect;
  in.hints = llama_signatures().hints;
  return decide(in);
}

}  // namespace fp::testing
