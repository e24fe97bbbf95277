// The data of a support matrix (`flashproof matrix`: one launch of the case per combination of KV
// cache types, flag, context and head size) and its report: matrix.txt (the table first, then each
// row's detail) and matrix.json with the same data. No timestamps in the table: two matrices of the
// same build diff cleanly row by row.
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evidence/verdict_types.h"
#include "util/result.h"

namespace fp {

// What a row came to. Ran: the evidence pass and the prompt-speed launch completed and the verdict
// was decided (active or not active, levels agreeing). Refused: the runtime would not start with
// this combination and said why in a line its data marks fatal (e.g. a quantized V cache with the
// flag off). Failed: anything else (a launch or a request failed without a known reason, no
// evidence, levels that disagree, the speed launch failed). Not run: stopped before (interrupted).
enum class RowOutcome { Ran, Refused, Failed, NotRun };
const char* to_string(RowOutcome o);  // "ran", "refused", "failed", "not run"

struct MatrixRow {
  // The combination.
  std::string kv;                 // "q8_0", "q8_0/f16" (K/V); "" when the case's own launch line decides
  std::string kv_k, kv_v;         // the types the launch used (stated, else the runtime's default)
  bool flag_on = true;            // the flag asked on, or left to the runtime (auto): not off
  bool flag_auto = false;         // the runtime's own default value (llama-server's -fa auto)
  std::string flag_value;         // what {flag} became
  int context = 0;
  int head_size = 0;              // the model's (GGUF); 0 when unknown
  std::string model_path, model_sha256;
  std::string dir;                // this row's folder: evidence.log, timed.log, kernels.tsv

  RowOutcome outcome = RowOutcome::NotRun;
  std::string detail;             // refused: the runtime's line; failed: what failed

  // Evidence (when the evidence pass ran).
  std::string verdict;            // active | not active | no evidence
  bool verdict_as_flag = false;   // flag on: active where expected; off: not active (evidence/verdict.h)
  bool silent_fallback = false;
  std::optional<Degradation> degraded;  // active, but on data the runtime converted first
  bool disagreement = false;
  std::vector<std::string> levels_used;
  std::string fused_op, unfused_op;  // as the placement names them (FLASH_ATTN, SOFT_MAX)
  std::map<std::string, int> fused_nodes, unfused_nodes;  // backend -> attention nodes (level 2)
  std::vector<int> graph_splits;
  bool kernels_probed = false;    // level 3: the probe's tally was read
  std::string kernels_note;       // why not probed, or "N kernels, none attention"
  std::vector<std::string> fused_kernels, unfused_kernels;  // display names, most GPU time first
  size_t fused_kernel_names = 0, unfused_kernel_names = 0;  // distinct names in all
  std::string cause;              // flag on, not active where expected: known causes and remedies, or "no known cause (...)"

  // Prompt speed: one prompt of fixed length, the runtime's own figure and flashproof's.
  int prompt_tokens = -1;
  int speed_rounds = 0;
  double server_prompt_tps = NAN;   // median of the runtime's timings.prompt_per_second
  double client_prompt_tps = NAN;   // median of prompt tokens / time to first token
  double server_vs_off = NAN;       // this row over the flag-off row of the same combination
  double client_vs_off = NAN;
  std::string speed_note;           // why not measured
  double ttft_ms = NAN;             // median time to first token of the measured requests (flashproof's clock)
  double server_decode_tps = NAN;   // median of the runtime's timings.predicted_per_second
  int decode_tokens = -1;           // tokens generated per request (timings.predicted_n)

  // Memory, from the evidence pass's log (the runtime's own lines), summed over devices.
  double kv_mib = NAN;              // KV cache
  double compute_mib = NAN;         // compute buffers

  bool as_expected() const { return outcome == RowOutcome::Ran || outcome == RowOutcome::Refused; }
  std::string kv_label() const { return kv_k == kv_v ? kv_k : kv_k + "/" + kv_v; }
  const char* flag_mode() const { return flag_auto ? "auto" : flag_on ? "on" : "off"; }
};

struct MatrixRun {
  std::string case_name, case_file, runtime, runtime_version, runtime_build, fingerprint_id;
  std::string flashproof_version, started_utc, finished_utc, output_dir;
  std::string expect_backend;     // where fused attention is expected with the flag on
  std::string model_recipe;       // the recipe the head-size models came from ("" when none was needed)
  std::string prompt_document;
  int prompt_chars = 0, rounds = 0, max_tokens = 0;
  std::vector<std::string> axes;  // "kv: f16, q8_0", "flag: on, off", ... as asked
  std::vector<MatrixRow> rows;
  std::vector<std::string> errors;  // harness errors: the matrix stopped or could not write
  int exit_code = 2;
};

// The table: one line per row, columns KV (K/V), flag, context, head size, verdict, attention nodes
// per backend, attention kernels, prompt tokens/s (runtime, flashproof), against the flag off, and
// the cause or what went wrong.
std::string matrix_table(const MatrixRun& m);
// Header, table, then each row's detail (model, folder, levels, kernels, cause in full).
std::string matrix_to_text(const MatrixRun& m);
nlohmann::ordered_json matrix_to_json(const MatrixRun& m);
// Writes <dir>/matrix.txt and <dir>/matrix.json atomically.
Status write_matrix_files(const std::string& dir, const MatrixRun& m);

// "FLASH_ATTN CPU 8; SOFT_MAX CPU 8", "none" when the placement counted nothing.
std::string attention_nodes_text(const MatrixRow& r);
// "flash_attn_ext_f16<...> +4 more", "unfused: soft_max_f32<...>", or the note (not probed, ...).
std::string attention_kernels_text(const MatrixRow& r);

}  // namespace fp
