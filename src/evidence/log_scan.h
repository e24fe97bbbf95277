// Level 1: what the runtime's log says it chose (requested and resolved fused-attention state,
// forced-off and reason lines, graph splits and nodes, KV and compute buffer sizes).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evidence/log_records.h"
#include "evidence/runtime_signatures.h"

namespace fp {

// A record relied on, with the rule that matched it and its line in the log.
struct Quote {
  std::string text;
  size_t line = 0;
  std::string rule;
  std::string process;  // the record's process label, "" when the log does not label processes
};

// The quote as a person reads it: "(PROCESS) text" when labelled, else the text.
std::string quoted_with_process(const Quote& q);

// A requested or decided fused-attention state.
struct StateLine {
  RuleKind kind = RuleKind::Requested;  // Requested or Decision
  std::optional<bool> fused;            // null: auto (not decided by this line)
  std::string state;                    // captured text ("enabled", "auto", "1"), "" when constant
  std::string backend;                  // captured backend, "" if none
  std::string reason;                   // captured reason, "" if none
  Quote quote;
};

// A fallback or explanation line, and the backend it speaks of ("" when it names none).
struct ReasonLine {
  std::string backend;  // canonical name (RuntimeSignatures::canonical_backend)
  std::string reason;
  Quote quote;
};

struct CountLine {
  int value = 0;
  int batch = 0;  // the batch size the count is for, 0 when the line does not say
  Quote quote;
};

struct DeviceMib {
  std::string device;
  double mib = 0;
  Quote quote;
};

struct KvTotal {
  double mib = 0;
  long cells = 0;     // per stream
  long streams = 0;   // KV streams (one per parallel sequence unless unified); 0: not stated
  std::string k_type, v_type;
  double k_mib = 0, v_mib = 0;
  Quote quote;
};

// The runtime runs the fused path on data it converts first, by its own word (a degraded rule).
struct DegradedLine {
  std::string k_type, v_type;  // the K/V pair the build has no kernel for
  std::string to_type;         // what it converts to ("f16"); "" when the line does not say
  std::string cause, remedy;   // the rule's templates (not filled: the build's pairs come later)
  Quote quote;
};

// What the build says it compiled (llama.cpp's system_info): part of its identity.
struct BuildKernels {
  std::vector<std::string> fa_pairs;  // K/V pairs with fused kernels ("q4_0-q4_0"), as the build lists them
  bool fa_pairs_stated = false;       // the build printed its list (FA_QUANTS)
  bool fa_all_pairs = false;          // the build compiled every pair (FA_ALL_QUANTS = 1)
  std::string gpu_archs;              // "500,610,...,900" (CUDA ARCHS); "" when not stated
  std::vector<Quote> quotes;

  bool stated() const { return fa_pairs_stated || fa_all_pairs || !gpu_archs.empty(); }
  // The pairs as the fingerprint keeps them: "all", "q4_0-q4_0,q8_0-q8_0,...", or "" when not stated.
  std::string fa_pairs_field() const;
  // Whether the build has fused kernels for K/V `k`-`v`; nullopt when it did not say.
  std::optional<bool> compiles(const std::string& k, const std::string& v) const;
};

// The resolved state and the line that settled it.
struct ResolvedState {
  std::optional<bool> fused;  // null: nothing said, or auto without a resolution line
  std::string requested;      // text of the last request ("auto", "enabled"), "" if none
  bool by_decision = false;   // settled by a decision line (auto resolution, forced off)
  std::vector<Quote> quotes;  // the request, then the decision when there is one
};

// Everything the log scan found, in log order. A runtime that builds several contexts or graphs
// (llama-server fits parameters first, then reserves graphs at several batch sizes) repeats lines.
struct LogScan {
  std::vector<StateLine> states;   // requests and decisions, in order
  std::vector<Quote> reasons;      // why a fallback happened
  std::vector<ReasonLine> reason_lines;  // the same lines, with the backend each names
  std::vector<Quote> notes;        // quoted, decide nothing
  std::vector<Quote> fatal;
  std::vector<CountLine> graph_splits;
  std::vector<CountLine> graph_nodes;
  std::vector<DeviceMib> kv_buffers;
  std::vector<KvTotal> kv_totals;
  std::vector<DeviceMib> compute_buffers;
  std::vector<CountLine> kv_tokens;  // KV cache capacity in tokens (vLLM "GPU KV cache size")
  std::vector<DegradedLine> degraded;  // the fused path on converted data, by the runtime's word
  BuildKernels build_kernels;          // what the build compiled, when it says
  std::vector<std::string> attention_backends;  // copied from the signatures: what an expectation may name

  // True when no rule matched any record.
  bool empty() const;
  // The last decision after the last request; else the last request (auto: unresolved).
  ResolvedState resolved() const;
  // Distinct graph split counts, in order of first appearance.
  std::vector<int> split_counts() const;
  // Last value per device (the final context wins over a fitting pass that reported 0).
  std::map<std::string, double> kv_mib_by_device() const;
  std::map<std::string, double> compute_mib_by_device() const;
  // Last KV total, if any.
  std::optional<KvTotal> kv_total() const;
  // Decisions that name a backend, in log order.
  std::vector<const StateLine*> backend_decisions() const;
  // Distinct decided backends, in order of first appearance.
  std::vector<std::string> decided_backends() const;
};

// Scans records with the runtime's level-1 rules.
LogScan scan_log(const std::vector<LogRecord>& records, const RuntimeSignatures& sigs);

}  // namespace fp
