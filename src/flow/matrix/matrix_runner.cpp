#include "flow/matrix/matrix_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>

#include "evidence/causes.h"
#include "evidence/kernel_set.h"
#include "flow/passes/case_context.h"
#include "flow/passes/evidence_pass.h"
#include "flow/passes/figures.h"
#include "flow/passes/progress.h"
#include "flow/passes/timed_pass.h"
#include "measure/stats.h"
#include "model/model_recipe.h"
#include "runtime/kv_cache_types.h"
#include "runtime/launch_line.h"
#include "runtime/process.h"
#include "util/run_folder.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

// A model the rows launch: the case's own, or one generated with another head size.
struct MatrixModel {
  std::string path;          // absolute
  std::string shown_path;    // as the row reports it
  std::string sha256;
  std::optional<ModelFacts> facts;
};

std::string join_numbers(const std::vector<int>& v) {
  std::vector<std::string> s;
  for (int x : v) s.push_back(std::to_string(x));
  return join(s, ", ");
}

// The first line of an error message (launch errors carry the log's tail after it).
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// The case's models with the asked head sizes, generated from its recipe (same seed, otherwise the
// same shape), or the case's own model.
Result<std::vector<MatrixModel>> matrix_models(const CaseContext& ctx, const MatrixOptions& o, std::string* recipe_used) {
  if (o.head_sizes.empty())
    return std::vector<MatrixModel>{{ctx.model_path, ctx.c.model.path, ctx.c.model.sha256, ctx.model}};
  if (ctx.c.model.recipe.empty())
    return make_error(ctx.c.file + ": field \"model.recipe\" is empty: --head-sizes generates models from the recipe of the case's "
                                   "model (fixtures/models/*.json); name it there");
  *recipe_used = ctx.c.model.recipe;
  FP_TRY(ModelRecipe recipe, load_model_recipe((fs::path(o.suite.root) / ctx.c.model.recipe).string()));
  std::vector<MatrixModel> out;
  for (int head : o.head_sizes) {
    FP_TRY(ModelRecipe variant, recipe_with_head_size(recipe, static_cast<uint32_t>(head)));
    const fs::path path = o.models_dir.empty() ? fs::path(o.suite.root) / variant.output : fs::path(o.models_dir) / (variant.name + ".gguf");
    FP_TRY(std::string sha, write_recipe_model(variant, path.string()));
    MatrixModel m{path.string(), path.string(), sha, std::nullopt};
    auto facts = read_model_facts(m.path);
    if (!facts) return make_error("generated model " + m.path + ": " + facts.error().message);
    m.facts = *facts;
    out.push_back(std::move(m));
  }
  return out;
}

// The one prompt of a row: the document, cut to at most a third of the context in characters (the
// generated models' vocabulary spends about one token per character, the case's prompt and the chat
// template come on top), before the case's first prompt.
Result<Prompt> matrix_prompt(const CaseContext& ctx, const MatrixOptions& o, const std::string& document, int context) {
  const size_t chars = static_cast<size_t>(std::max(0, std::min(o.prompt_chars, context / 3)));
  std::optional<LongPrompt> lp;
  if (chars > 0) lp = LongPrompt{document, chars};
  FP_TRY(std::vector<Prompt> prompts, load_prompt_set(o.suite, ctx.c.shape.prompt_set, lp));
  return prompts.front();
}

// kDefaultMatrixDocument in the first of the suite's prompt folders that holds it, as a path in the
// suite when it is one (fixtures/prompts/documents/... here), else absolute (flashproof's own).
std::string default_document(const Suite& suite) {
  const std::vector<std::string> dirs = suite.prompt_dirs();
  for (const std::string& d : dirs) {
    const fs::path doc = fs::path(d) / kDefaultMatrixDocument;
    std::error_code ec;
    if (!fs::is_regular_file(doc, ec)) continue;
    const fs::path rel = doc.lexically_relative(suite.root);
    return !rel.empty() && *rel.begin() != ".." ? rel.string() : doc.string();
  }
  return (fs::path(dirs.front()) / kDefaultMatrixDocument).string();  // not there: the error names the suite's
}

std::string row_folder(size_t index, const MatrixRow& r) {
  std::string kv = r.kv_label();
  std::replace(kv.begin(), kv.end(), '/', '-');
  return (index + 1 < 10 ? "0" : "") + std::to_string(index + 1) + "-" + kv + "-" + (r.flag_on ? "on" : "off") + "-c" +
         std::to_string(r.context) + "-hd" + std::to_string(r.head_size);
}

void fill_evidence(MatrixRow& row, const EvidenceOutcome& ev) {
  const Verdict& v = ev.verdict;
  row.verdict = to_string(v.activity);
  row.verdict_as_flag = verdict_as_expected(v, row.flag_on);
  row.silent_fallback = v.silent_fallback;
  row.degraded = v.degraded;
  row.disagreement = v.disagreement;
  for (int l : v.levels_used) row.levels_used.push_back(v.levels[static_cast<size_t>(l - 1)].name);
  const Placement& p = ev.log.placement;
  row.fused_op = p.fused_op;
  row.unfused_op = p.unfused_op;
  row.fused_nodes = p.fused_nodes;
  row.unfused_nodes = p.unfused_nodes;
  row.graph_splits = ev.signals.graph_splits;
  if (ev.kernels) {
    row.kernels_probed = true;
    for (const auto& n : ev.kernels->top_fused) row.fused_kernels.push_back(kernel_display_name(n));
    for (const auto& n : ev.kernels->top_unfused) row.unfused_kernels.push_back(kernel_display_name(n));
    row.fused_kernel_names = ev.kernels->fused_names.size();
    row.unfused_kernel_names = ev.kernels->unfused_names.size();
    if (row.fused_kernels.empty() && row.unfused_kernels.empty())
      row.kernels_note = "no attention kernel among " + std::to_string(ev.kernels->records);
  } else {
    row.kernels_note = ev.probe.attached ? "the probe's tally could not be read" : "not probed: " + ev.probe.why_not;
  }
  row.cause = ev.causes_line;
  if (v.activity == Activity::NoEvidence) {
    row.outcome = RowOutcome::Failed;
    row.detail = "no evidence: " + v.explanation;
  } else if (v.disagreement && (v.measured_disagreement || !v.silent_fallback)) {
    // A silent fallback (the log's word against placement and kernels that agree) is a finding of
    // the matrix, not a failure; measured levels that contradict each other are.
    row.outcome = RowOutcome::Failed;
    row.detail = "the evidence levels disagree: " + v.disagreement_detail;
  } else {
    row.outcome = RowOutcome::Ran;
  }
}

// The runtime's own prompt tokens/s and flashproof's (prompt tokens over time to first token),
// medians over the measured requests.
void fill_speed(MatrixRow& row, const CaseContext& ctx, const TimedPass& pass) {
  std::vector<double> server;
  for (const auto& tr : pass.requests) {
    const ServerTimings& t = tr.result.server;
    if (!std::isnan(t.prompt_per_second)) server.push_back(t.prompt_per_second);
    if (std::isfinite(t.prompt_tokens))
      row.prompt_tokens = static_cast<int>(t.prompt_tokens);
    else if (tr.result.prompt_tokens > 0) row.prompt_tokens = tr.result.prompt_tokens;
  }
  std::vector<double> decode;
  for (const auto& tr : pass.requests) {
    const ServerTimings& t = tr.result.server;
    if (!std::isnan(t.decode_per_second) && t.decode_tokens > 1) {
      decode.push_back(t.decode_per_second);
      row.decode_tokens = static_cast<int>(t.decode_tokens);
    }
  }
  row.speed_rounds = static_cast<int>(pass.requests.size());
  if (!server.empty()) row.server_prompt_tps = median(server);
  if (!decode.empty()) row.server_decode_tps = median(decode);
  for (const auto& f : compute_figures(ctx.c.job, pass)) {
    if (f.name == "prompt_tokens_per_s") row.client_prompt_tps = f.summary.median;
    if (f.name == "ttft_ms") row.ttft_ms = f.summary.median;
  }
  if (server.empty()) row.speed_note = "the runtime reported no timings.prompt_per_second";
}

// One combination: the evidence pass, then (when it launched) the prompt-speed launch. Says which
// launch an interrupt cut, if any (the evidence pass's verdict stands when only the speed launch was).
RowCut run_row(MatrixRow& row, const CaseContext& ctx, const LaunchPlacement& at, int rounds) {
  auto ev = run_evidence_pass(ctx, at);
  if (interrupted()) return RowCut::evidence;  // the runtime may have been stopped under the evidence pass
  if (!ev) {
    // The runtime would not start: a refusal when its log says why in a line the data marks fatal.
    if (auto log = analyse_log(at.out_dir + "/evidence.log", ctx.signatures); log && !log->scan.fatal.empty()) {
      row.outcome = RowOutcome::Refused;
      row.detail = log->scan.fatal.front().text;
    } else {
      row.outcome = RowOutcome::Failed;
      const std::string why = first_line(ev.error().message);
      row.detail = starts_with(why, "evidence pass") ? why : "evidence pass: " + why;
    }
    return RowCut::none;
  }
  fill_evidence(row, *ev);
  if (row.flag_auto && row.outcome == RowOutcome::Ran) row.verdict_as_flag = true;  // auto: whatever the runtime chose
  const LogScan& scan = ev->log.scan;
  if (auto kv = scan.kv_total()) row.kv_mib = kv->mib;
  const auto compute = scan.compute_mib_by_device();
  if (!compute.empty()) {
    row.compute_mib = 0;
    for (const auto& [device, mib] : compute) row.compute_mib += mib;
  }
  if (interrupted()) return RowCut::speed;
  TimedOptions t;
  t.warmup = 0;  // the timed pass's cold first request is the warm-up
  t.repetitions = rounds;
  auto pass = run_timed_pass(ctx, at, t);
  if (interrupted()) return RowCut::speed;
  if (!pass) {
    row.outcome = RowOutcome::Failed;
    row.speed_note = "not measured: " + first_line(pass.error().message);
    row.detail = "prompt-speed launch: " + first_line(pass.error().message);
    return RowCut::none;
  }
  fill_speed(row, ctx, *pass);
  if (!pass->errors.empty()) {
    row.outcome = RowOutcome::Failed;
    row.speed_note = "not measured: " + first_line(pass->errors.front());
    row.detail = "prompt-speed launch: " + first_line(pass->errors.front());
  }
  return RowCut::none;
}

std::string row_label(const MatrixRow& r) {
  return r.kv_label() + " flag " + r.flag_value + " context " + std::to_string(r.context) + " head " + std::to_string(r.head_size);
}

}  // namespace

void settle_interrupted_row(MatrixRow& row, RowCut cut) {
  if (cut == RowCut::none) return;
  if (cut == RowCut::evidence) {  // the runtime was stopped under the row: what it shows is not the combination's
    row.outcome = RowOutcome::NotRun;
    row.detail = "interrupted while it ran";
    return;
  }
  // The evidence pass finished and decided: its verdict and memory stand; only the speed launch was cut.
  row.speed_rounds = 0;
  row.prompt_tokens = row.decode_tokens = -1;
  row.server_prompt_tps = row.client_prompt_tps = row.server_vs_off = row.client_vs_off = NAN;
  row.ttft_ms = row.server_decode_tps = NAN;
  row.speed_note = "not measured: interrupted during the prompt-speed launch (the evidence pass had finished)";
}

void compare_with_flag_off(std::vector<MatrixRow>& rows) {
  for (auto& on : rows) {
    if (!on.flag_on) continue;  // on and auto rows, each against the off row
    on.server_vs_off = on.client_vs_off = NAN;
    for (const auto& off : rows) {
      if (off.flag_on || off.kv_k != on.kv_k || off.kv_v != on.kv_v || off.context != on.context || off.head_size != on.head_size ||
          off.model_sha256 != on.model_sha256)
        continue;
      if (std::isfinite(on.server_prompt_tps) && off.server_prompt_tps > 0) on.server_vs_off = on.server_prompt_tps / off.server_prompt_tps;
      if (std::isfinite(on.client_prompt_tps) && off.client_prompt_tps > 0) on.client_vs_off = on.client_prompt_tps / off.client_prompt_tps;
    }
  }
}

int matrix_exit_code(const MatrixRun& m) {
  if (!m.errors.empty()) return kMatrixIncomplete;
  for (const auto& r : m.rows)
    if (!r.as_expected()) return kMatrixRowFailed;
  return kMatrixAsExpected;
}

MatrixOutcome run_matrix(const std::string& case_path, const MatrixOptions& opts_in) {
  MatrixOptions o = opts_in;
  if (o.results_root.empty()) o.results_root = o.suite.results;
  MatrixOutcome out;
  auto fail_early = [&](int code, const std::string& msg) {
    out.exit_code = code;
    out.message = msg;
    return out;
  };
  auto resolved = judge_missing_model(resolve_case_context(case_path, o.suite), o.suite.golden);
  if (!resolved) return fail_early(resolved.exit_code(), resolved.error().message);
  const CaseContext base = *resolved;
  const Case& c = base.c;

  std::vector<std::optional<KvPair>> kv_pairs = {std::nullopt};
  std::optional<KvCacheTypes> kv_types;
  if (!o.kv.empty()) {
    auto types = load_kv_cache_types(c.runtime);
    if (!types) return fail_early(kMatrixUsage, "--kv: runtime " + quote(c.runtime) + ": " + types.error().message);
    kv_types = *types;
    auto pairs = parse_kv_pairs(o.kv, *kv_types);
    if (!pairs) return fail_early(kMatrixUsage, pairs.error().message);
    kv_pairs.assign(pairs->begin(), pairs->end());
  }
  if (!o.contexts.empty() && std::find(c.launch.argv.begin(), c.launch.argv.end(), "{context}") == c.launch.argv.end())
    return fail_early(kMatrixUsage, c.file + ": field \"launch.argv\" has no {context} placeholder, so --context cannot change "
                                    "the context; add it (e.g. \"-c\", \"{context}\")");
  const std::vector<int> contexts = o.contexts.empty() ? std::vector<int>{c.shape.context} : o.contexts;

  MatrixRun& m = out.run;
  m.case_name = c.name;
  m.case_file = c.file;
  m.runtime = c.runtime;
  m.flashproof_version = FLASHPROOF_VERSION;
  m.started_utc = utc_stamp("%Y-%m-%dT%H:%M:%SZ");
  m.expect_backend = c.expect.backend;
  m.prompt_document = !o.prompt_document.empty() ? o.prompt_document : c.shape.long_prompt ? c.shape.long_prompt->document : default_document(o.suite);
  m.prompt_chars = o.prompt_chars;
  m.rounds = o.rounds;
  m.max_tokens = o.max_tokens;
  std::vector<std::string> kv_words, flag_words;
  for (const auto& p : kv_pairs) kv_words.push_back(p ? p->label() : "the case's");
  for (const std::string& f : o.flags) flag_words.push_back(f);
  std::string flag_auto_value;  // the runtime's default value of the flag (its data's launch_line.flag.default)
  if (std::count(o.flags.begin(), o.flags.end(), "auto")) {
    auto rules = load_launch_line(c.runtime);
    if (!rules || rules->flag_default.empty())
      return fail_early(kMatrixUsage, "--flag auto: runtime " + quote(c.runtime) + " has no default value for the flag in its data (\"flag\": "
                                      "{\"default\": ...}); use on and off");
    flag_auto_value = rules->flag_default;
  }
  m.axes = {"kv: " + join(kv_words, ", "), "flag: " + join(flag_words, ", "), "context: " + join_numbers(contexts),
            "head size: " + (o.head_sizes.empty() ? std::string("the case's model") : join_numbers(o.head_sizes))};

  auto models = matrix_models(base, o, &m.model_recipe);
  if (!models) return fail_early(kMatrixIncomplete, models.error().message);
  auto fingerprint = case_fingerprint(c, base.adapter, base.runtime, c.model.sha256);
  if (!fingerprint) return fail_early(kMatrixIncomplete, fingerprint.error().message);
  m.runtime_version = fingerprint->runtime_version;
  m.runtime_build = fingerprint->runtime_build;
  m.fingerprint_id = fingerprint->id();
  const std::string dir = o.out_dir.empty() ? unused_folder_name(o.results_root + "/" + m.fingerprint_id + "/" + c.name + "/matrix-" +
                                                                     utc_stamp("%Y%m%dT%H%M%SZ") + "-" + std::to_string(getpid()))
                                            : o.out_dir;
  // This matrix's alone until its report is written (util/run_folder.h).
  auto claim = claim_run_folder(dir, o.out_dir.empty() ? "" : "--out");
  if (!claim) return fail_early(kMatrixIncomplete, claim.error().message);
  m.output_dir = dir;
  std::error_code ec;

  // Every row, planned before any runs, so the table always has every row: the case as the row
  // varies it, and where and with which flag value it launches.
  std::vector<CaseContext> row_contexts;
  std::vector<LaunchPlacement> row_places;
  for (const auto& model : *models)
    for (int context : contexts) {
      auto prompt = matrix_prompt(base, o, m.prompt_document, context);
      if (!prompt) return fail_early(kMatrixIncomplete, "the matrix prompt: " + prompt.error().message);
      for (const auto& kv : kv_pairs)
        for (const std::string& flag : o.flags) {
          const bool flag_on = flag != "off", flag_auto = flag == "auto";
          CaseContext ctx = base;
          ctx.c.shape.context = context;
          ctx.c.shape.max_output_tokens = o.max_tokens;
          ctx.c.expect.fused_attention = flag_on;  // auto: a fallback's cause is looked up as for on
          LaunchPlacement place;
          place.flag_value = flag_auto ? flag_auto_value : flag_on ? c.flag.on : c.flag.off;
          if (kv) ctx.c.launch.argv = with_kv_pair(ctx.c.launch.argv, *kv_types, *kv);
          ctx.model_path = model.path;
          ctx.c.model.sha256 = model.sha256;
          ctx.model = model.facts;
          ctx.prompts = {*prompt};
          ctx.runtime_build = m.runtime_build;
          MatrixRow row;
          row.kv = kv ? kv->label() : "";
          Facts kv_facts = facts_from_argv(ctx.c.launch.argv, ctx.signatures.causes);
          add_default_facts(ctx.signatures.causes, kv_facts);
          row.kv_k = kv ? kv->k : kv_facts["cache_type_k"];
          row.kv_v = kv ? kv->v : kv_facts["cache_type_v"];
          row.flag_on = flag_on;
          row.flag_auto = flag_auto;
          row.flag_value = place.flag_value;
          row.context = context;
          row.head_size = model.facts ? model.facts->head_size_k : 0;
          row.model_path = model.shown_path;
          row.model_sha256 = model.sha256;
          row.dir = dir + "/" + row_folder(m.rows.size(), row);
          place.out_dir = row.dir;
          m.rows.push_back(row);
          row_contexts.push_back(std::move(ctx));
          row_places.push_back(std::move(place));
        }
    }

  Progress progress(detect_progress_style(o.quiet), std::cerr);
  ScopedProgress progress_scope(&progress);
  const std::string who = "matrix " + c.name;
  for (size_t i = 0; i < m.rows.size(); ++i) {
    MatrixRow& row = m.rows[i];
    if (interrupted()) break;
    const std::string at = "[" + std::to_string(i + 1) + "/" + std::to_string(m.rows.size()) + "] " + row_label(row);
    progress.phase(who, at + ": evidence pass, then prompt speed");
    fs::create_directories(row.dir, ec);
    if (ec) {
      m.errors.push_back(row.dir + ": cannot create the row's folder: " + ec.message());
      break;
    }
    settle_interrupted_row(row, run_row(row, row_contexts[i], row_places[i], o.rounds));
    compare_with_flag_off(m.rows);
    progress.phase(who, at + ": " + to_string(row.outcome) + (row.verdict.empty() ? "" : ", " + row.verdict));
    m.finished_utc = utc_stamp("%Y-%m-%dT%H:%M:%SZ");
    m.exit_code = matrix_exit_code(m);
    if (auto st = write_matrix_files(dir, m); !st) {  // after every row: a matrix cut short keeps what ran
      m.errors.push_back(st.error().message);
      break;
    }
  }
  progress.finish();
  if (interrupted()) m.errors.push_back("interrupted (signal " + std::to_string(interrupt_signal()) + "): the rows not run say so");
  m.finished_utc = utc_stamp("%Y-%m-%dT%H:%M:%SZ");
  m.exit_code = matrix_exit_code(m);
  if (auto st = write_matrix_files(dir, m); !st) {
    m.errors.push_back(st.error().message);
    m.exit_code = kMatrixIncomplete;
  }
  out.exit_code = m.exit_code;
  return out;
}

}  // namespace fp
