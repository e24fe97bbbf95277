#include "report/html_sections.h"

#include <algorithm>
#include <cmath>

#include "report/headroom_text.h"
#include "report/html_markup.h"
#include "report/html_plots.h"
#include "report/lenient_json.h"
#include "util/format_number.h"
#include "util/text.h"

namespace fp::html {

using json = nlohmann::json;

const char* const kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#c5cad3}
main{padding:12px 24px 40px;max-width:1200px}
section.case,section.ab,section.matrix{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:10px 18px;margin:14px 0}
h2{font-size:17px;margin:6px 0}h3{font-size:14px;margin:14px 0 6px;color:#3b4354}
table{border-collapse:collapse;margin:4px 0}td,th{padding:3px 8px;border-bottom:1px solid #eceef2;text-align:left;vertical-align:top}
th{font-weight:600;color:#50586a}td.n{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;border-radius:3px;padding:0 6px;font-weight:600;font-size:12px}
.badge.ok{background:#d9f2e1;color:#12652f}.badge.bad{background:#fbdada;color:#9b1c1c}.badge.warn{background:#fdf0cc;color:#7a5300}
code,pre{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}pre{background:#f3f4f7;padding:6px 8px;overflow:auto;max-height:240px}
ul.quotes{margin:4px 0;padding-left:18px}ul.quotes li code{background:#f3f4f7}
.grid{stroke:#e6e8ec}.tick{font-size:10px;fill:#6b7385}.label,.value,.arm{font-size:11px;fill:#3b4354}
.band{fill:#fdeaea}.golden{stroke:#1b8a3f;stroke-width:2}.limit{stroke:#c62828;stroke-width:1.5;stroke-dasharray:4 3}
.whisker{stroke:#8a92a3}.box{fill-opacity:.18;stroke-width:1}.box.run{fill:#2f5fb3;stroke:#2f5fb3}.box.off{fill:#8a5a00;stroke:#8a5a00}.box.on{fill:#2f5fb3;stroke:#2f5fb3}
.dot{fill-opacity:.75}.dot.run,.dot.on{fill:#2f5fb3}.dot.off{fill:#b07400}.median{stroke:#1d2330;stroke-width:2.5}
.arm.off{fill:#8a5a00;font-weight:600}.arm.on{fill:#2f5fb3;font-weight:600}
.bar.kv{fill:#2f5fb3}.bar.compute{fill:#6f8fd0}.bar.rss{fill:#8a92a3}.bar.off{fill:#b07400}.bar.on{fill:#2f5fb3}
.trend{fill:none;stroke:#2f5fb3;stroke-width:1.5}.point.ok{fill:#1b8a3f}.point.bad{fill:#c62828}.point.warn{fill:#c98a00}
line.step{stroke:#6b7385;stroke-dasharray:3 3}line.step.worse{stroke:#c62828}line.step.better{stroke:#1b8a3f}
text.step{font-size:11px;fill:#50586a}text.step.worse{fill:#c62828;font-weight:700}text.step.better{fill:#1b8a3f;font-weight:700}
.figrow{display:flex;gap:14px;align-items:center;flex-wrap:wrap}.figrow .meta{min-width:260px;font-size:12px;color:#3b4354}
.legend{font-size:12px;color:#50586a}.legend i{display:inline-block;width:18px;height:3px;vertical-align:middle;margin:0 4px}
nav a{margin-right:10px}.notes{color:#7a5300}
)";

namespace {

std::string golden_limit_text(const GoldenMark& g) {
  return "golden " + readable(g.median) + ", limit " + readable(g.limit) + (g.lower_is_better ? " (lower is better)" : " (higher is better)");
}

std::string verdict_block(const json& v, const json& expect) {
  std::string state = str(v, {"state"}, "no evidence");
  const bool degraded = v.is_object() && v.contains("degraded") && v["degraded"].is_object();
  bool as_expected = v.is_object() && v.value("as_expected", false);
  std::string out = "<h3>Verdict</h3><p>" + (degraded ? badge(state + ", degraded", "warn") : badge(state, status_class(state))) + " ";
  std::string backend = str(v, {"backend"});
  if (!backend.empty()) out += "on <code>" + esc(backend) + "</code> ";
  out += as_expected ? badge("as expected", "ok") : badge("not as expected", "bad");
  out += " &mdash; expected fused attention " +
         std::string(expect.is_object() && expect.value("fused_attention", true) ? "active" : "not active") + " on <code>" +
         esc(str(expect, {"backend"})) + "</code></p>";
  out += "<p>" + esc(str(v, {"explanation"})) + "</p>";
  if (degraded) {  // the fused path on data the runtime converted first
    const json& d = v["degraded"];
    out += "<p class=\"notes\"><b>Degraded:</b> K/V <code>" + esc(str(d, {"k_type"})) + "-" + esc(str(d, {"v_type"})) + "</code>";
    if (!str(d, {"converted_to"}).empty()) out += " converted to <code>" + esc(str(d, {"converted_to"})) + "</code>";
    out += ". " + esc(str(d, {"cause"})) + ".";
    if (!str(d, {"runtime_says"}).empty()) out += "<br>The runtime: <code>" + esc(str(d, {"runtime_says"})) + "</code>";
    if (!str(d, {"kernels_say"}).empty()) out += "<br>Kernels: " + esc(str(d, {"kernels_say"}));
    out += "<br>Cost: " + (d.contains("conversion_share") && d["conversion_share"].is_number()
                                ? esc(fixed(d["conversion_share"].get<double>() * 100, 1)) + "% of GPU time converting the KV cache"
                                : std::string("not measured (no kernel tally)"));
    out += "<br>Remedy: " + esc(str(d, {"remedy"})) + "</p>";
  }
  auto used = strings(v, "levels_used"), unavailable = strings(v, "levels_unavailable");
  out += "<p>Evidence levels used: <b>" + esc(used.empty() ? "none" : join(used, ", ")) + "</b>";
  if (!unavailable.empty()) out += "; unavailable: " + esc(join(unavailable, "; "));
  out += "</p>";
  auto quotes = strings(v, "quotes");
  if (!quotes.empty()) {
    out += "<ul class=\"quotes\">";
    for (const auto& q : quotes) out += "<li><code>" + esc(q) + "</code></li>";
    out += "</ul>";
  }
  return out;
}

// The case's name, status, launch line and why it did not pass.
std::string case_head(const json& r, const std::string& result_path, size_t index) {
  const std::string name = str(r, {"case"}, "?"), status = str(r, {"status"}, "?");
  std::string out = "<section class=\"case\" id=\"case-" + std::to_string(index) + "\"><h2>" + esc(name) + " " + badge(status, status_class(status)) +
                    "</h2>";
  out += "<p>" + esc(str(r, {"job"})) + " job &middot; " + esc(str(r, {"runtime", "name"})) + " " + esc(str(r, {"runtime", "build"})) +
         " &middot; flag <code>" + esc(str(r, {"launch", "flag"})) + "</code> &middot; started " + esc(str(r, {"started_utc"})) +
         " &middot; <code>" + esc(result_path) + "</code></p>";
  auto failures = strings(r, "failures");
  if (!failures.empty()) {
    out += "<h3>Why it did not pass</h3><ul>";
    for (const auto& f : failures) out += "<li>" + esc(f) + "</li>";
    out += "</ul>";
  }
  return out;
}

// The cheap signals of the evidence pass, the timed runs and the probed check.
std::string signals_block(const json& r) {
  const std::string mism = str(r, {"signals", "timed_runs"});
  std::string out = "<p>Cheap signals: evidence pass <code>" + esc(str(r, {"signals", "evidence_pass"})) + "</code>, timed runs <code>" + esc(mism) +
         "</code></p>";
  if (const std::string pc = str(r, {"signals", "probed_check"}); !pc.empty())
    out += "<p>Probed check (the timed configuration once more, with the kernel probe): <code>" + esc(pc) + "</code></p>";
  return out;
}

// The workload a case with workload fields asked for and got (flow/passes/workload_summary.h).
std::string workload_block(const json& r) {
  std::string out;
  if (r.contains("workload") && r["workload"].is_object() && !r["workload"].empty()) {
    out += "<h3>Workload</h3><table>";
    for (const auto& [k, v] : r["workload"].items())
      out += "<tr><td>" + esc(k) + "</td><td>" + esc(v.is_string() ? v.get<std::string>() : v.dump()) + "</td></tr>";
    out += "</table>";
  }
  return out;
}

// Every figure's samples against the golden, the golden comparison line by line, the cold start.
std::string figures_block(const ReportCase& rc, const json& figs) {
  const json& r = rc.result;
  std::string out = "<h3>Figures against the golden</h3>";
  if (!rc.golden_note.empty()) out += "<p class=\"notes\">" + esc(rc.golden_note) + "</p>";
  out += "<p class=\"legend\">dots: samples; box: p25&ndash;p75; black tick: median; <i style=\"background:#1b8a3f\"></i>golden median "
         "<i style=\"background:#c62828\"></i>limit (dashed), shaded: tolerance</p>";
  for (const auto& [fname, fig] : figs.items()) {
    auto s = samples_of(fig);
    auto g = rc.golden.find(fname);
    const GoldenMark* gm = g == rc.golden.end() ? nullptr : &g->second;
    out += "<div class=\"figrow\"><div class=\"meta\"><b>" + esc(fname) + "</b>" + (fig.value("gate", false) ? " " + badge("gate", "warn") : "") +
           "<br>p50 " + readable(dbl(fig, "p50")) + " &middot; p95 " + readable(dbl(fig, "p95")) + " &middot; n " + std::to_string(s.size()) +
           (gm ? "<br>" + esc(golden_limit_text(*gm)) : "") + "</div>" + figure_vs_golden_plot(fname, s, gm) + "</div>";
  }
  auto golden_lines = strings(r.value("golden", json::object()), "lines");
  if (!golden_lines.empty()) {
    out += "<details><summary>Golden comparison, line by line (" + esc(str(r, {"golden", "status"})) + ")</summary><pre>";
    for (const auto& l : golden_lines) out += esc(l) + "\n";
    out += "</pre></details>";
  }
  out += "<p>Cold start: ready " + readable(dbl(r.value("cold", json::object()), "ready_ms")) + " ms, first request TTFT " +
         readable(dbl(r.value("cold", json::object()), "first_request_ttft_ms")) + " ms. " + esc(str(r, {"fidelity"})) + "</p>";
  out +=
      "<p class=\"ttft-split\">TTFT split: " + esc(str(r, {"ttft_split", "text"}, "not recorded (a result written before the split was)")) +
      "</p>";
  return out;
}

// Memory as bars, the GPU's, and the headroom.
std::string memory_block(const json& r, const std::string& name) {
  std::string out;
  const json mem = r.value("memory", json::object());
  std::vector<Bar> bars;
  if (mem.contains("kv_buffer_mib") && mem["kv_buffer_mib"].is_object())
    for (const auto& [d, v] : mem["kv_buffer_mib"].items())
      if (v.is_number()) bars.push_back({"KV buffer " + d, "kv", v.get<double>()});
  if (mem.contains("compute_buffer_mib") && mem["compute_buffer_mib"].is_object())
    for (const auto& [d, v] : mem["compute_buffer_mib"].items())
      if (v.is_number()) bars.push_back({"compute buffer " + d, "compute", v.get<double>()});
  if (double rss = dbl(mem, "host_peak_rss_mib"); std::isfinite(rss)) bars.push_back({"host peak RSS", "rss", rss});
  out += "<h3>Memory</h3>";
  if (!bars.empty()) out += bars_plot("memory", name + ": memory", bars);
  out += "<p>GPU: " + esc(str(mem, {"gpu"}, "not measured")) + "</p>";
  {
    std::string why_not;
    const auto room = headroom_from_json(r.value("headroom", json()), &why_not);
    out += "<h3>Headroom</h3><table>";
    for (const auto& [k, v] : headroom_lines(room, why_not)) {
      std::string cell = esc(v);
      if (k == "headroom.deployed_context" && room && room->deployed) {  // the typed check, not its words
        const DeployedFit& d = *room->deployed;
        cell = badge(d.fits_ok() ? "fits" : d.checked ? "does not fit" : "not checked", d.fits_ok() ? "ok" : "bad") + " " + cell;
      }
      out += "<tr><td>" + esc(k) + "</td><td>" + cell + "</td></tr>";
    }
    out += "</table>";
  }
  return out;
}

// The answers per prompt against their reference.
std::string answers_block(const json& r) {
  std::string out;
  if (r.contains("answers") && r["answers"].is_array() && !r["answers"].empty()) {
    out += "<h3>Answers</h3><table><tr><th>prompt</th><th>reference</th><th>stable</th><th>answer</th></tr>";
    for (const auto& a : r["answers"]) {
      const std::string ref = str(a, {"reference"});
      out += "<tr><td>" + esc(str(a, {"prompt_id"})) + "</td><td>" + badge(ref, ref == "recorded" ? "ok" : status_class(ref)) + "</td><td>" +
             (a.value("stable", true) ? "yes" : "<b>no</b>") + "</td><td><code>" + esc(str(a, {"text"})) + "</code>";
      if (!str(a, {"diff"}).empty()) out += "<pre>" + esc(str(a, {"diff"})) + "</pre>";
      out += "</td></tr>";
    }
    out += "</table>";
  }
  return out;
}

// The gated figures' (or the everyday figures') medians over the runs on this machine.
std::string trend_block(const std::vector<TrendPoint>& trend, const json& figs) {
  std::string out = "<h3>Trend: " + std::to_string(trend.size()) + (trend.size() == 1 ? " run" : " runs") + " on this machine</h3>";
  std::vector<std::string> shown;
  for (const auto& [fname, fig] : figs.items())
    if (fig.value("gate", false)) shown.push_back(fname);
  for (const char* extra : {"ttft_ms", "tpot_ms", "decode_tokens_per_s", "batch_tokens_per_s"})
    if (figs.contains(extra) && std::find(shown.begin(), shown.end(), extra) == shown.end() && shown.size() < 4) shown.push_back(extra);
  for (const auto& fname : shown) {
    out += "<div class=\"figrow\"><div class=\"meta\"><b>" + esc(fname) + "</b> median per run";
    for (const auto& st : trend_steps(trend, fname))
      out += "<br>" + esc(st.from_build) + " &rarr; " + esc(st.to_build) + ": " + readable(st.before) + " &rarr; " + readable(st.after) + " (" +
             pct(st.change_rel) + ")";
    out += "</div>" + trend_plot(fname, trend, lower_is_better(figs[fname])) + "</div>";
  }
  return out;
}

}  // namespace

std::string case_section(const ReportCase& rc, const std::vector<TrendPoint>* trend, size_t index) {
  const json& r = rc.result;
  const json figs = r.value("figures", json::object());
  std::string out = case_head(r, rc.result_path, index);
  out += verdict_block(r.value("verdict", json::object()), r.value("expect", json::object()));
  out += signals_block(r);
  out += workload_block(r);
  out += figures_block(rc, figs);
  out += memory_block(r, str(r, {"case"}, "?"));
  out += answers_block(r);
  if (trend && !trend->empty()) out += trend_block(*trend, figs);
  out += "</section>";
  return out;
}

std::string ab_section(const json& ab, const std::string& path, size_t index) {
  const std::string name = str(ab, {"case"}, "?");
  const json decision = ab.value("decision", json::object());
  const int code = decision.value("exit_code", 2);
  const std::string outcome = code == 0 ? "pass" : code == 1 ? "fail" : "incomplete";
  std::string out = "<section class=\"ab\" id=\"ab-" + std::to_string(index) + "\"><h2>A/B: " + esc(name) + " " + badge(outcome, status_class(outcome)) +
                    "</h2><p>" + esc(str(decision, {"text"})) + "</p><p><code>" + esc(path) + "</code></p>";
  const json arms = ab.value("arms", json::object());
  out += "<table><tr><th>arm</th><th>flag</th><th>verdict</th><th>levels</th><th>launches</th><th>signals</th></tr>";
  for (const char* arm : {"off", "on"}) {
    const json a = arms.value(arm, json::object());
    const json ev = a.value("evidence", json::object());
    const std::string verdict = str(ev, {"verdict"}, "no evidence");
    out += std::string("<tr><td><b>") + arm + "</b></td><td><code>" + esc(str(a, {"flag_value"})) + "</code></td><td>" +
           badge(verdict, status_class(verdict)) + (ev.value("as_required", false) ? "" : " " + badge("not as required", "bad")) + "</td><td>" +
           esc(join(strings(ev, "levels_used"), ", ")) + "</td><td class=\"n\">" + std::to_string(a.value("launches", 0)) + "</td><td><code>" +
           esc(str(ev, {"signals"})) + "</code></td></tr>";
  }
  out += "</table>";
  out += "<h3>Distributions, flag off against flag on</h3><p class=\"legend\">every sample of both arms; box: p25&ndash;p75; black tick: median</p>";
  const json figs = ab.value("figures", json::array());
  for (const auto& f : figs) {
    const std::string fname = str(f, {"figure"});
    auto off = samples_of(arms.value("off", json::object()).value("figures", json::object()).value(fname, json::object()));
    auto on = samples_of(arms.value("on", json::object()).value("figures", json::object()).value(fname, json::object()));
    std::string ci;
    if (f.contains("ci95") && f["ci95"].is_array() && f["ci95"].size() == 2 && f["ci95"][0].is_number() && f["ci95"][1].is_number())
      ci = " [" + readable(f["ci95"][0].get<double>()) + ", " + readable(f["ci95"][1].get<double>()) + "]";
    const std::string effect = str(f, {"effect"});
    out += "<div class=\"figrow\"><div class=\"meta\"><b>" + esc(fname) + "</b>" + (f.value("gate", false) ? " " + badge("gate", "warn") : "") +
           "<br>off " + readable(dbl(f, "median_off")) + " &rarr; on " + readable(dbl(f, "median_on")) + " (" +
           (std::isfinite(dbl(f, "diff_rel")) ? pct(dbl(f, "diff_rel")) : std::string("-")) + ")<br>diff " + readable(dbl(f, "diff")) + esc(ci) +
           ", p " + readable(dbl(f, "mann_whitney_p")) + "<br>" +
           badge(effect, effect == "within noise" ? "warn" : effect.find("worse") != std::string::npos ? "bad" : "ok") +
           (f.value("too_few_repetitions", false) ? " " + badge("too few repetitions", "warn") : "") + "</div>" + ab_plot(fname, off, on) + "</div>";
  }
  // Memory per arm.
  std::vector<Bar> bars;
  for (const char* arm : {"off", "on"}) {
    const json m = arms.value(arm, json::object()).value("memory", json::object());
    for (const char* kind : {"kv_buffer_mib", "compute_buffer_mib"})
      if (m.contains(kind) && m[kind].is_object())
        for (const auto& [d, v] : m[kind].items())
          if (v.is_number())
            bars.push_back({std::string(arm) + ": " + (std::string(kind) == "kv_buffer_mib" ? "KV " : "compute ") + d, arm, v.get<double>()});
  }
  out += "<h3>Memory per arm</h3>";
  if (!bars.empty()) out += bars_plot("memory", name + ": memory per arm", bars);
  for (const char* arm : {"off", "on"})
    out += std::string("<p>") + arm + " GPU: " + esc(str(arms.value(arm, json::object()), {"memory", "gpu"}, "not measured")) + "</p>";
  const json mech = ab.value("mechanism", json::array());
  if (!mech.empty()) {
    out += "<h3>Stated mechanism</h3><table><tr><th>figure</th><th>expect</th><th>outcome</th><th>detail</th></tr>";
    for (const auto& m : mech) {
      const std::string o = str(m, {"outcome"});
      out += "<tr><td>" + esc(str(m, {"figure"})) + "</td><td>" + esc(str(m, {"expect"})) + "</td><td>" + badge(o, status_class(o)) + "</td><td>" +
             esc(str(m, {"detail"})) + "</td></tr>";
    }
    out += "</table>";
  }
  out += "<p>Answers: " + esc(str(ab, {"answers", "same_system"})) + "</p></section>";
  return out;
}

std::string matrix_section(const json& m, const std::string& path, size_t index) {
  const int code = m.value("exit_code", 2);
  const std::string outcome = code == 0 ? "as expected" : code == 1 ? "a row failed" : "incomplete";
  std::string out = "<section class=\"matrix\" id=\"matrix-" + std::to_string(index) + "\"><h2>Support matrix: " + esc(str(m, {"case"}, "?")) +
                    " " + badge(outcome, code == 0 ? "ok" : code == 1 ? "bad" : "warn") + "</h2><p>" + esc(str(m, {"runtime", "name"})) + " " +
                    esc(str(m, {"runtime", "version"})) + " &middot; fingerprint <code>" + esc(str(m, {"fingerprint_id"})) +
                    "</code> &middot; fused attention expected with the flag on: <code>" + esc(str(m, {"expect_backend"})) + "</code> &middot; " +
                    esc(join(strings(m, "axes"), "; ")) + " &middot; <code>" + esc(path) + "</code></p>";
  for (const auto& e : strings(m, "errors")) out += "<p class=\"notes\">" + esc(e) + "</p>";
  out += "<table><tr><th>KV (K/V)</th><th>flag</th><th>context</th><th>head</th><th>verdict</th><th>attention nodes</th>"
         "<th>attention kernels</th><th>prompt t/s (runtime)</th><th>(flashproof)</th><th>vs off</th><th>TTFT ms</th><th>decode t/s</th>"
         "<th>KV MiB</th><th>compute MiB</th><th>cause / note</th></tr>";
  for (const auto& r : m.value("rows", json::array())) {
    const json shown = r.value("shown", json::object()), speed = r.value("prompt_speed", json::object()),
               memory = r.value("memory", json::object());
    const std::string row_outcome = str(r, {"outcome"});
    const std::string cls = row_outcome == "ran" ? (r.value("verdict_as_flag", false) ? "ok" : "bad") : row_outcome == "refused" ? "warn" : "bad";
    const double vs_off = dbl(speed, "runtime_vs_flag_off");
    out += "<tr><td><code>" + esc(str(r, {"kv"})) + "</code></td><td>" + esc(str(r, {"flag_value"})) + "</td><td class=\"n\">" +
           esc(str(r, {"context"})) + "</td><td class=\"n\">" + esc(str(r, {"head_size"})) + "</td><td>" + badge(str(shown, {"verdict"}), cls) +
           "</td><td>" + esc(str(shown, {"attention_nodes"})) + "</td><td><code>" + esc(str(shown, {"attention_kernels"})) +
           "</code></td><td class=\"n\">" + readable(dbl(speed, "runtime_tokens_per_s")) + "</td><td class=\"n\">" +
           readable(dbl(speed, "flashproof_tokens_per_s")) + "</td><td class=\"n\">" + (std::isfinite(vs_off) ? readable(vs_off) + "x" : "") +
           "</td><td class=\"n\">" + readable(dbl(speed, "ttft_ms")) + "</td><td class=\"n\">" +
           readable(dbl(speed, "runtime_decode_tokens_per_s")) + "</td><td class=\"n\">" + readable(dbl(memory, "kv_cache_mib")) +
           "</td><td class=\"n\">" + readable(dbl(memory, "compute_buffer_mib")) + "</td><td>" + esc(str(shown, {"note"})) + "</td></tr>";
  }
  out += "</table></section>";
  return out;
}

}  // namespace fp::html
