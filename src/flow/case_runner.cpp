#include "flow/case_runner.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "flow/evidence_pass.h"
#include "flow/figures.h"
#include "flow/golden_step.h"
#include "flow/history.h"
#include "flow/gpu_probe.h"
#include "flow/probed_check.h"
#include "flow/progress.h"
#include "measure/nvml.h"
#include "golden/fingerprint.h"
#include "report/redact.h"
#include "report/result_file.h"
#include "util/sha256.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

// The first `n` bytes of a file ("" when unreadable): where a runtime states its build.
std::string file_head(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string s(n, '\0');
  in.read(&s[0], static_cast<std::streamsize>(n));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

// Phases go to the case's progress (flow/progress.h): a status line on a terminal, plain lines in CI.
void progress(const RunOptions& o, const std::string& case_name, const std::string& msg) {
  if (Progress* p = current_progress(); p && !o.quiet) p->phase(case_name, msg);
}

// Whether the case names a model file that is not on this machine (the loader then fails; the case
// is skipped with its message, not failed: this box does not hold that model).
bool model_missing(const std::string& case_path, const std::string& repo_root) {
  std::ifstream in(case_path);
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object() || !j["model"].contains("path") || !j["model"]["path"].is_string())
    return false;
  const fs::path model = j["model"]["path"].get<std::string>();
  std::error_code ec;
  return !fs::exists(model.is_absolute() ? model : fs::path(repo_root) / model, ec);
}

// Why a case cannot run on this machine (a skip, never a pass), or "" when it can: the case expects
// a CUDA backend and NVML sees no GPU. The replay test double (FLASHPROOF_TEST_DOUBLE_GPU=1) stands in
// for the GPU.
std::string missing_gpu(const Case& c) {
  if (c.expect.backend.rfind("CUDA", 0) != 0) return "";
  if (const char* td = std::getenv(kTestDoubleGpuVar); td && std::string(td) == "1") return "";
  auto nvml = Nvml::open();
  if (!nvml) return "case expects backend " + c.expect.backend + " but no NVIDIA GPU is usable here: " + nvml_reason(nvml.error());
  auto n = nvml->gpu_count();
  if (!n) return "case expects backend " + c.expect.backend + " but NVML cannot count the GPUs: " + nvml_reason(n.error());
  if (*n == 0) return "case expects backend " + c.expect.backend + " but NVML lists no GPU";
  return "";
}

void collect_answers(const TimedPass& pass, RunResult& r) {
  std::map<std::string, std::vector<std::string>> by_prompt;
  std::vector<std::string> order;
  auto note = [&](const std::string& id, const std::string& text) {
    if (!by_prompt.count(id)) order.push_back(id);
    by_prompt[id].push_back(text);
  };
  if (pass.cold_first.done) note(pass.cold_first_prompt, pass.cold_first.text);
  for (const auto& tr : pass.requests) note(tr.prompt_id, tr.result.text);
  std::sort(order.begin(), order.end());
  for (const auto& id : order) {
    AnswerResult a;
    a.prompt_id = id;
    a.text = by_prompt[id].front();
    for (const auto& t : by_prompt[id]) a.stable = a.stable && t == a.text;
    a.reference = "no reference";
    r.answers.push_back(a);
  }
}

bool verdict_as_expected(const Case& c, const Verdict& v) {
  if (v.activity == Activity::NoEvidence || v.disagreement) return false;
  if (!c.expect.fused_attention) return v.activity == Activity::NotActive;
  return v.activity == Activity::Active;
}

std::string backends_text(const std::map<std::string, int>& b) {
  std::vector<std::string> parts;
  for (const auto& [k, n] : b) parts.push_back(k + " " + std::to_string(n));
  return join(parts, ", ");
}

}  // namespace

CaseRun run_case_file(const std::string& case_path, const RunOptions& opts_in) {
  RunOptions o = opts_in;
  if (o.results_root.empty()) o.results_root = o.repo_root + "/results";
  if (o.golden_root.empty()) o.golden_root = o.repo_root + "/golden";
  CaseRun run;
  Progress case_progress(detect_progress_style(o.quiet), std::cerr);
  ScopedProgress progress_scope(&case_progress);
  auto fail_early = [&](int code, const std::string& msg) {
    run.exit_code = code;
    run.message = msg;
    return run;
  };

  auto loaded = load_case(case_path, o.repo_root);
  if (!loaded && model_missing(case_path, o.repo_root)) return fail_early(kRunSkip, "SKIP: model not on this machine: " + loaded.error().message);
  if (!loaded) return fail_early(kRunIncomplete, loaded.error().message);
  CaseContext ctx;
  ctx.c = *loaded;
  const Case& c = ctx.c;
  auto adapter = load_adapter(c.runtime);
  if (!adapter) return fail_early(kRunIncomplete, c.file + ": field \"runtime\": " + adapter.error().message);
  ctx.adapter = *adapter;
  auto sigs = load_runtime_signatures(c.runtime);
  if (!sigs) return fail_early(kRunIncomplete, sigs.error().message);
  ctx.signatures = *sigs;
  auto runtime = locate_runtime(ctx.adapter);
  if (!runtime) {
    // Named explicitly but broken is an error; not installed anywhere is a skip, with the reason.
    const char* named = std::getenv(ctx.adapter.executable_var.c_str());
    if (named && *named) return fail_early(kRunIncomplete, runtime.error().message);
    return fail_early(kRunSkip, "SKIP: " + runtime.error().message);
  }
  ctx.runtime = *runtime;
  ctx.model_path = fs::path(c.model.path).is_absolute() ? c.model.path : (fs::path(o.repo_root) / c.model.path).string();
  if (std::string why = missing_gpu(c); !why.empty()) return fail_early(kRunSkip, "SKIP: " + why);
  auto sha = sha256_file(ctx.model_path);
  if (!sha) return fail_early(kRunIncomplete, c.file + ": field \"model.path\": " + sha.error().message);
  if (*sha != c.model.sha256)
    return fail_early(kRunIncomplete, c.file + ": field \"model.sha256\" = " + c.model.sha256 + " but " + ctx.model_path +
                                          " has sha256 " + *sha + " (a different model file: regenerate it or update the case)");
  auto prompts = load_prompt_set(o.repo_root, c.shape.prompt_set, c.shape.long_prompt);
  if (!prompts) return fail_early(kRunIncomplete, c.file + ": field \"shape.prompt_set\": " + prompts.error().message);
  ctx.prompts = *prompts;
  ctx.flag_value = o.flag_on ? (*o.flag_on ? c.flag.on : c.flag.off) : c.flag.used();

  RunResult& r = run.result;
  r.case_name = c.name;
  r.case_file = c.file;
  r.description = c.description;
  r.job = job_name(c.job);
  r.runtime = c.runtime;
  r.runtime_found_by = ctx.runtime.how_found;
  r.flashproof_version = FLASHPROOF_VERSION;
  r.started_utc = utc_stamp("%Y-%m-%dT%H:%M:%SZ");
  r.model_path = c.model.path;
  r.model_sha256 = *sha;
  r.flag_value = ctx.flag_value;
  r.expect_fused = c.expect.fused_attention;
  r.expect_backend = c.expect.backend;

  Fingerprint fpr = machine_fingerprint();
  fpr.runtime = c.runtime;
  fpr.model_sha256 = *sha;
  fpr.launch = join(c.launch.argv, " ");
  const std::string scratch = fs::temp_directory_path().string();
  auto version = runtime_version(ctx.runtime, ctx.adapter, scratch.empty() ? "/tmp" : scratch);
  if (!version) return fail_early(kRunIncomplete, "runtime version: " + version.error().message);
  r.runtime_version = version->text;
  r.runtime_build = version->build;
  fpr.runtime_version = version->text;
  fpr.runtime_build = version->build;
  r.fingerprint_id = fpr.id();

  ctx.out_dir = o.out_dir.empty() ? o.results_root + "/" + fpr.id() + "/" + c.name + "/" + utc_stamp("%Y%m%dT%H%M%SZ") + "-" + std::to_string(getpid())
                                  : o.out_dir;
  std::error_code ec;
  fs::create_directories(ctx.out_dir, ec);
  if (ec) return fail_early(kRunIncomplete, ctx.out_dir + ": cannot create the run folder: " + ec.message());
  r.output_dir = ctx.out_dir;

  auto finish = [&](int code) {
    r.fingerprint = fpr.to_json();
    if (auto st = write_result_files(ctx.out_dir, r); !st) std::cerr << "flashproof: " << st.error().message << "\n";
    if (o.out_dir.empty())  // the default layout keeps the history (flow/history.h)
      if (auto st = record_run(o.results_root, {utc_stamp("%Y-%m-%dT%H:%M:%SZ"), r.fingerprint_id, r.case_name, r.status(), ctx.out_dir}); !st)
        std::cerr << "flashproof: history: " << st.error().message << "\n";
    run.exit_code = code;
    return run;
  };

  progress(o, c.name, "evidence pass: " + ctx.runtime.how_found + ", flag " + ctx.flag_value);
  auto ev = run_evidence_pass(ctx);
  if (!ev) {
    r.failures.push_back("evidence pass failed: " + ev.error().message);
    return finish(kRunIncomplete);
  }
  r.evidence_argv = redact_argv(ev->argv);
  fpr.runtime_build_log = build_stated_in_log(file_head(ev->log_path, 1 << 20));
  r.evidence_env = redact_env(ev->env);
  const Verdict& v = ev->verdict;
  r.verdict = to_string(v.activity);
  r.verdict_backend = backends_text(v.fused_backends);
  r.verdict_explanation = v.explanation;
  r.verdict_quotes = v.quotes;
  for (int l : v.levels_used) r.levels_used.push_back(v.levels[static_cast<size_t>(l - 1)].name);
  r.levels_unavailable = v.levels_unavailable;
  r.verdict_as_expected = verdict_as_expected(c, v);
  r.evidence_signals = signals_text(ev->signals);
  if (!r.verdict_as_expected)
    r.failures.push_back(std::string("fused attention expected ") + (c.expect.fused_attention ? "active" : "not active") +
                         " on " + c.expect.backend + ", evidence says " + r.verdict + ": " + v.explanation);

  progress(o, c.name, "evidence: " + r.verdict + " (" + std::to_string(ev->wall_s).substr(0, 5) + " s); timed runs");
  auto timed = run_timed_pass(ctx, [&] {
    TimedOptions t = o.timed;
    if (c.job == Job::Batch) t.concurrent_rounds = true;
    return t;
  }());
  if (!timed) {
    r.failures.push_back("timed runs failed: " + timed.error().message);
    return finish(kRunIncomplete);
  }
  r.timed_argv = redact_argv(timed->argv);
  r.cold_ready_ms = timed->ready_s * 1e3;
  r.cold_first_ttft_ms = timed->cold_first.ttft_s >= 0 ? timed->cold_first.ttft_s * 1e3 : -1;
  r.cold_first_e2e_ms = timed->cold_first.e2e_s >= 0 ? timed->cold_first.e2e_s * 1e3 : -1;
  r.figures = compute_figures(c.job, *timed);
  r.fidelity = fidelity_summary(*timed);
  if (timed->peak_rss_bytes) r.peak_rss_mib = static_cast<double>(*timed->peak_rss_bytes) / (1024.0 * 1024.0);
  r.gpu_memory = timed->gpu_memory;
  collect_answers(*timed, r);

  auto timed_log = analyse_log(timed->log_path, ctx.signatures);
  if (timed_log) {
    CheapSignals ts = cheap_signals(timed_log->scan);
    r.timed_signals = signals_text(ts);
    r.signal_mismatches = compare_signals(ev->signals, ts);
    for (const auto& m : r.signal_mismatches) r.failures.push_back("timed run differs from the evidence pass: " + m);
    r.kv_mib_by_device = timed_log->scan.kv_mib_by_device();
    r.compute_mib_by_device = timed_log->scan.compute_mib_by_device();
    if (auto kv = timed_log->scan.kv_total()) r.kv_cache_mib = kv->mib;
  } else {
    r.failures.push_back("timed run log: " + timed_log.error().message);
  }
  if (!timed->errors.empty()) {
    for (const auto& e : timed->errors) r.failures.push_back("timed runs: " + e);
    r.failures.push_back("timed runs incomplete; log " + timed->log_path + " ends:\n" + log_tail(timed->log_path, 10));
    return finish(kRunIncomplete);
  }
  // Level 3 tie: the timed configuration, probed once, must run the evidence pass's attention kernels.
  if (probed_check_blocker(*ev).empty()) progress(o, c.name, "probed check: the timed configuration with the kernel probe");
  if (auto pc = run_probed_check(ctx, *ev)) {
    r.probed_check = probed_check_text(*pc);
    for (const auto& m : pc->mismatches) {
      r.signal_mismatches.push_back("probed check: " + m);
      r.failures.push_back("timed configuration differs from the evidence pass: " + m);
    }
    if (pc->ran) progress(o, c.name, std::string("probed check: ") + (pc->mismatches.empty() ? "same attention kernels" : "attention kernels DIFFER"));
  } else {
    r.probed_check = "failed: " + pc.error().message;
    r.failures.push_back("probed check failed: " + pc.error().message);
    return finish(kRunIncomplete);
  }
  r.complete = true;
  r.fingerprint = fpr.to_json();
  compare_goldens(o.golden_root, o.record_missing, r, o.golden_fingerprint, o.min_tolerance_rel);
  return finish(r.failures.empty() ? kRunPass : kRunFail);
}

}  // namespace fp
