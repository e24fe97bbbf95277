#include "case/effect_defaults.h"

#include <algorithm>

#include "case/case_file.h"
#include "util/regex.h"
#include "util/text.h"

namespace fp {

const std::vector<FloorRow>& floor_table() {
  static const std::vector<FloorRow> rows = {
      {"ttft_ms", 1.0, "harness CPU per streamed request: 1.0 ms median (bench/README.md section 1)"},
      {"e2e_ms", 1.0, "as ttft_ms: what the client adds per request"},
      {"server_prompt_ms", 1.0, "as ttft_ms"},
      {"cold_first_ttft_ms", 1.0, "as ttft_ms"},
      {"cold_first_e2e_ms", 1.0, "as ttft_ms"},
      {"itl_ms", 0.05, "harness CPU per streamed event: about 0.06 ms (1.0 ms over 17 events)"},
      {"tpot_ms", 0.05, "as itl_ms"},
      {"server_tpot_ms", 0.05, "as itl_ms"},
      {"cpu_ms_per_token", 0.01, "schedstat accounting over a request of a few hundred tokens"},
      {"gpu_kernel_ms", 0.01, "H200 launch-to-launch kernel-time spread: 0.13% of 7.64 ms"},
      {"attention_kernel_ms", 0.01, "as gpu_kernel_ms"},
      {"gpu_kernel_ms_per_token", 1e-6, "per token (golden path): CUPTI's 1 ns timestamps"},
      {"attention_kernel_ms_per_token", 1e-6, "as gpu_kernel_ms_per_token"},
      {"cold_ready_ms", 50.0, "process start and model mapping jitter"},
  };
  return rows;
}

std::string base_figure_name(const std::string& figure) {
  static const Regex level(R"(c[0-9]+\.(.+))");
  RegexMatch m;
  return regex_match(figure, level, m) ? m.str(1) : figure;
}

double default_floor(const std::string& figure) {
  const std::string name = base_figure_name(figure);
  const FloorRow* best = nullptr;
  for (const auto& row : floor_table())
    if ((name == row.figure || starts_with(name, row.figure + "_")) && (!best || row.figure.size() > best->figure.size())) best = &row;
  return best ? best->floor : 0.0;
}

MinEffect default_min_effect(Job, const std::string& figure) { return MinEffect{kDefaultMinEffect, default_floor(figure)}; }

const std::vector<std::string>& user_felt_figures() {
  static const std::vector<std::string> names = {"ttft_ms", "ttft_ms_p95", "tpot_ms", "itl_ms", "e2e_ms",
                                                 "prompt_tokens_per_s", "decode_tokens_per_s", "throughput_tokens_per_s"};
  return names;
}

bool is_user_felt(const std::string& figure) {
  const auto& names = user_felt_figures();
  return std::find(names.begin(), names.end(), base_figure_name(figure)) != names.end();
}

std::optional<MinEffect> default_guard(Job, const std::string& figure) {
  if (!is_user_felt(figure)) return std::nullopt;
  return MinEffect{kDefaultGuardEffect, default_floor(figure)};
}

}  // namespace fp
