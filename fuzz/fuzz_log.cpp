// Fuzzes the level 1 and 2 log readers (record splitting, log scan, placement) with the real
// signatures of every runtime data file that declares placement or log rules (llama-server, vLLM).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "evidence/log_records.h"
#include "evidence/log_scan.h"
#include "evidence/placement.h"
#include "evidence/runtime_signatures.h"
#include "fuzz_signatures.h"

using fp::fuzz::signatures;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view log(reinterpret_cast<const char*>(data), size);
  for (const auto& sigs : signatures()) {
    std::vector<fp::LogRecord> records = fp::split_records(log, sigs);
    for (const auto& r : records)
      if (r.text.empty() || r.line == 0) __builtin_trap();  // empty records are dropped; lines are 1-based
    fp::LogScan scan = fp::scan_log(records, sigs);
    fp::ResolvedState st = scan.resolved();
    (void)st;
    (void)scan.split_counts();
    (void)scan.kv_mib_by_device();
    (void)scan.compute_mib_by_device();
    (void)scan.kv_total();
    (void)scan.decided_backends();
    fp::Placement p = fp::scan_placement(records, sigs);
    if (p.fused_total() < 0 || p.unfused_total() < 0) __builtin_trap();
    (void)fp::format_counts(p.fused_nodes);
  }
  return 0;
}
