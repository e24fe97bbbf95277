// Level 2: where the scheduler placed the attention op (ggml: GGML_SCHED_DEBUG=2 with -v), as
// counts of fused and unfused attention nodes per backend. "On which backend" is a count, not a word.
// Backends are counted by their whole names: a name the scheduler printed cut short ("Vulka") is
// resolved against the run's own backends (evidence/backend_names.h); one it cannot resolve is
// counted under ambiguous_key ("CUDA1?") with the backends it may be.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "evidence/backend_names.h"
#include "evidence/log_records.h"
#include "evidence/log_scan.h"
#include "evidence/runtime_signatures.h"

namespace fp {

struct Placement {
  std::map<std::string, int> fused_nodes;      // backend -> FLASH_ATTN nodes
  std::map<std::string, int> unfused_nodes;    // backend -> attention SOFT_MAX nodes
  std::map<std::string, Quote> fused_example;  // backend -> one quoted node record
  std::map<std::string, Quote> unfused_example;
  std::string fused_op = "fused attention";     // op name as logged (e.g. FLASH_ATTN), once seen
  std::string unfused_op = "unfused attention";
  std::vector<int> splits_per_graph;           // one entry per graph (a graph starts at split #0)
  std::vector<int> attention_per_graph;        // fused plus unfused attention nodes, one entry per graph
  int split_headers = 0;
  RunBackends backends;                        // the run's backends by whole name (device list, split headers)
  // Printed names that could not be resolved: key in fused_nodes/unfused_nodes ("CUDA1?") -> the
  // backends it may be (CUDA1, CUDA10, ..., CUDA15).
  std::map<std::string, std::vector<std::string>> ambiguous;
  // Printed names resolved to another whole name: printed ("Vulka") -> whole name and how
  // ("Vulkan0 (device list)"; several when split headers resolved one printed name to several).
  std::map<std::string, std::vector<std::string>> resolved;

  int fused_total() const;
  int unfused_total() const;
  // True when the log holds scheduler records at all (split headers or attention nodes).
  bool has_records() const { return split_headers > 0 || fused_total() > 0 || unfused_total() > 0; }
  // Why the count cannot be trusted as whole for a model of `layers` attention layers (every graph
  // must hold one attention node per layer: a truncated log or a changed node format shows as a
  // graph with fewer), or "" when every graph is whole.
  std::string completeness_problem(int layers) const;
  // "19 graphs, 4 attention nodes each (the model's 4 attention layers)".
  std::string completeness_text(int layers) const;
  // How printed names were read, for people: "the scheduler prints backend names cut to 5 characters:
  // \"Vulka\" is Vulkan0 (device list)"; "" when every name was printed whole.
  std::string names_text() const;
};

// The backends a log (or a runtime's device listing) names whole: its device rules and split headers,
// with the width the node rules print names at.
RunBackends run_backends(const std::vector<LogRecord>& records, const RuntimeSignatures& sigs);

// Counts the runtime's placement records; a runtime without placement rules yields an empty result.
Placement scan_placement(const std::vector<LogRecord>& records, const RuntimeSignatures& sigs);

// "CUDA0 44, CPU 24" (largest first); "none" when empty.
std::string format_counts(const std::map<std::string, int>& counts);

}  // namespace fp
