#include "report/matrix_report.h"

#include <algorithm>
#include <cstdio>

#include "report/degradation_text.h"
#include "util/text.h"
#include "util/utf8.h"

namespace fp {
namespace {

std::string rate(double v) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string mib(double v) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 10 ? "%.1f" : "%.0f", v);
  return buf;
}

std::string millis(double v) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 100 ? "%.1f" : "%.0f", v);
  return buf;
}

std::string ratio(double v) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", v);
  return buf;
}

nlohmann::ordered_json number_or_null(double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); }

std::string verdict_cell(const MatrixRow& r) {
  switch (r.outcome) {
    case RowOutcome::Ran: return r.verdict + (r.degraded ? ", degraded" : "") + (r.silent_fallback ? " (silent fallback)" : "");
    case RowOutcome::Refused: return "refused by the runtime";
    case RowOutcome::NotRun: return "not run";
    case RowOutcome::Failed: break;
  }
  return "FAILED" + (r.verdict.empty() ? std::string() : ": " + r.verdict + (r.disagreement ? " (levels disagree)" : ""));
}

std::string note_cell(const MatrixRow& r) {
  if (r.outcome == RowOutcome::Ran) return !r.cause.empty() ? r.cause : r.speed_note;
  return r.detail;
}

// Columns padded to their widest cell, two spaces apart; the last column is not padded.
std::string aligned(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i)
      line += i + 1 == row.size() ? row[i] : row[i] + std::string(width[i] - row[i].size() + 2, ' ');
    out += trim(line) + "\n";
  }
  return out;
}

nlohmann::ordered_json counts_json(const std::map<std::string, int>& counts) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [backend, n] : counts) j[backend] = n;
  return j;
}

}  // namespace

const char* to_string(RowOutcome o) {
  switch (o) {
    case RowOutcome::Ran: return "ran";
    case RowOutcome::Refused: return "refused";
    case RowOutcome::Failed: return "failed";
    case RowOutcome::NotRun: return "not run";
  }
  return "?";
}

std::string attention_nodes_text(const MatrixRow& r) {
  auto counts = [](const std::map<std::string, int>& m) {
    std::vector<std::pair<std::string, int>> v(m.begin(), m.end());
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::vector<std::string> parts;
    for (const auto& [backend, n] : v) parts.push_back(backend + " " + std::to_string(n));
    return join(parts, ", ");
  };
  std::vector<std::string> parts;
  if (!r.fused_nodes.empty()) parts.push_back(r.fused_op + " " + counts(r.fused_nodes));
  if (!r.unfused_nodes.empty()) parts.push_back(r.unfused_op + " " + counts(r.unfused_nodes));
  if (parts.empty()) return r.outcome == RowOutcome::Ran || !r.verdict.empty() ? "none" : "-";
  return join(parts, "; ");
}

std::string attention_kernels_text(const MatrixRow& r) {
  if (!r.kernels_probed) return r.verdict.empty() ? "-" : "not probed";
  auto first = [](const std::vector<std::string>& names, size_t total) {
    return names.front() + (total > 1 ? " +" + std::to_string(total - 1) + " more" : "");
  };
  if (!r.fused_kernels.empty()) return first(r.fused_kernels, r.fused_kernel_names);
  if (!r.unfused_kernels.empty()) return "unfused: " + first(r.unfused_kernels, r.unfused_kernel_names);
  return r.kernels_note.empty() ? "no attention kernel" : r.kernels_note;
}

std::string matrix_table(const MatrixRun& m) {
  std::vector<std::vector<std::string>> rows = {{"kv (K/V)", "flag", "context", "head", "verdict", "attention nodes",
                                                 "attention kernels", "prompt t/s (runtime)", "(flashproof)", "vs off",
                                                 "TTFT ms", "decode t/s", "KV MiB", "compute MiB", "cause / note"}};
  for (const auto& r : m.rows)
    rows.push_back({r.kv_label(), r.flag_value, std::to_string(r.context), r.head_size ? std::to_string(r.head_size) : "?",
                    verdict_cell(r), attention_nodes_text(r), attention_kernels_text(r), rate(r.server_prompt_tps),
                    rate(r.client_prompt_tps), r.flag_on ? ratio(r.server_vs_off) : "", millis(r.ttft_ms), rate(r.server_decode_tps),
                    mib(r.kv_mib), mib(r.compute_mib), note_cell(r)});
  return aligned(rows);
}

std::string matrix_to_text(const MatrixRun& m) {
  size_t ran = 0, refused = 0, failed = 0, not_run = 0;
  for (const auto& r : m.rows)
    (r.outcome == RowOutcome::Ran ? ran : r.outcome == RowOutcome::Refused ? refused : r.outcome == RowOutcome::Failed ? failed : not_run)++;
  std::string out = "# flashproof matrix: " + m.case_name + "\n";
  out += "case: " + m.case_file + "\n";
  out += "runtime: " + m.runtime + " " + m.runtime_version + "\n";
  out += "fingerprint: " + m.fingerprint_id + "\n";
  out += "fused attention expected with the flag on: " + m.expect_backend + "\n";
  for (const auto& a : m.axes) out += "axis " + a + "\n";
  out += "prompt: " + std::to_string(m.prompt_chars) + " characters of " + m.prompt_document + " (at most a third of the context), " +
         std::to_string(m.max_tokens) + " tokens out; speed: median of " + std::to_string(m.rounds) +
         " round(s) after one warm-up request, in a launch without verbose logging or probe\n";
  out += "rows: " + std::to_string(m.rows.size()) + " (" + std::to_string(ran) + " ran, " + std::to_string(refused) + " refused, " +
         std::to_string(failed) + " failed" + (not_run ? ", " + std::to_string(not_run) + " not run" : "") + ")\n\n";
  out += matrix_table(m);
  for (const auto& e : m.errors) out += "\nERROR: " + e + "\n";
  out += "\n## rows\n";
  for (size_t i = 0; i < m.rows.size(); ++i) {
    const MatrixRow& r = m.rows[i];
    out += "\n[" + std::to_string(i + 1) + "] kv " + r.kv_label() + (r.kv.empty() ? " (the case's)" : "") + ", flag " + r.flag_value +
           ", context " + std::to_string(r.context) + ", head size " + std::to_string(r.head_size) + ": " + to_string(r.outcome) + "\n";
    out += "  model: " + r.model_path + " (sha256 " + r.model_sha256 + ")\n";
    out += "  folder: " + r.dir + "\n";
    if (!r.detail.empty()) out += "  detail: " + r.detail + "\n";
    if (!r.verdict.empty()) {
      out += "  verdict: " + r.verdict + (r.degraded ? ", degraded" : "") + (r.verdict_as_flag ? "" : " (not what the flag asked for)") +
             "; levels: " + (r.levels_used.empty() ? "none" : join(r.levels_used, ", ")) + "\n";
      if (r.degraded) out += "  " + degradation_text(*r.degraded) + "\n";
      out += "  attention nodes: " + attention_nodes_text(r) + "\n";
      std::vector<std::string> splits;
      for (int s : r.graph_splits) splits.push_back(std::to_string(s));
      out += "  graph splits: " + (splits.empty() ? std::string("not stated") : join(splits, ", ")) + "\n";
      if (r.kernels_probed) {
        out += "  fused attention kernels: " + (r.fused_kernels.empty() ? std::string("none") : join(r.fused_kernels, ", ")) + "\n";
        out += "  unfused attention kernels: " + (r.unfused_kernels.empty() ? std::string("none") : join(r.unfused_kernels, ", ")) + "\n";
      } else {
        out += "  kernels: " + r.kernels_note + "\n";
      }
    }
    if (!r.cause.empty()) out += "  cause: " + r.cause + "\n";
    if (r.speed_rounds > 0)
      out += "  prompt: " + std::to_string(r.prompt_tokens) + " tokens, " + rate(r.server_prompt_tps) + " t/s (runtime), " +
             rate(r.client_prompt_tps) + " t/s (flashproof), " + std::to_string(r.speed_rounds) + " round(s)" +
             (r.flag_on && std::isfinite(r.server_vs_off) ? ", against the flag off " + ratio(r.server_vs_off) + " (runtime), " + ratio(r.client_vs_off) + " (flashproof)" : "") +
             "\n";
    if (r.speed_rounds > 0)
      out += "  time to first token: " + millis(r.ttft_ms) + " ms; decode: " + rate(r.server_decode_tps) + " t/s (runtime, " +
             std::to_string(r.decode_tokens) + " tokens a request)\n";
    if (std::isfinite(r.kv_mib) || std::isfinite(r.compute_mib))
      out += "  memory: KV cache " + mib(r.kv_mib) + " MiB, compute buffers " + mib(r.compute_mib) + " MiB (the runtime's own lines)\n";
    if (!r.speed_note.empty()) out += "  prompt speed: " + r.speed_note + "\n";
  }
  return out;
}

nlohmann::ordered_json matrix_to_json(const MatrixRun& m) {
  nlohmann::ordered_json j;
  j["kind"] = "flashproof-matrix";
  j["case"] = m.case_name;
  j["case_file"] = m.case_file;
  j["runtime"] = {{"name", m.runtime}, {"version", m.runtime_version}, {"build", m.runtime_build}};
  j["fingerprint_id"] = m.fingerprint_id;
  j["flashproof_version"] = m.flashproof_version;
  j["started_utc"] = m.started_utc;
  j["finished_utc"] = m.finished_utc;
  j["output_dir"] = m.output_dir;
  j["expect_backend"] = m.expect_backend;
  j["model_recipe"] = m.model_recipe;
  j["prompt"] = {{"document", m.prompt_document}, {"chars", m.prompt_chars}, {"max_tokens", m.max_tokens}, {"rounds", m.rounds}};
  j["axes"] = m.axes;
  j["exit_code"] = m.exit_code;
  j["errors"] = m.errors;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : m.rows) {
    nlohmann::ordered_json row;
    row["kv"] = r.kv_label();
    row["kv_k"] = r.kv_k;
    row["kv_v"] = r.kv_v;
    row["kv_from_case"] = r.kv.empty();
    row["flag"] = r.flag_mode();
    row["flag_value"] = r.flag_value;
    row["context"] = r.context;
    row["head_size"] = r.head_size;
    row["model"] = {{"path", r.model_path}, {"sha256", r.model_sha256}};
    row["dir"] = r.dir;
    row["outcome"] = to_string(r.outcome);
    row["as_expected"] = r.as_expected();
    row["detail"] = r.detail;
    row["verdict"] = r.verdict;
    row["verdict_as_flag"] = r.verdict_as_flag;
    row["degraded"] = r.degraded ? nlohmann::ordered_json(degradation_text(*r.degraded)) : nlohmann::ordered_json(nullptr);
    row["silent_fallback"] = r.silent_fallback;
    row["disagreement"] = r.disagreement;
    row["levels_used"] = r.levels_used;
    row["fused_op"] = r.fused_op;
    row["unfused_op"] = r.unfused_op;
    row["fused_nodes"] = counts_json(r.fused_nodes);
    row["unfused_nodes"] = counts_json(r.unfused_nodes);
    row["graph_splits"] = r.graph_splits;
    row["kernels"] = {{"probed", r.kernels_probed}, {"note", r.kernels_note}, {"fused", r.fused_kernels},
                      {"unfused", r.unfused_kernels}, {"fused_names", r.fused_kernel_names}, {"unfused_names", r.unfused_kernel_names}};
    row["cause"] = r.cause;
    row["shown"] = {{"verdict", verdict_cell(r)}, {"attention_nodes", attention_nodes_text(r)},
                    {"attention_kernels", attention_kernels_text(r)}, {"note", note_cell(r)}};
    row["prompt_speed"] = {{"prompt_tokens", r.prompt_tokens},
                           {"rounds", r.speed_rounds},
                           {"runtime_tokens_per_s", number_or_null(r.server_prompt_tps)},
                           {"flashproof_tokens_per_s", number_or_null(r.client_prompt_tps)},
                           {"runtime_vs_flag_off", number_or_null(r.server_vs_off)},
                           {"flashproof_vs_flag_off", number_or_null(r.client_vs_off)},
                           {"note", r.speed_note},
                           {"ttft_ms", number_or_null(r.ttft_ms)},
                           {"runtime_decode_tokens_per_s", number_or_null(r.server_decode_tps)},
                           {"decode_tokens", r.decode_tokens}};
    row["memory"] = {{"kv_cache_mib", number_or_null(r.kv_mib)}, {"compute_buffer_mib", number_or_null(r.compute_mib)}};
    rows.push_back(row);
  }
  j["rows"] = rows;
  return j;
}

Status write_matrix_files(const std::string& dir, const MatrixRun& m) {
  const std::string json = matrix_to_json(m).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  return write_files_atomic({{dir + "/matrix.json", json}, {dir + "/matrix.txt", valid_utf8(matrix_to_text(m))}});
}

}  // namespace fp
