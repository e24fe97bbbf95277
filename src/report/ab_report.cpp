#include "report/ab_report.h"

#include <cmath>
#include <cstdio>

#include "report/answer_difference_text.h"
#include "report/degradation_text.h"
#include "report/headroom_text.h"
#include "report/server_gauges_text.h"
#include "util/format_number.h"
#include "util/text.h"
#include "util/utf8.h"

namespace fp {

const char* to_string(AbEffect e) {
  switch (e) {
    case AbEffect::within_noise: return "within noise";
    case AbEffect::better_with_flag_on: return "better with the flag on";
    case AbEffect::worse_with_flag_on: return "worse with the flag on";
  }
  return "within noise";
}

const char* to_string(MechanismVerdict v) {
  switch (v) {
    case MechanismVerdict::confirmed: return "confirmed";
    case MechanismVerdict::not_shown: return "not shown";
    case MechanismVerdict::smaller_than_stated: return "smaller than stated";
    case MechanismVerdict::contradicted: return "contradicted";
    case MechanismVerdict::not_measured: return "not measured";
  }
  return "not measured";
}

const char* to_string(AbGateOutcome o) {
  switch (o) {
    case AbGateOutcome::pass: return "pass";
    case AbGateOutcome::fail: return "fail";
    case AbGateOutcome::undecided: return "undecided";
  }
  return "undecided";
}

namespace {

std::string pval(double p) {
  if (!std::isfinite(p)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", p);
  return buf;
}

std::string pad(const std::string& s, size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }

const FigureResult* arm_figure(const AbArm& a, const std::string& name) {
  for (const auto& f : a.figures)
    if (f.name == name) return &f;
  return nullptr;
}

std::string interval(const AbResult& c) {
  return "[" + table_figure(c.ci.low) + ", " + table_figure(c.ci.high) + "]";
}

std::string too_few_words(const AbResult& c) {
  if (!c.too_few_repetitions) return "";
  return c.repetitions_needed ? "too few: ~" + std::to_string(*c.repetitions_needed) + " per arm needed" : "too few";
}

// One comparison line: "ttft_ms_p95   off 12.3 (n 25)  on 10.1 (n 25)  on-off -2.2 (-17.9%) 95% CI [..]  p 0.001  better with the flag on"
std::string compare_line(const AbFigure& f, const AbRun& r) {
  const FigureResult* a = arm_figure(r.off, f.name);
  const FigureResult* b = arm_figure(r.on, f.name);
  std::string s = pad(f.name, 34) + "off " + pad(table_figure(a ? a->summary.median : NAN), 10) + "on " +
                  pad(table_figure(b ? b->summary.median : NAN), 10) + "on-off " +
                  pad(table_figure(f.cmp.diff) + " (" + pct(f.cmp.diff_rel) + ")", 22) + "95% CI " + pad(interval(f.cmp), 24) + "p " +
                  pad(pval(f.cmp.mwu.p), 9) + "n " + pad(std::to_string(f.cmp.n_a) + "/" + std::to_string(f.cmp.n_b), 9) +
                  to_string(f.effect);
  std::string few = too_few_words(f.cmp);
  if (!few.empty()) s += "; " + few;
  return s;
}

void arm_summary(std::string& out, const AbArm& a) {
  out += "  arm " + a.name + " (flag value " + quote(a.flag_value) + "), " + std::to_string(a.launches) + " launches:\n";
  out += "    " + pad("figure", 34) + pad("n", 6) + pad("p50", 11) + pad("p95", 11) + pad("p99", 11) + "\n";
  for (const auto& f : a.figures)
    out += "    " + pad(f.name, 34) + pad(std::to_string(f.summary.n), 6) + pad(table_figure(f.summary.median), 11) +
           pad(table_figure(f.summary.p95), 11) + pad(table_figure(f.summary.p99), 11) + "\n";
}

}  // namespace

std::string ab_to_text(const AbRun& r) {
  std::string out = "# flashproof A/B: " + r.case_name + " (job " + r.job + ")\n";
  out += "case: " + r.case_file + "\n";
  if (!r.description.empty()) out += "description: " + r.description + "\n";
  const bool build_said = r.runtime_version.find(r.runtime_build) != std::string::npos;
  out += "runtime: " + r.runtime + " " + r.runtime_version + (build_said ? "" : " (build " + r.runtime_build + ")") +
         ", fingerprint " + r.fingerprint_id + "\n";
  out += "model: " + r.model_path + " sha256 " + r.model_sha256 + "\n";
  out += "plan: blocks of one fresh launch per arm, in pairs AB BA or BA AB at random (" + join(r.order, ", ") + "); " +
         std::to_string(r.warmup) + " warm-up and " + std::to_string(r.rounds) + " measured rounds per launch; sustained " +
         table_figure(r.sustained_s) + " s at concurrency " + std::to_string(r.concurrency) + " per arm\n";
  out += "A = flag off (" + r.off.flag_value + "), B = flag on (" + r.on.flag_value + "); the gates are paired per block and "
         "prompt (log-ratio, t interval over blocks, Holm); the figure table pools each arm's launches (medians, 95% "
         "bootstrap CI, two-sided Mann-Whitney U)\n";
  out += "blocks: " + std::to_string(r.blocks) + (r.stopped.empty() ? "" : " (" + r.stopped + ")") + "\n";
  for (const auto& l : r.launches) out += l + "\n";
  out += "\n";

  out += "## Decision\n" + r.decision + "\n";
  for (const auto& g : r.gates) out += "  gate " + pad(g.figure, 20) + pad(to_string(g.outcome), 10) + g.detail + "\n";
  for (const auto& f : r.failures) out += "  failure: " + f + "\n";
  for (const auto& f : r.findings) out += "  finding: " + f + "\n";

  out += "\n## Evidence (one verbose pass per arm)\n";
  for (const AbArm* a : {&r.on, &r.off}) {
    out +=
        "  arm " + pad(a->name, 4) + pad("(" + a->flag_value + "):", 8) + to_string(a->verdict) + (a->degraded ? ", degraded" : "") +
        (a->verdict_backend.empty() ? "" : " (" + a->verdict_backend + ")") +
        (a->levels_used.empty() ? "" : " [" + join(a->levels_used, "+") + "]") + ", " +
        (a->verdict_as_required ? "as required" : std::string("NOT as required: must be ") + (a->name == "on" ? "active" : "not active")) +
        "; " + a->evidence_signals + "\n";
    out += "    timed launches tied to it: " + (a->signal_mismatches.empty() ? std::string("yes (same signals)") : join(a->signal_mismatches, "; ")) + "\n";
    out += "    probed check (timed configuration + kernel probe): " + a->probed_check + "\n";
    if (a->degraded) out += "    " + degradation_text(*a->degraded) + "\n";
  }

  out += "\n## Headlines (figures that decide, were stated, or differ unpredicted)\n";
  bool any = false;
  for (const auto& f : r.figures)
    if (f.headline) out += "  " + compare_line(f, r) + "\n", any = true;
  if (!any) out += "  none\n";

  out += "\n## Same system? (answers compared prompt by prompt)\n  " + r.same_system + "\n";
  for (const AbArm* a : {&r.on, &r.off})
    if (!a->unstable_answers.empty())
      out += "  arm " + a->name + " answered differently across its own repetitions: " + join(a->unstable_answers, ", ") + "\n";
  for (const auto& a : r.answers) {
    out += "  " + pad(a.prompt_id, 24) + (a.identical ? "identical" : "differs") + "\n";
    if (a.identical) continue;
    out += "    first differing token: " + first_token_text(a.difference) + "\n";
    out += "    " + answer_difference_text(a.difference) + "\n";
  }
  for (const AbArm* a : {&r.off, &r.on}) out += "  answers pass, flag " + a->name + ": " + a->answers_pass + "\n";

  out += "\n## Mechanism stated in the case\n";
  if (r.mechanism.empty()) out += "  none stated (add \"ab\": {\"mechanism\": [...]} to the case)\n";
  for (const auto& m : r.mechanism) {
    std::string claim = m.figure + " " + to_string(m.expect);
    if (m.expect == MechanismExpect::unchanged)
      claim += " (+-" + pct(m.tolerance).substr(1) + ")";
    else if (m.at_least > 0) claim += " by at least " + pct(m.at_least).substr(1);
    out += "  " + pad(claim, 50) + pad(to_string(m.outcome), 22) + m.detail + "\n";
  }
  out += "\n## Differences nobody predicted\n";
  if (r.unpredicted.empty()) out += "  none\n";
  for (const auto& u : r.unpredicted) out += "  " + u + "\n";

  out += "\n## Every figure compared (not headlines unless listed above)\n";
  for (const auto& f : r.figures)
    if (!f.headline) out += "  " + compare_line(f, r) + "\n";

  out += "\n## Each arm\n";
  arm_summary(out, r.off);
  arm_summary(out, r.on);

  out += "\n## Sustained phase\n";
  for (const AbArm* a : {&r.off, &r.on}) {
    if (!a->sustained_ran) {
      out += "  arm " + a->name + ": not run\n";
      continue;
    }
    out += "  arm " + a->name + ": " + std::to_string(a->sustained_requests) + " requests in " + table_figure(a->sustained_wall_s) +
           " s at concurrency " + std::to_string(a->sustained_concurrency) + "\n";
    if (!a->sustained_stop.empty()) {
      out += "    server stopped answering: " + a->sustained_stop + "\n";
      out += "    its log then (last lines): " + (a->sustained_stop_log.empty() ? std::string("empty") : "") + "\n";
      for (const auto& l : a->sustained_stop_log) out += "      | " + l + "\n";
    }
    for (const auto& d : a->drift_lines) out += "    drift " + d + "\n";
    if (a->drift_lines.empty()) out += "    drift: not measured, fewer than 16 requests (a longer --sustained-s)\n";
    if (a->sustained_gauges)
      for (const auto& l : server_gauges_lines(*a->sustained_gauges, "sustained phase")) out += "    " + l + "\n";
  }

  out += "\n## Memory (last launch of each arm)\n";
  for (const AbArm* a : {&r.off, &r.on}) {
    for (const auto& [d, v] : a->kv_mib_by_device) out += "  arm " + a->name + " kv_buffer_mib." + d + " = " + table_figure(v) + "\n";
    for (const auto& [d, v] : a->compute_mib_by_device) out += "  arm " + a->name + " compute_buffer_mib." + d + " = " + table_figure(v) + "\n";
    out += "  arm " + a->name + " gpu = " + a->gpu_memory + "\n";
    for (const auto& [k, v] : headroom_lines(a->headroom, a->headroom_why_not)) out += "  arm " + a->name + " " + k + " = " + v + "\n";
  }
  for (const auto& l : flag_memory_change(r.off.headroom, r.on.headroom)) out += "  " + l + "\n";

  out += "\n## Launch commands ({port} is a free loopback port per launch)\n";
  for (const AbArm* a : {&r.off, &r.on}) {
    out += "  arm " + a->name + " timed:    " + quote_args(a->timed_argv) + "\n";
    out += "  arm " + a->name + " evidence: " + quote_args(a->evidence_argv) + "\n";
    for (const auto& [k, v] : a->evidence_env) out += "  arm " + a->name + " evidence env: " + k + "=" + v + "\n";
  }

  bool diffs = false;
  for (const auto& a : r.answers)
    if (!a.identical) {
      if (!diffs) out += "\n## Answer diffs (flag off -> flag on)\n";
      diffs = true;
      out += a.diff + (ends_with(a.diff, "\n") ? "" : "\n");
      out += "first differing token: " + first_token_text(a.difference) + "\n";
      out += answer_difference_text(a.difference) + "\n";
    }
  return out;
}

nlohmann::ordered_json ab_to_json(const AbRun& r) {
  using json = nlohmann::ordered_json;
  auto opt = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json j;
  j["case"] = r.case_name;
  j["case_file"] = r.case_file;
  j["job"] = r.job;
  j["runtime"] = {{"name", r.runtime}, {"version", r.runtime_version}, {"build", r.runtime_build}};
  j["fingerprint"] = r.fingerprint_id;
  j["model"] = {{"path", r.model_path}, {"sha256", r.model_sha256}};
  j["flashproof_version"] = r.flashproof_version;
  j["started_utc"] = r.started_utc;
  j["output_dir"] = r.output_dir;
  j["plan"] = {{"repetitions", r.repetitions}, {"rounds", r.rounds}, {"warmup", r.warmup},
               {"sustained_s", r.sustained_s}, {"concurrency", r.concurrency}, {"order", r.order}, {"launches", r.launches},
               {"blocks", r.blocks}, {"stopped", r.stopped}};
  j["decision"] = {
      {"exit_code", r.exit_code}, {"complete", r.complete}, {"text", r.decision}, {"failures", r.failures}, {"findings", r.findings}};
  json gates = json::array();
  for (const auto& g : r.gates) gates.push_back({{"figure", g.figure}, {"outcome", to_string(g.outcome)}, {"detail", g.detail}});
  j["gates"] = gates;
  json arms = json::object();
  for (const AbArm* a : {&r.off, &r.on}) {
    json figs = json::object();
    for (const auto& f : a->figures)
      figs[f.name] = {{"n", f.summary.n}, {"p50", opt(f.summary.median)}, {"p95", opt(f.summary.p95)},
                      {"p99", opt(f.summary.p99)}, {"mad", opt(f.summary.mad)}, {"samples", f.samples}};
    arms[a->name] = {
        {"flag_value", a->flag_value},
        {"evidence",
         {{"verdict", to_string(a->verdict)},
          {"backend", a->verdict_backend},
          {"levels_used", a->levels_used},
          {"as_required", a->verdict_as_required},
          {"explanation", a->verdict_explanation},
          {"quotes", a->verdict_quotes},
          {"signals", a->evidence_signals},
          {"degraded", a->degraded ? nlohmann::ordered_json(degradation_text(*a->degraded)) : nlohmann::ordered_json(nullptr)},
          {"signal_mismatches", a->signal_mismatches},
          {"probed_check", a->probed_check},
          {"probed_mismatches", a->probed_mismatches}}},
        {"launch", {{"timed_argv", a->timed_argv}, {"evidence_argv", a->evidence_argv}, {"evidence_env", a->evidence_env}}},
        {"launches", a->launches},
        {"figures", figs},
        {"memory",
         {{"kv_buffer_mib", a->kv_mib_by_device},
          {"compute_buffer_mib", a->compute_mib_by_device},
          {"gpu", a->gpu_memory},
          {"headroom", headroom_json(a->headroom, a->headroom_why_not)}}},
        {"sustained",
         {{"ran", a->sustained_ran},
          {"wall_s", a->sustained_wall_s},
          {"requests", a->sustained_requests},
          {"concurrency", a->sustained_concurrency},
          {"drift", a->drift_lines},
          {"sent", a->sustained_sent},
          {"server_stopped_answering", a->sustained_stop.empty() ? json(nullptr) : json(a->sustained_stop)},
          {"log_when_stopped", a->sustained_stop_log},
          {"server_gauges", a->sustained_gauges ? server_gauges_json(*a->sustained_gauges) : nlohmann::ordered_json(nullptr)}}},
        {"answers", a->answers},
        {"unstable_answers", a->unstable_answers},
        {"errors", a->errors}};
  }
  j["arms"] = arms;
  json figs = json::array();
  for (const auto& f : r.figures) {
    json needed = f.cmp.repetitions_needed ? json(*f.cmp.repetitions_needed) : json(nullptr);
    figs.push_back({{"figure", f.name},
                    {"gate", f.gate},
                    {"headline", f.headline},
                    {"direction", f.lower_is_better ? "lower_is_better" : "higher_is_better"},
                    {"n_off", f.cmp.n_a},
                    {"n_on", f.cmp.n_b},
                    {"median_off", opt(f.cmp.median_a)},
                    {"median_on", opt(f.cmp.median_b)},
                    {"diff", opt(f.cmp.diff)},
                    {"diff_rel", opt(f.cmp.diff_rel)},
                    {"ci95", {opt(f.cmp.ci.low), opt(f.cmp.ci.high)}},
                    {"mann_whitney_p", opt(f.cmp.mwu.p)},
                    {"verdict", to_string(f.cmp.verdict)},
                    {"effect", to_string(f.effect)},
                    {"too_few_repetitions", f.cmp.too_few_repetitions},
                    {"repetitions_needed", needed},
                    {"explanation", f.cmp.explanation}});
  }
  j["figures"] = figs;
  json mech = json::array();
  for (const auto& m : r.mechanism)
    mech.push_back({{"figure", m.figure},
                    {"expect", to_string(m.expect)},
                    {"at_least", m.at_least},
                    {"tolerance", m.tolerance},
                    {"outcome", to_string(m.outcome)},
                    {"detail", m.detail}});
  j["mechanism"] = mech;
  j["unpredicted"] = r.unpredicted;
  json answers = json::array();
  for (const auto& a : r.answers) {
    json p = {{"prompt_id", a.prompt_id}, {"identical", a.identical}, {"diff", a.diff}};
    if (!a.identical) p["difference"] = answer_difference_json(a.difference);
    answers.push_back(std::move(p));
  }
  j["answers"] = {
      {"same_system", r.same_system}, {"answers_pass", {{"off", r.off.answers_pass}, {"on", r.on.answers_pass}}}, {"prompts", answers}};
  return j;
}

Status write_ab_files(const std::string& dir, const AbRun& r) {
  const std::string json = ab_to_json(r).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  return write_files_atomic({{dir + "/ab.json", json}, {dir + "/ab.txt", valid_utf8(ab_to_text(r))}});
}

}  // namespace fp
