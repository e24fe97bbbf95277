#include "flow/passes/evidence_pass.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "client/stream_client.h"
#include "evidence/device_timings.h"
#include "flow/passes/gpu_probe.h"
#include "flow/passes/instrument_retry.h"
#include "flow/passes/request_builder.h"
#include "util/text.h"
#include "util/utf8.h"
#include "util/regex.h"

namespace fp {

Result<LogAnalysis> analyse_log(const std::string& path, const RuntimeSignatures& sigs) {
  FP_TRY(std::string text, read_text_file(path));  // a runtime log: raw bytes made text (util/utf8.h)
  LogAnalysis a;
  a.records = split_records(text, sigs);
  a.scan = scan_log(a.records, sigs);
  a.placement = scan_placement(a.records, sigs);
  if (sigs.device_timings) a.device_timings = device_timing_tally(text, *sigs.device_timings, path);
  return a;
}

namespace {

// What the harness knows before reading the launch line and the log: the model's header and the expectation.
Facts model_facts_known(const CaseContext& ctx) {
  Facts f;
  f["expected_backend"] = ctx.c.expect.backend;
  if (!ctx.runtime_build.empty()) f["build"] = ctx.runtime_build;
  if (ctx.model) {
    f["head_size"] = std::to_string(ctx.model->head_size_k);
    f["head_size_v"] = std::to_string(ctx.model->head_size_v);
    f["layers"] = std::to_string(ctx.model->layers);
    if (ctx.model->gqa_ratio() > 0) f["gqa_ratio"] = std::to_string(ctx.model->gqa_ratio());
    if (ctx.model->file_type >= 0) f["weights"] = file_type_name(ctx.model->file_type);
  }
  return f;
}

}  // namespace

int job_load_streams(const CaseContext& ctx, const LaunchPlacement& at) {
  if (at.load_streams > 0) return at.load_streams;
  if (ctx.c.job == Job::Batch) return std::max<int>(1, static_cast<int>(ctx.prompts.size()));
  return 1;
}

std::string job_load_text(const CaseContext& ctx, const LaunchPlacement& at) {
  const int n = job_load_streams(ctx, at);
  if (n == 1) return "one request";
  return std::to_string(n) + " requests at once (" +
         (at.load_streams > 0 ? std::string("the sustained phase's concurrency") : std::string("the batch job's round")) + ")";
}

std::vector<StreamRequest> evidence_requests(const CaseContext& ctx, const LaunchPlacement& at, const std::string& base_url) {
  // Few tokens: the op placement and the kernels are decided by the shape, not by the answer's length.
  const int tokens = std::min(ctx.c.shape.max_output_tokens, 4);
  std::vector<StreamRequest> out;
  const int n = job_load_streams(ctx, at);
  for (int i = 0; i < n && !ctx.prompts.empty(); ++i)
    out.push_back(build_request(ctx, base_url, ctx.prompts[static_cast<size_t>(i) % ctx.prompts.size()], tokens,
                                ctx.c.plan.timeout_s));
  return out;
}

Result<LoadAnswers> send_job_load(const CaseContext& ctx, const LaunchPlacement& at, const std::string& base_url) {
  const std::vector<StreamRequest> reqs = evidence_requests(ctx, at, base_url);
  if (reqs.empty()) return make_error("the case has no prompts to send");
  std::vector<Result<StreamResult>> answers;
  if (reqs.size() == 1) answers.push_back(stream_request(reqs.front()));
  else answers = stream_concurrent(reqs, static_cast<int>(reqs.size()));
  LoadAnswers out;
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!answers[i]) {
      Error e = answers[i].error();  // its status too: a refusal is told from a breakage by it
      e.message = (answers.size() > 1 ? "request " + std::to_string(i + 1) + " of " + std::to_string(answers.size()) + ": " : "") + e.message;
      return e;
    }
    out.prompt_tokens += std::max(0, answers[i]->prompt_tokens);
    out.completion_tokens += std::max(0, answers[i]->completion_tokens);
    if (out.system_fingerprint.empty()) out.system_fingerprint = answers[i]->system_fingerprint;
  }
  return out;
}

VerdictInput case_verdict_input(const CaseContext& ctx, const EvidenceOutcome& out, bool gpu_case_probed) {
  VerdictInput in = verdict_input(ctx.signatures);
  in.log = out.log_source.empty() && ctx.c.attach ? nullptr : &out.log.scan;
  in.placement = in.log ? &out.log.placement : nullptr;
  in.kernels = out.kernels ? &*out.kernels : nullptr;
  in.expect_backend = ctx.c.expect.backend;
  in.gpu_backends = ctx.gpu_backends;
  in.required = ctx.c.expect.evidence.empty() ? default_evidence_levels(ctx.signatures, gpu_case_probed)
                                              : ctx.c.expect.evidence;
  if (ctx.model) {
    in.model_layers = ctx.model->layers;
    in.head_size = ctx.model->head_size_k;
    in.layers_from = ctx.model->source + " (" + ctx.model->architecture + ".block_count)";
  } else if (in.log) {
    in.head_size = head_size_from_log(out.log.records, ctx.signatures.causes);  // attach mode: the server's own print_info
  }
  return in;
}

void explain_causes(const CaseContext& ctx, EvidenceOutcome& out) {
  if (!ctx.c.expect.fused_attention || verdict_as_expected(out.verdict, true)) return;
  Facts known = model_facts_known(ctx);
  for (const auto& [k, v] : verdict_facts(out.verdict)) known[k] = v;
  out.facts = gather_facts(known, out.argv, out.log.records, ctx.signatures.causes);
  out.causes = match_causes(ctx.signatures.causes, out.facts, out.log.records);
  out.causes_line = causes_text(out.causes, out.facts);
}

namespace {

namespace fs = std::filesystem;

// One launch of the evidence pass with some instruments on.
struct EvidenceLaunch {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  FittedPrompts prompts;
  std::string load;
  LaunchEnd end;  // broke: the runtime broke under this launch (end.error says how)
};

// Runs the pass once with the instruments `on`; an error is a failure that is not the runtime
// breaking (the harness's, or the input's: the same in every launch).
Result<EvidenceLaunch> launch_evidence(const CaseContext& ctx, const LaunchPlacement& at, const std::vector<Instrument>& on,
                                       const std::string& log_path) {
  EvidenceLaunch l;
  const InstrumentedLaunch il = instrumented_launch(launch_env(ctx, at), ctx.adapter, on);
  l.env = il.env;
  FP_TRY(int port, free_loopback_port());
  l.argv = expand_argv(ctx.c, ctx.runtime, ctx.model_path, port, at.flag_value, il.extra_args);
  LaunchSpec spec{l.argv, l.env, log_path, port, ctx.c.plan.ready_timeout_s};
  StartFailure why;
  auto server = start_server(spec, ctx.adapter, &why);
  const InstrumentRules& words = ctx.signatures.instruments;
  if (!server) {
    // A port someone else holds is the machine's doing, the same in every launch (start_server
    // already tried other ports): not an instrument's.
    if (auto log = read_file(log_path); log && !ctx.adapter.port_in_use_regex.empty() &&
                                        regex_search(*log, Regex(ctx.adapter.port_in_use_regex)))
      return server.error();
    l.end = classify_launch_failure(LaunchPhase::Start, why.exit, why.not_ready, server.error().message,
                                    last_words_of_file(log_path, words));
    if (!l.end.broke) return server.error();
    return l;
  }
  l.argv = server->argv;
  auto fitted = fit_case_prompts(ctx, server->base_url);
  if (!fitted) {
    const ExitInfo e = ended_by_itself(server->process, 0.5);
    server->process.stop(5.0);
    l.end = classify_launch_failure(LaunchPhase::Prompts, e, false, fitted.error().message + "\nlog " + log_path + " ends:\n" + log_tail(log_path),
                                    last_words_of_file(log_path, words));
    if (!l.end.broke) return make_error("evidence pass: " + fitted.error().message);
    return l;
  }
  l.prompts = *fitted;
  // The load at the prompts' asked token length, as the timed runs and the probed check will send them.
  CaseContext fitted_ctx = ctx;
  adopt_fitted_prompts(fitted_ctx, l.prompts);
  l.load = job_load_text(fitted_ctx, at);
  auto answer = send_job_load(fitted_ctx, at, server->base_url);
  const ExitInfo e = answer ? ExitInfo{} : ended_by_itself(server->process);
  server->process.stop(5.0);
  // A runtime that answered "400 Bad Request" (a prompt longer than its context: "exceeds the available
  // context size") refused the input: the same answer with any instrument, so no launch without
  // them; its own words first.
  if (!answer && !e.exited && answer.error().status >= 400 && answer.error().status < 500)
    return make_error("the runtime refused the evidence requests (" + l.load + "): " + answer.error().message + "\nlog " + log_path +
                      " ends:\n" + log_tail(log_path));
  if (!answer)
    l.end = classify_launch_failure(LaunchPhase::Requests, e, false,
                                    "the request failed (" + l.load + "): " + answer.error().message + "\nlog " + log_path +
                                        " ends:\n" + log_tail(log_path),
                                    last_words_of_file(log_path, words));
  return l;
}

// A launch's files (evidence.log, the probe's kernels*.tsv) moved aside before the next launch
// writes its own, to <out_dir>/instrument-retry/launch-<k>/, and back.
bool is_launch_file(const std::string& name) {
  return name == "evidence.log" || (starts_with(name, "kernels.") && ends_with(name, ".tsv"));
}
std::string launch_aside_dir(const std::string& out_dir, int k) {
  return out_dir + "/instrument-retry/launch-" + std::to_string(k);
}
void move_launch_files(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::create_directories(to, ec);
  for (const auto& entry : fs::directory_iterator(from, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file(ec) && is_launch_file(name)) fs::rename(entry.path(), fs::path(to) / name, ec);
  }
}

// The facts known before the launch, for the known breakages: the model's header, the expectation,
// the build and the launch line.
Facts launch_facts(const CaseContext& ctx, const LaunchPlacement& at) {
  const std::vector<std::string> argv = expand_argv(ctx.c, ctx.runtime, ctx.model_path, 0, at.flag_value, {});
  Facts f = model_facts_known(ctx);
  for (const auto& [k, v] : facts_from_argv(argv, ctx.signatures.causes)) f.emplace(k, v);
  add_default_facts(ctx.signatures.causes, f);
  return f;
}

}  // namespace

Result<EvidenceOutcome> run_evidence_pass(const CaseContext& ctx, const LaunchPlacement& at) {
  auto t0 = std::chrono::steady_clock::now();
  EvidenceOutcome out;
  out.log_path = at.out_dir + "/evidence.log";
  out.probe = plan_gpu_probe(at.out_dir + "/kernels.tsv");  // one file per process, merged into this one
  // A backend the probe cannot see (Vulkan) that times its own ops: level 3 from those timings.
  const DeviceTimings* timings_wanted = ctx.signatures.device_timings &&
                                                timed_backend_expected(ctx.c.expect.backends, *ctx.signatures.device_timings)
                                            ? &*ctx.signatures.device_timings
                                            : nullptr;
  std::vector<Instrument> all = evidence_instruments(ctx.adapter, timings_wanted, out.probe);
  // An instrument known to break this configuration is never launched (runtime data, known_breakages).
  std::vector<std::string> known_off;
  for (const auto& f : match_known_breakages(ctx.signatures.instruments, launch_facts(ctx, at))) {
    const Instrument* i = find_instrument(all, f.instrument);
    if (!i || out.instruments_off.count(i->name)) continue;
    out.instruments_off[i->name] = i->label() + " left off (" + i->how() + " not launched): " + f.text();
    known_off.push_back(i->name);
  }
  std::vector<Instrument> on = instruments_without(all, known_off);

  FP_TRY(EvidenceLaunch first, launch_evidence(ctx, at, on, out.log_path));
  EvidenceLaunch kept = first;
  if (first.end.broke) {
    int current = 1;  // the launch whose files are in the run folder (1: the first)
    int success_no = 0;  // the last launch that completed: the one the verdict reads
    Status harness_error = ok_status();
    std::vector<std::string> order;
    for (const auto& i : on) order.push_back(i.name);
    auto relaunch = [&](const std::vector<std::string>& off) -> LaunchEnd {
      if (!harness_error) {  // the search goes on without launching: the pass ends with that error
        LaunchEnd stopped;
        stopped.broke = true;
        return stopped;
      }
      move_launch_files(at.out_dir, launch_aside_dir(at.out_dir, current));
      ++current;
      auto l = launch_evidence(ctx, at, instruments_without(on, off), out.log_path);
      if (!l) {  // not the runtime breaking: stop searching, report it as the pass's error
        if (harness_error) harness_error = l.error();
        LaunchEnd e;
        e.broke = true;
        e.verb = "could not be launched";
        e.detail = l.error().message;
        return e;
      }
      if (!l->end.broke) {
        success_no = current;
        kept = *l;
      }
      return l->end;
    };
    const InstrumentSearch search =
        search_breaking_instruments(order, first.end, relaunch, [](const std::string& n) { return instrument_label(n); });
    if (!harness_error) return harness_error.error();
    out.extra_launches = search.extra_launches;
    out.retry_steps = search.steps;
    if (search.crashed_alone) {
      const LaunchEnd& e = search.alone;
      const std::string how = search.extra_launches == 0
                                  ? "flashproof added no instrument to this launch"
                                  : std::to_string(search.extra_launches) + " extra launch" + (search.extra_launches == 1 ? "" : "es") +
                                        " took flashproof's instruments off one at a time: " + join(search.steps, "; ") +
                                        "; the first launch's files are in " + launch_aside_dir(at.out_dir, 1);
      // The first launch's end too, when it differs: the retry never hides the first failure.
      const std::string first_end = first.end.words == e.words && first.end.verb == e.verb
                                        ? std::string()
                                        : "; with every instrument on it " + first.end.how() +
                                              (first.end.words.empty() ? "" : ": " + first.end.words);
      return make_error(std::string("the runtime ") + (e.verb == "aborts" || e.verb == "crashes" ? "crashed" : "failed") +
                        " with no instrument on: it " + e.how() + (e.words.empty() ? "" : ": " + e.words) + " (" + how +
                        first_end + ")\n" + e.error);
    }
    for (const auto& name : search.off) {
      const Instrument* i = find_instrument(on, name);
      auto it = search.broke_with.find(name);
      if (!i || it == search.broke_with.end()) continue;
      out.instruments_off[name] = instrument_off_text(i->label(), i->how(), it->second);
    }
    if (success_no != 0 && success_no != current) {  // the kept launch's files back where the run's belong
      move_launch_files(at.out_dir, launch_aside_dir(at.out_dir, current));
      move_launch_files(launch_aside_dir(at.out_dir, success_no), at.out_dir);
    }
    on = instruments_without(on, search.off);
  }
  out.instruments_on = on;
  out.argv = kept.argv;
  out.env = kept.env;
  out.prompts = kept.prompts;
  out.load = kept.load;

  FP_TRY(out.log, analyse_log(out.log_path, ctx.signatures));
  const bool probed = find_instrument(on, "kernel_probe") != nullptr;
  const DeviceTimings* timings = find_instrument(on, "device_timings") ? timings_wanted : nullptr;
  const GpuProbePlan& probe = out.probe;
  std::string no_tally_why;
  if (probed) {
    auto tally = read_probe_tallies(probe);
    if (tally) out.kernels = classify_kernels(*tally, ctx.signatures);
    else no_tally_why = "the probe's tally is missing or unreadable (a missing file: the probe was not loaded, "
                        "CUDA_INJECTION64_PATH wrong or the runtime never initialised CUDA): " + tally.error().message;
  }
  std::string timings_why;
  if (timings && out.log.device_timings) {
    const KernelTally& t = *out.log.device_timings;
    if (t.kernels.empty()) timings_why = t.reason;
    else out.kernels = classify_kernels(t, ctx.signatures);
  }
  // Level 3 is a default requirement of a case that runs on the GPU (a GPU backend, or an attention
  // backend: vLLM) where the probe is attached, and of a case on a timed backend that printed its
  // timings; a CPU case on a GPU machine needs no kernels.
  const bool gpu_case = gpus_needed(ctx.c, ctx.signatures, ctx.gpu_box ? ctx.gpu_box->gpus : 1) > 0 ||
                        ctx.signatures.names_attention_backends();
  VerdictInput in = case_verdict_input(ctx, out, (probed && gpu_case) || (timings && out.kernels));
  if (timings) in.gpu_backend_pattern = timings->backend.pattern;
  // A level whose instrument was taken off is unavailable, with why; the default requirement drops
  // it (the verdict stands on the rest), a case's own expect.evidence keeps it (and fails, saying so).
  for (const auto& i : all) {
    auto off = out.instruments_off.find(i.name);
    if (off == out.instruments_off.end()) continue;
    for (const auto& level : i.levels) {
      in.taken_off.emplace(level, off->second);
      if (ctx.c.expect.evidence.empty()) in.required.erase(std::remove(in.required.begin(), in.required.end(), level), in.required.end());
    }
  }
  // A GPU box may not lose level 3: no probe, a probe not loaded or refused by CUPTI is no evidence.
  if (ctx.gpu_box && gpu_case && std::find(in.required.begin(), in.required.end(), "kernels") == in.required.end())
    in.required.push_back("kernels");
  if (!probed && !probe.attached) in.hints["kernels"] = probe.why_not;
  if (!no_tally_why.empty()) in.hints["kernels"] = no_tally_why;
  if (!timings_why.empty()) in.hints["kernels"] = timings_why;
  out.verdict = decide(in);
  explain_causes(ctx, out);
  out.signals = cheap_signals(out.log.scan);
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace fp
