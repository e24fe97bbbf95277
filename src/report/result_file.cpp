#include "report/result_file.h"

#include <cmath>
#include <cstdio>

#include "report/headroom_text.h"
#include "report/server_gauges_text.h"
#include "util/format_number.h"
#include "util/sha256.h"
#include "util/text.h"
#include "util/utf8.h"

namespace fp {
namespace {

// One key per line, always: a value's own line breaks are written as \n.
void line(std::string& out, const std::string& key, const std::string& value) {
  std::string v;
  v.reserve(value.size());
  for (char c : value) {
    if (c == '\n') v += "\\n";
    else if (c != '\r') v += c;
  }
  out += key + " = " + v + "\n";
}

nlohmann::ordered_json degradation_json(const Degradation& d) {
  using json = nlohmann::ordered_json;
  return {{"k_type", d.k_type}, {"v_type", d.v_type}, {"converted_to", d.converted_to}, {"runtime_says", d.quote},
          {"line", d.line}, {"kernels_say", d.kernels_say}, {"cause", d.cause}, {"remedy", d.remedy},
          {"compiled_pairs", d.compiled_pairs}, {"all_pairs_compiled", d.all_pairs_compiled},
          {"conversion_share", d.conversion_share ? json(*d.conversion_share) : json(nullptr)},
          {"conversion_kernels", d.conversion_kernels}};
}

Degradation degradation_from_json(const nlohmann::json& j) {
  Degradation d;
  d.k_type = j.value("k_type", "");
  d.v_type = j.value("v_type", "");
  d.converted_to = j.value("converted_to", "");
  d.quote = j.value("runtime_says", "");
  d.line = j.value("line", size_t{0});
  d.kernels_say = j.value("kernels_say", "");
  d.cause = j.value("cause", "");
  d.remedy = j.value("remedy", "");
  d.compiled_pairs = j.value("compiled_pairs", std::vector<std::string>{});
  d.all_pairs_compiled = j.value("all_pairs_compiled", false);
  if (j.contains("conversion_share") && j["conversion_share"].is_number()) d.conversion_share = j["conversion_share"].get<double>();
  d.conversion_kernels = j.value("conversion_kernels", std::vector<std::string>{});
  return d;
}

}  // namespace

std::string result_to_text(const RunResult& r) {
  // Folders that differ between runs or checkouts are written as placeholders; result.json keeps them.
  const auto shown = [&](const std::string& s) {
    return with_placeholder(with_placeholder(s, r.output_dir, "{run}"), r.suite_root, "{suite}");
  };
  std::string out = "# flashproof result: " + r.case_name + "\n";
  line(out, "case", r.case_name);
  line(out, "case.file", shown(r.case_file));
  line(out, "job", r.job);
  line(out, "runtime", r.runtime);
  line(out, "runtime.version", r.runtime_version);
  line(out, "runtime.build", r.runtime_build);
  line(out, "flashproof.version", r.flashproof_version);
  line(out, "fingerprint", r.fingerprint_id);
  // What the build says it compiled (its system_info): part of its identity.
  if (r.fingerprint.is_object())
    for (const char* key : {"runtime_fa_pairs", "runtime_gpu_archs"})
      if (r.fingerprint.contains(key) && r.fingerprint[key].is_string() && !r.fingerprint[key].get<std::string>().empty())
        line(out, std::string("fingerprint.") + key, r.fingerprint[key].get<std::string>());
  line(out, "model.path", r.model_path);
  line(out, "model.sha256", r.model_sha256);
  if (!r.attached.empty()) {
    line(out, "attach.endpoint", r.attached);
    line(out, "attach.log", r.attached_log);
    for (size_t i = 0; i < r.attached_notes.size(); ++i) line(out, "attach.note." + std::to_string(i + 1), r.attached_notes[i]);
  }
  line(out, "launch.flag", r.flag_value);
  line(out, "launch.timed", quote_args(r.timed_line.empty() ? r.timed_argv : r.timed_line));
  line(out, "launch.evidence", quote_args(r.evidence_line.empty() ? r.evidence_argv : r.evidence_line));
  for (const auto& [k, v] : r.evidence_env) line(out, "launch.evidence.env." + k, shown(v));
  if (r.instruments_known) {  // an evidence pass that failed says its launches in its failure
    line(out, "instruments.on", r.instruments_on.empty() ? "none" : join(r.instruments_on, "; "));
    for (size_t i = 0; i < r.instruments_off.size(); ++i) line(out, "instruments.off." + std::to_string(i + 1), shown(r.instruments_off[i]));
    line(out, "instruments.extra_launches", std::to_string(r.instrument_extra_launches));
    for (size_t i = 0; i < r.instrument_retry_steps.size(); ++i)
      line(out, "instruments.retry." + std::to_string(i + 1), shown(r.instrument_retry_steps[i]));
  }
  line(out, "status", r.status());
  size_t n_not_utf8 = 0;
  for (const auto& [source, bytes] : r.not_utf8)
    line(out, "not_utf8." + std::to_string(++n_not_utf8), shown(source) + ": " + std::to_string(bytes) + (bytes == 1 ? " byte that is" : " bytes that are") + " not UTF-8, shown as U+FFFD");
  for (size_t i = 0; i < r.failures.size(); ++i) line(out, "failure." + std::to_string(i + 1), shown(r.failures[i]));
  line(out, "expect.fused_attention", r.expect_fused ? "true" : "false");
  line(out, "expect.backend", r.expect_backend);
  const RunVerdict& v = r.verdict;
  line(out, "verdict", verdict_state_text(v.activity, v.degraded.has_value()));
  if (v.degraded) {
    const Degradation& d = *v.degraded;
    line(out, "verdict.degraded.kv", d.k_type + "-" + d.v_type + (d.converted_to.empty() ? "" : " converted to " + d.converted_to));
    if (!d.quote.empty()) line(out, "verdict.degraded.runtime_says", "line " + std::to_string(d.line) + ": " + d.quote);
    if (!d.kernels_say.empty()) line(out, "verdict.degraded.kernels_say", d.kernels_say);
    line(out, "verdict.degraded.cause", d.cause);
    line(out, "verdict.degraded.remedy", d.remedy);
    line(out, "verdict.degraded.cost", d.conversion_share ? fixed(*d.conversion_share * 100, 1) + "%" + " of GPU time in converting the KV cache" +
                                                                (d.conversion_kernels.empty() ? "" : " (" + join(d.conversion_kernels, ", ") + ")")
                                                          : "not measured (no kernel tally)");
  }
  line(out, "verdict.backend", backends_text(v.fused_backends));
  line(out, "verdict.as_expected", v.as_expected ? "true" : "false");
  line(out, "verdict.levels_used", join(v.levels_used, "; "));
  line(out, "verdict.levels_unavailable", join(v.levels_unavailable, "; "));
  line(out, "verdict.explanation", v.explanation);
  for (size_t i = 0; i < v.quotes.size(); ++i) line(out, "verdict.quote." + std::to_string(i + 1), v.quotes[i]);
  for (size_t i = 0; i < r.verdict_causes.size(); ++i) line(out, "verdict.cause." + std::to_string(i + 1), r.verdict_causes[i]);
  line(out, "signals.evidence_pass", r.evidence_signals);
  line(out, "signals.evidence_load", r.evidence_load);
  line(out, "signals.timed_runs", r.timed_signals);
  line(out, "signals.probed_check", r.probed_check);
  line(out, "signals.mismatches", r.signal_mismatches.empty() ? "none" : join(r.signal_mismatches, "; "));
  line(out, "kernels.families", r.kernel_families.empty() ? "not recorded (no kernel probe)"
                                                          : kernel_families_text(golden_kernel_families(r.kernel_families)) +
                                                                " of the attention GPU time (median over " +
                                                                join(r.kernel_launches, ", ") + ")");
  for (const auto& f : r.kernel_families) {
    std::vector<std::string> shares;
    for (double v : f.shares) shares.push_back(fixed(v, 3, "nan"));
    line(out, "kernels.family." + f.family + (f.fused ? "" : ".unfused"), join(shares, " "));
  }
  line(out, "timed.launches", std::to_string(r.launches));
  const std::string not_attached = "not measured: attached";  // a server started by something else
  line(out, "cold.ready_ms", r.attached.empty() ? fixed(r.cold_ready_ms, 3, "nan") : not_attached);
  line(out, "cold.first_request_ttft_ms", r.attached.empty() ? fixed(r.cold_first_ttft_ms, 3, "nan") : not_attached);
  line(out, "cold.first_request_e2e_ms", r.attached.empty() ? fixed(r.cold_first_e2e_ms, 3, "nan") : not_attached);
  for (const auto& f : r.figures) {
    const std::string k = "figure." + f.name;
    line(out, k + ".n", std::to_string(f.summary.n));
    line(out, k + ".p50", fixed(f.summary.median, 3, "nan"));
    line(out, k + ".p95", fixed(f.summary.p95, 3, "nan"));
    line(out, k + ".p99", fixed(f.summary.p99, 3, "nan"));
    line(out, k + ".gate", f.gate ? "true" : "false");
    std::vector<std::string> medians;
    for (double v : f.launch_medians) medians.push_back(fixed(v, 3, "nan"));
    line(out, k + ".launch_medians", join(medians, " "));
  }
  line(out, "fidelity", r.fidelity);
  line(out, "ttft.split", ttft_split_text(r.ttft_split));
  if (r.ttft_split.requests > 0) {
    const TtftSplit& t = r.ttft_split;
    line(out, "ttft.split.server_prefill_ms.p50", fixed(t.prefill_ms, 3, "nan"));
    line(out, "ttft.split.decode_before_text_ms.p50",
         t.with_first_text_timings ? fixed(t.decode_before_text_ms, 3, "nan") : "not reported");
    line(out, "ttft.split.outside_server_ms.p50", fixed(t.outside_ms, 3, "nan"));
    if (t.upkeep_n > 0)
      line(out, "ttft.split.runtime_upkeep_ms.p50",
           fixed(t.upkeep_ms, 3) + " (" + t.upkeep_what + ", " + std::to_string(t.upkeep_n) + " tasks, largest " +
               fixed(t.upkeep_max_ms, 3) + ")");
    line(out, "ttft.split.cached_prompt_tokens",
         fixed(t.cached_tokens_total, 0) + " of " + fixed(t.cached_tokens_total + t.prompt_tokens_total, 0) + " on " +
             std::to_string(t.cached_requests) + " of " + std::to_string(t.requests) + " requests");
  }
  if (r.server_gauges) {
    const auto lines = server_gauges_lines(*r.server_gauges, "timed runs");
    for (size_t i = 0; i < lines.size(); ++i) line(out, "server_gauges." + std::to_string(i + 1), lines[i]);
  }
  for (const auto& [k, v] : r.workload) line(out, "workload." + k, v);
  line(out, "memory.kv_cache_mib", r.kv_cache_mib ? fixed(*r.kv_cache_mib, 3, "nan") : "not reported by the runtime");
  if (r.kv_cache_tokens) line(out, "memory.kv_cache_tokens", std::to_string(*r.kv_cache_tokens));
  for (const auto& [d, v] : r.kv_mib_by_device) line(out, "memory.kv_buffer_mib." + d, fixed(v, 3, "nan"));
  for (const auto& [d, v] : r.compute_mib_by_device) line(out, "memory.compute_buffer_mib." + d, fixed(v, 3, "nan"));
  line(out, "memory.host_peak_rss_mib", r.peak_rss_mib ? fixed(*r.peak_rss_mib, 3, "nan") : "not measured");
  line(out, "memory.gpu", r.gpu_memory);
  for (const auto& [k, v] : headroom_lines(r.headroom, r.headroom_why_not)) line(out, k, v);
  for (const auto& a : r.answers) {
    const std::string k = "answer." + a.prompt_id;
    line(out, k + ".sha256", sha256_hex(a.text));
    line(out, k + ".stable", a.stable ? "true" : "false");
    line(out, k + ".reference", a.reference);
    line(out, k + ".text", quote(a.text));
  }
  line(out, "golden.dir", shown(r.golden_dir));
  line(out, "golden.status", r.golden_status);
  for (size_t i = 0; i < r.golden_lines.size(); ++i) line(out, "golden." + std::to_string(i + 1), shown(r.golden_lines[i]));
  return out;
}

nlohmann::ordered_json result_to_json(const RunResult& r) {
  using json = nlohmann::ordered_json;
  json j;
  j["case"] = r.case_name;
  j["case_file"] = r.case_file;
  j["job"] = r.job;
  j["runtime"] = {{"name", r.runtime}, {"version", r.runtime_version}, {"build", r.runtime_build}, {"found_by", r.runtime_found_by}};
  j["flashproof_version"] = r.flashproof_version;
  j["started_utc"] = r.started_utc;
  j["fingerprint"] = r.fingerprint_id;
  j["fingerprint_detail"] = r.fingerprint;
  j["suite"] = r.suite_root;
  j["model"] = {{"path", r.model_path}, {"file", r.model_file}, {"sha256", r.model_sha256}};
  if (!r.attached.empty()) j["attach"] = {{"endpoint", r.attached}, {"log", r.attached_log}, {"notes", r.attached_notes}};
  j["launch"] = {{"flag", r.flag_value}, {"timed_argv", r.timed_argv}, {"evidence_argv", r.evidence_argv}, {"evidence_env", r.evidence_env},
                 {"timed_line", r.timed_line}, {"evidence_line", r.evidence_line}};
  if (r.instruments_known)
    j["instruments"] = {{"on", r.instruments_on}, {"off", r.instruments_off}, {"extra_launches", r.instrument_extra_launches},
                        {"retry", r.instrument_retry_steps}};
  j["status"] = r.status();
  j["failures"] = r.failures;
  if (!r.not_utf8.empty()) j["not_utf8"] = r.not_utf8;  // source -> bytes replaced by U+FFFD
  j["expect"] = {{"fused_attention", r.expect_fused}, {"backend", r.expect_backend}};
  const RunVerdict& v = r.verdict;
  j["verdict"] = {{"state", to_string(v.activity)}, {"backend", backends_text(v.fused_backends)}, {"as_expected", v.as_expected},
                  {"levels_used", v.levels_used}, {"levels_unavailable", v.levels_unavailable},
                  {"explanation", v.explanation}, {"quotes", v.quotes}, {"causes", r.verdict_causes},
                  {"state_text", verdict_state_text(v.activity, v.degraded.has_value())},
                  {"degraded", v.degraded ? degradation_json(*v.degraded) : json(nullptr)}};
  j["signals"] = {{"evidence_pass", r.evidence_signals}, {"evidence_load", r.evidence_load}, {"timed_runs", r.timed_signals}, {"probed_check", r.probed_check},
                  {"mismatches", r.signal_mismatches}};
  json families = json::array();
  for (const auto& f : r.kernel_families) families.push_back({{"family", f.family}, {"fused", f.fused}, {"shares", f.shares}});
  j["kernels"] = {{"launches", r.kernel_launches}, {"families", families}};
  j["cold"] = {{"ready_ms", r.cold_ready_ms}, {"first_request_ttft_ms", r.cold_first_ttft_ms}, {"first_request_e2e_ms", r.cold_first_e2e_ms}};
  if (!r.attached.empty()) j["cold"]["not_measured"] = "attached";
  json figs = json::object();
  for (const auto& f : r.figures)
    figs[f.name] = {{"n", f.summary.n}, {"p50", f.summary.median}, {"p95", f.summary.p95}, {"p99", f.summary.p99},
                    {"mean", f.summary.mean}, {"mad", f.summary.mad}, {"gate", f.gate},
                    {"direction", f.lower_is_better ? "lower_is_better" : "higher_is_better"},
                    {"min_effect", std::isfinite(f.min_effect.relative) ? json(f.min_effect.relative) : json(nullptr)},
                    {"min_effect_floor", f.min_effect.floor},
                    {"guard", f.guard ? json({{"relative", f.guard->relative}, {"floor", f.guard->floor}}) : json(nullptr)},
                    {"launch_medians", f.launch_medians}, {"samples", f.samples}};
  j["launches"] = r.launches;
  j["figures"] = figs;
  j["fidelity"] = r.fidelity;
  {
    const TtftSplit& t = r.ttft_split;
    auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    j["ttft_split"] =
        t.requests == 0
            ? json({{"text", ttft_split_text(t)}, {"requests", 0}})
            : json({{"text", ttft_split_text(t)},
                    {"requests", t.requests},
                    {"ttft_ms_p50", num(t.ttft_ms)},
                    {"server_prefill_ms_p50", num(t.prefill_ms)},
                    {"decode_before_text_ms_p50", t.with_first_text_timings ? num(t.decode_before_text_ms) : json(nullptr)},
                    {"tokens_before_text_p50", t.with_first_text_timings ? num(t.tokens_before_text) : json(nullptr)},
                    {"outside_server_ms_p50", num(t.outside_ms)},
                    {"prompt_tokens_evaluated_p50", num(t.prompt_tokens)},
                    {"cached_prompt_tokens", t.cached_tokens_total},
                    {"evaluated_prompt_tokens", t.prompt_tokens_total},
                    {"requests_with_cached_tokens", t.cached_requests},
                    {"runtime_upkeep",
                     t.upkeep_n == 0
                         ? json(nullptr)
                         : json({{"what", t.upkeep_what}, {"tasks", t.upkeep_n}, {"ms_p50", t.upkeep_ms}, {"ms_max", t.upkeep_max_ms}})}});
  }
  j["server_gauges"] = r.server_gauges ? server_gauges_json(*r.server_gauges) : json(nullptr);
  if (!r.workload.empty()) {
    json w = json::object();
    for (const auto& [k, v] : r.workload) w[k] = v;
    j["workload"] = w;
  }
  j["memory"] = {{"kv_cache_mib", r.kv_cache_mib ? json(*r.kv_cache_mib) : json(nullptr)},
                 {"kv_cache_tokens", r.kv_cache_tokens ? json(*r.kv_cache_tokens) : json(nullptr)},
                 {"kv_buffer_mib", r.kv_mib_by_device}, {"compute_buffer_mib", r.compute_mib_by_device},
                 {"host_peak_rss_mib", r.peak_rss_mib ? json(*r.peak_rss_mib) : json(nullptr)}, {"gpu", r.gpu_memory}};
  j["headroom"] = headroom_json(r.headroom, r.headroom_why_not);
  json answers = json::array();
  for (const auto& a : r.answers)
    answers.push_back({{"prompt_id", a.prompt_id}, {"text", a.text}, {"stable", a.stable}, {"reference", a.reference}, {"diff", a.diff}});
  j["answers"] = answers;
  j["golden"] = {{"dir", r.golden_dir}, {"status", r.golden_status}, {"lines", r.golden_lines}};
  return j;
}

Status write_result_files(const std::string& dir, const RunResult& r) {
  // Both rendered before either is written; text that escaped util/utf8.h is replaced here rather than
  // abort the write (nlohmann_json throws on a string that is not UTF-8).
  size_t late = 0;
  const std::string text = valid_utf8(result_to_text(r), &late);
  const std::string json = result_to_json(r).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  if (late) std::fprintf(stderr, "flashproof: %s: %zu bytes of the result were not UTF-8 and are written as U+FFFD\n", dir.c_str(), late);
  // Never one without the other (a result.txt saying pass and no result.json was an aborted run).
  return write_files_atomic({{dir + "/result.json", json}, {dir + "/result.txt", text}});
}

}  // namespace fp

namespace fp {

Result<RunResult> load_result_json(const std::string& path) {
  FP_TRY(std::string text, read_file(path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return make_error(path + ": not a valid result file (truncated or corrupt JSON): " + e.what());
  }
  RunResult r;
  try {
    r.case_name = j.at("case").get<std::string>();
    r.case_file = j.at("case_file").get<std::string>();
    r.job = j.at("job").get<std::string>();
    r.runtime = j.at("runtime").at("name").get<std::string>();
    r.runtime_version = j.at("runtime").at("version").get<std::string>();
    r.runtime_build = j.at("runtime").at("build").get<std::string>();
    r.fingerprint_id = j.at("fingerprint").get<std::string>();
    if (j.contains("fingerprint_detail") && j["fingerprint_detail"].is_object())
      r.fingerprint = nlohmann::ordered_json::parse(j["fingerprint_detail"].dump());
    r.model_sha256 = j.at("model").at("sha256").get<std::string>();
    r.flag_value = j.at("launch").at("flag").get<std::string>();
    const std::string status = j.at("status").get<std::string>();
    r.complete = status != "incomplete";
    r.failures = j.at("failures").get<std::vector<std::string>>();
    const std::string state = j.at("verdict").at("state").get<std::string>();
    const auto activity = activity_from_string(state);
    if (!activity)
      return make_error(path + ": verdict.state \"" + state + "\" is not one of \"active\", \"not active\", \"no evidence\"");
    r.verdict.activity = *activity;
    r.verdict.as_expected = j.at("verdict").at("as_expected").get<bool>();
    r.verdict.explanation = j.at("verdict").at("explanation").get<std::string>();
    r.verdict.levels_used = j.at("verdict").value("levels_used", std::vector<std::string>{});
    r.verdict.levels_unavailable = j.at("verdict").value("levels_unavailable", std::vector<std::string>{});
    if (j["verdict"].contains("degraded") && j["verdict"]["degraded"].is_object())  // absent in older result files
      r.verdict.degraded = degradation_from_json(j["verdict"]["degraded"]);
    r.evidence_signals = j.at("signals").at("evidence_pass").get<std::string>();
    r.timed_signals = j.at("signals").at("timed_runs").get<std::string>();
    r.evidence_load = j["signals"].value("evidence_load", std::string());
    r.probed_check = j["signals"].value("probed_check", std::string("not recorded"));  // absent in older result files
    if (j.contains("instruments") && j["instruments"].is_object()) {  // absent in older result files
      r.instruments_known = true;
      r.instruments_on = j["instruments"].value("on", std::vector<std::string>{});
      r.instruments_off = j["instruments"].value("off", std::vector<std::string>{});
      r.instrument_extra_launches = j["instruments"].value("extra_launches", 0);
      r.instrument_retry_steps = j["instruments"].value("retry", std::vector<std::string>{});
    }
    r.timed_argv = j.at("launch").at("timed_argv").get<std::vector<std::string>>();
    if (j["launch"].contains("timed_line")) r.timed_line = j["launch"]["timed_line"].get<std::vector<std::string>>();
    r.suite_root = j.value("suite", std::string());  // absent in older result files
    r.launches = j.value("launches", 1);
    for (const auto& [name, f] : j.at("figures").items()) {
      FigureResult fr;
      fr.name = name;
      fr.samples = f.at("samples").get<std::vector<double>>();
      fr.summary = summarize(fr.samples);
      fr.gate = f.at("gate").get<bool>();
      fr.lower_is_better = f.at("direction").get<std::string>() == "lower_is_better";
      // Older result files hold one launch and no launch medians or minimum effect.
      if (f.contains("launch_medians")) fr.launch_medians = f["launch_medians"].get<std::vector<double>>();
      else if (!fr.samples.empty()) fr.launch_medians = {fr.summary.median};
      if (f.contains("min_effect") && f["min_effect"].is_number()) fr.min_effect.relative = f["min_effect"].get<double>();
      if (f.contains("min_effect_floor") && f["min_effect_floor"].is_number()) fr.min_effect.floor = f["min_effect_floor"].get<double>();
      if (f.contains("guard") && f["guard"].is_object() && f["guard"].contains("relative") && f["guard"]["relative"].is_number())
        fr.guard = MinEffect{f["guard"]["relative"].get<double>(), f["guard"].value("floor", 0.0)};
      r.figures.push_back(fr);
    }
    for (const auto& a : j.at("answers")) {
      AnswerResult ar;
      ar.prompt_id = a.at("prompt_id").get<std::string>();
      ar.text = a.at("text").get<std::string>();
      ar.stable = a.at("stable").get<bool>();
      ar.reference = a.at("reference").get<std::string>();
      r.answers.push_back(ar);
    }
    if (j.contains("memory")) {
      const auto& m = j["memory"];
      if (m.contains("kv_cache_mib") && m["kv_cache_mib"].is_number()) r.kv_cache_mib = m["kv_cache_mib"].get<double>();
      if (m.contains("host_peak_rss_mib") && m["host_peak_rss_mib"].is_number()) r.peak_rss_mib = m["host_peak_rss_mib"].get<double>();
    }
    if (j.contains("cold")) {
      r.cold_ready_ms = j["cold"].value("ready_ms", -1.0);
      r.cold_first_ttft_ms = j["cold"].value("first_request_ttft_ms", -1.0);
    }
    if (j.contains("kernels") && j["kernels"].is_object()) {  // absent in older result files
      r.kernel_launches = j["kernels"].value("launches", std::vector<std::string>{});
      for (const auto& f : j["kernels"].value("families", nlohmann::json::array()))
        r.kernel_families.push_back({f.at("family").get<std::string>(), f.at("fused").get<bool>(),
                                     f.at("shares").get<std::vector<double>>()});
    }
    if (j.contains("attach") && j["attach"].is_object()) {
      r.attached = j["attach"].value("endpoint", "");
      r.attached_log = j["attach"].value("log", "");
      r.attached_notes = j["attach"].value("notes", std::vector<std::string>{});
    }
    const std::string backend = j.at("verdict").value("backend", "");
    const auto placed = backends_from_text(backend);
    if (!placed)
      return make_error(path + ": verdict.backend \"" + backend + "\" is not a placement such as \"CPU 30, CUDA0 126\" (backend, fused nodes)");
    r.verdict.fused_backends = *placed;
    r.verdict_causes = j.at("verdict").value("causes", std::vector<std::string>{});
    if (j.contains("server_gauges") && j["server_gauges"].is_object()) r.server_gauges = server_gauges_from_json(j["server_gauges"]);
  } catch (const nlohmann::json::exception& e) {
    return make_error(path + ": not a valid result file: " + e.what());
  }
  r.output_dir = path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
  return r;
}

}  // namespace fp
