#include "flow/gates/upgrade_gate.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "case/case_file.h"
#include "flow/case_run/golden_check.h"
#include "evidence/verdict.h"
#include "flow/passes/case_context.h"
#include "golden/golden_paths.h"
#include "runtime/adapter.h"
#include "runtime/launcher.h"
#include "runtime/process.h"
#include "runtime/runtime_data.h"
#include "util/file_hash_cache.h"
#include "util/model_files.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;


// The fingerprint a case will run with, known before it runs (the build its log states is
// known only after the evidence pass; the comparison with the golden checks it then).
// The model is hashed here, for every case before any runs (through the hash cache; `rehash` reads
// it again); the case runs then find the hash in the cache.
Result<Fingerprint> probe_fingerprint(const Case& c, const std::string& suite_root, bool rehash) {
  FP_TRY(Adapter adapter, load_adapter(c.runtime));
  FP_TRY(RuntimeCommand runtime, locate_runtime(adapter));
  const std::string model = fs::path(c.model.path).is_absolute() ? c.model.path : (fs::path(suite_root) / c.model.path).string();
  FP_TRY(std::vector<std::string> files, model_files(model));
  std::vector<std::string> shas;
  for (const auto& file : files) {
    FP_TRY(FileHash h, cached_sha256_file(file, rehash));
    shas.push_back(h.sha256);
  }
  return case_fingerprint(c, adapter, runtime, join(shas, ","));
}


fs::file_time_type newest_golden(const std::string& dir, const std::vector<std::string>& case_names, size_t& count) {
  fs::file_time_type newest{};
  count = 0;
  for (const auto& name : case_names) {
    std::error_code ec;
    const fs::path g = fs::path(dir) / (name + ".json");
    if (!fs::is_regular_file(g, ec)) continue;
    ++count;
    newest = std::max(newest, fs::last_write_time(g, ec));
  }
  return newest;
}

// Evaluates one finished run against its baseline; fills outcome and problems.
void judge_case(const Case& c, const CaseRun& run, const GoldenPaths& paths, GateCaseReport& cr) {
  const RunResult& r = run.result;
  cr.result_dir = r.output_dir;
  cr.figure_lines = r.golden_lines;
  cr.verdict_after = verdict_text(r.verdict);
  if (r.case_name.empty()) {
    cr.outcome = run.exit_code == kRunSkip ? UpgradeOutcome::skipped : UpgradeOutcome::incomplete;
    cr.problems.push_back(run.message);
    return;
  }
  auto before = load_recorded_verdict(paths.verdict_file);
  std::error_code ec;
  if (before) {
    cr.verdict_before = recorded_verdict_text(*before);
  } else if (fs::exists(paths.verdict_file, ec)) {
    cr.problems.push_back("baseline verdict unreadable: " + before.error().message);
  } else {
    cr.verdict_before = "not recorded (" + paths.verdict_file + " missing: golden recorded before verdicts were kept)";
  }
  if (!r.verdict.as_expected)  // evidence/verdict.h verdict_as_expected, applied by the case run
    cr.problems.push_back("LOST: fused attention is " + to_string(r.verdict.activity) + " (expected " + (c.expect.fused_attention ? "active" : "not active") + " on " + c.expect.backend + "): " +
                          r.verdict.explanation);
  if (before) {
    if (before->state != to_string(r.verdict.activity) || (before->degraded && *before->degraded != r.verdict.degraded.has_value()))
      cr.problems.push_back("verdict changed: " + cr.verdict_before + " -> " + cr.verdict_after);
    else if (fused_devices_differ(before->fused_backends, r.verdict.fused_backends))
      cr.problems.push_back("fused attention moved: " + cr.verdict_before + " -> " + cr.verdict_after);
    for (const auto& lost : evidence_lost_since_golden(*before, r, paths.verdict_file)) cr.problems.push_back(lost);
  }
  for (const auto& f : r.failures) cr.problems.push_back(f);
  if (!r.complete)
    cr.outcome = UpgradeOutcome::incomplete;
  else
    cr.outcome = cr.problems.empty() ? UpgradeOutcome::pass : UpgradeOutcome::fail;
}

// A case's K/V pair as its launch line states it ("q5_1-q5_1"; the runtime data's cause facts
// cache_type_k/v: -ctk/-ctv, the runtime's default where the line names none); "" when unknown.
std::string case_kv_pair(const Case& c) {
  auto sigs = load_runtime_signatures(c.runtime);
  if (!sigs) return "";
  Facts f = facts_from_argv(c.launch.argv, sigs->causes);
  add_default_facts(sigs->causes, f);
  if (!f.count("cache_type_k") || !f.count("cache_type_v")) return "";
  return f["cache_type_k"] + "-" + f["cache_type_v"];
}

}  // namespace

bool worse_within_noise(const RunResult::GoldenFigure& f) {
  return f.gate && !f.memory && f.status == FigureStatus::within_noise && f.judged == FigureStatus::within_noise && f.worse_by > 0;
}

const char* to_string(UpgradeOutcome o) {
  switch (o) {
    case UpgradeOutcome::pass: return "pass";
    case UpgradeOutcome::fail: return "FAIL";
    case UpgradeOutcome::unresolved: return "unresolved";
    case UpgradeOutcome::incomplete: return "incomplete";
    case UpgradeOutcome::skipped: return "skipped";
  }
  return "incomplete";
}

// "the new build compiles other K/V pairs: now also q5_1-q5_1; no longer q4_0-q4_0 (before: ...; now: ...)",
// then the cases of the suite whose pair enters or leaves the list.
std::string compiled_pairs_change_text(const FaPairChange& ch, const std::string& before, const std::string& after,
                          const std::vector<std::pair<std::string, std::string>>& case_pairs) {
  std::vector<std::string> parts;
  if (!ch.added.empty()) parts.push_back("now also " + join(ch.added, ", "));
  if (!ch.removed.empty()) parts.push_back("no longer " + join(ch.removed, ", "));
  if (ch.all_before != ch.all_after) parts.push_back(ch.all_after ? "now every pair (FA_ALL_QUANTS)" : "no longer every pair");
  std::string out = "the new build compiles other K/V pairs: " + join(parts, "; ") + " (before: " + before + "; now: " + after + ")\n";
  std::vector<std::string> changed;
  for (const auto& [name, pair] : case_pairs) {
    if (pair.empty()) continue;
    const bool was = fa_pair_compiled(before, pair), is = fa_pair_compiled(after, pair);
    if (was != is)
      changed.push_back(name + " (" + pair + (is ? ": now compiled, was converted" : ": no longer compiled, now converted") + ")");
  }
  out += "  cases of the suite whose -ctk/-ctv pair enters or leaves the list: " + (changed.empty() ? std::string("none") : join(changed, ", ")) + "\n";
  return out;
}

Result<Baseline> choose_baseline(const std::string& golden_root, const Fingerprint& current,
                                 const std::vector<std::string>& case_names, const std::string& named) {
  std::error_code ec;
  if (!named.empty()) {
    const fs::path dir = fs::path(golden_root) / named;
    if (!fs::is_directory(dir, ec))
      return make_error("--baseline " + quote(named) + ": " + dir.string() + " is not a golden folder");
    return Baseline{named, "named with --baseline"};
  }
  struct Candidate {
    std::string id;
    size_t count;
    fs::file_time_type newest;
  };
  std::vector<Candidate> candidates;
  if (fs::is_directory(golden_root, ec))
    for (const auto& e : fs::directory_iterator(golden_root, ec)) {
      if (!e.is_directory(ec)) continue;
      const std::string id = e.path().filename().string();
      if (id == current.id()) continue;
      const std::string fp_file = (e.path() / "fingerprint.json").string();
      if (!fs::exists(fp_file, ec)) continue;
      FP_TRY(Fingerprint f, load_fingerprint(fp_file));
      if (!same_hardware(f, current) || f.runtime != current.runtime) continue;
      size_t count = 0;
      fs::file_time_type newest = newest_golden(e.path().string(), case_names, count);
      if (count > 0) candidates.push_back({id, count, newest});
    }
  if (!candidates.empty()) {
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return a.count != b.count ? a.count > b.count : a.newest > b.newest;
    });
    const Candidate& best = candidates.front();
    std::string reason = "the newest other fingerprint on this hardware with goldens for " + std::to_string(best.count) +
                         " of " + std::to_string(case_names.size()) + " cases";
    if (candidates.size() > 1) reason += " (" + std::to_string(candidates.size() - 1) + " older or less complete skipped)";
    return Baseline{best.id, reason};
  }
  size_t own = 0;
  newest_golden((fs::path(golden_root) / current.id()).string(), case_names, own);
  if (own > 0)
    return Baseline{current.id(), "no other fingerprint on this hardware has goldens for these cases: this "
                                  "fingerprint's own goldens (a new model file or launch shows per case)"};
  return make_error(golden_root + ": no goldens for these cases on this hardware (fingerprint now " + current.id() +
                    "): record them first with `flashproof run CASE --record-missing` or `flashproof accept RUNDIR`");
}

GateReport run_upgrade_gate(const std::vector<std::string>& case_paths, const GateOptions& options, std::ostream& out) {
  RunOptions base = options.run;
  if (base.results_root.empty()) base.results_root = base.suite.results;
  if (base.golden_root.empty()) base.golden_root = base.suite.golden;
  GateReport report;
  TeeText say{out, ""};

  struct Planned {
    Case c;
    Fingerprint now;
    size_t report_index;
  };
  std::map<std::string, std::vector<Planned>> by_id;  // current fingerprint id -> cases
  std::vector<std::pair<std::string, std::string>> case_pairs;  // case -> its K/V pair, for a change of compiled pairs
  bool pairs_said = false;
  for (const auto& path : case_paths) {
    GateCaseReport cr;
    cr.case_path = path;
    auto c = load_case(path, base.suite);
    if (!c) {
      cr.problems.push_back(c.error().message);
      report.cases.push_back(cr);
      continue;
    }
    cr.case_name = c->name;
    case_pairs.emplace_back(c->name, case_kv_pair(*c));
    if (c->self_test) {
      cr.outcome = UpgradeOutcome::skipped;
      cr.problems.push_back("self-test case (flashproof must fail it): not part of the gate");
      report.cases.push_back(cr);
      continue;
    }
    auto now = probe_fingerprint(*c, base.suite.root, base.rehash);
    if (!now) {
      cr.problems.push_back("fingerprint: " + now.error().message);
      report.cases.push_back(cr);
      continue;
    }
    by_id[now->id()].push_back({*c, *now, report.cases.size()});
    report.cases.push_back(cr);
  }

  for (auto& [id, planned] : by_id) {
    std::vector<std::string> names;
    for (const auto& p : planned) names.push_back(p.c.name);
    say("upgrade gate: fingerprint now " + id + " (" + std::to_string(planned.size()) + " cases)\n");
    auto baseline = choose_baseline(base.golden_root, planned.front().now, names, options.baseline);
    if (!baseline) {
      say("  no baseline: " + baseline.error().message + "\n");
      for (const auto& p : planned) report.cases[p.report_index].problems.push_back("no baseline: " + baseline.error().message);
      continue;
    }
    say("baseline: " + baseline->id + " (" + baseline->reason + ")\n");
    const std::string machine_file = base.golden_root + "/" + baseline->id + "/fingerprint.json";
    auto machine_before = fs::exists(machine_file) ? load_fingerprint(machine_file) : Result<Fingerprint>(Error{""});
    std::vector<FieldChange> machine_changes;
    if (machine_before) {
      Fingerprint m_now = planned.front().now;
      m_now.runtime_build_log = machine_before->runtime_build_log;  // checked after the evidence pass
      m_now.runtime_fa_pairs = machine_before->runtime_fa_pairs;
      m_now.runtime_gpu_archs = machine_before->runtime_gpu_archs;
      machine_changes = fingerprint_changes(*machine_before, m_now);
      say("what changed (machine and runtime, " + machine_file + " -> now):\n" + describe_changes(machine_changes));
    } else if (!machine_before.error().message.empty()) {
      say("baseline fingerprint unreadable: " + machine_before.error().message + "\n");
      for (const auto& p : planned) report.cases[p.report_index].problems.push_back("baseline fingerprint unreadable: " + machine_before.error().message);
      continue;
    } else {
      say("what changed: unknown (" + machine_file + " missing)\n");
    }

    for (const auto& p : planned) {
      GateCaseReport& cr = report.cases[p.report_index];
      cr.baseline_id = baseline->id;
      const GoldenPaths paths = golden_paths(base.golden_root, baseline->id, p.c.name);
      say("\n== " + p.c.name + " against " + paths.golden_file + "\n");
      auto recorded = load_golden_fingerprint(paths);
      if (!recorded) {
        cr.problems.push_back("baseline fingerprint unreadable: " + recorded.error().message);
        say("  " + cr.problems.back() + "\n");
        continue;
      }
      if (*recorded) {
        Fingerprint now = p.now;
        now.runtime_build_log = (*recorded)->runtime_build_log;
        now.runtime_fa_pairs = (*recorded)->runtime_fa_pairs;  // from the log: compared after the run
        now.runtime_gpu_archs = (*recorded)->runtime_gpu_archs;
        cr.changes = fingerprint_changes(**recorded, now);
        std::vector<FieldChange> case_only;
        for (const auto& ch : cr.changes)
          if (std::none_of(machine_changes.begin(), machine_changes.end(), [&](const FieldChange& m) { return m.field == ch.field; }))
            case_only.push_back(ch);
        if (!case_only.empty()) say("what changed for this case:\n" + describe_changes(case_only));
      }
      RunOptions o = base;
      o.record_missing = false;
      o.golden_fingerprint = baseline->id;
      o.rehash = false;  // probe_fingerprint hashed it (again, with --rehash) moments ago
      CaseRun run = run_case_file(p.c.file, o);
      judge_case(p.c, run, paths, cr);
      // The build's compiled K/V pairs, known from its log after the run: once, for the whole suite.
      const std::string pairs_before = recorded && *recorded ? (*recorded)->runtime_fa_pairs
                                       : machine_before     ? machine_before->runtime_fa_pairs
                                                            : std::string();
      const std::string pairs_now = run.result.fingerprint.is_object() ? run.result.fingerprint.value("runtime_fa_pairs", "") : "";
      if (!pairs_said && !pairs_before.empty() && !pairs_now.empty()) {
        const FaPairChange ch = fa_pair_change(pairs_before, pairs_now);
        if (ch.any()) {
          say(compiled_pairs_change_text(ch, pairs_before, pairs_now, case_pairs));
          pairs_said = true;
        }
      }
      if (options.unresolved_exit && cr.outcome == UpgradeOutcome::pass)
        for (const auto& f : run.result.golden_figures)
          if (worse_within_noise(f)) {
            cr.outcome = UpgradeOutcome::unresolved;
            cr.problems.push_back("UNRESOLVED " + f.name +
                                  ": worse beyond its minimum effect but within the noise band; take more launches (--launches) "
                                  "before and after, or gate side by side while the old build is at hand");
          }
      say("verdict: " + cr.verdict_before + " -> " + cr.verdict_after + "\n");
      for (const auto& l : cr.figure_lines) say("  " + l + "\n");
      for (const auto& pr : cr.problems) say("  PROBLEM " + pr + "\n");
      say("case " + p.c.name + ": " + to_string(cr.outcome) + (cr.result_dir.empty() ? "" : " (result " + cr.result_dir + "/result.txt)") +
          "\n");
      if (interrupted()) break;
    }
  }

  size_t fail = 0, incomplete = 0, pass = 0, skipped = 0, unresolved = 0;
  say("\nupgrade gate summary:\n");
  for (const auto& cr : report.cases) {
    switch (cr.outcome) {
      case UpgradeOutcome::pass: ++pass; break;
      case UpgradeOutcome::fail: ++fail; break;
      case UpgradeOutcome::skipped: ++skipped; break;
      case UpgradeOutcome::unresolved: ++unresolved; break;
      case UpgradeOutcome::incomplete: ++incomplete; break;
    }
    std::string why = cr.problems.empty() ? "" : ": " + cr.problems.front().substr(0, cr.problems.front().find('\n'));
    if (cr.problems.size() > 1) why += " (+" + std::to_string(cr.problems.size() - 1) + " more)";
    say("  " + (cr.case_name.empty() ? cr.case_path : cr.case_name) + "  " + to_string(cr.outcome) + why + "\n");
  }
  report.exit_code = fail ? 1 : incomplete ? 2 : unresolved ? 3 : pass ? 0 : 125;
  say(std::string("upgrade gate: ") +
      (report.exit_code == 0 ? "PASS" : report.exit_code == 1 ? "FAIL" : report.exit_code == 3 ? "UNRESOLVED" : report.exit_code == 125 ? "SKIPPED" : "INCOMPLETE") +
      " (" + std::to_string(pass) + " pass, " + std::to_string(fail) + " fail, " +
      (options.unresolved_exit ? std::to_string(unresolved) + " unresolved, " : std::string()) + std::to_string(incomplete) +
      " incomplete, " + std::to_string(skipped) + " skipped)\n");

  // The report beside the runs: results/<fingerprint id>/gate-<stamp>-<pid>.txt
  if (!by_id.empty()) {
    const std::string file = base.results_root + "/" + by_id.begin()->first + "/gate-" + utc_stamp("%Y%m%dT%H%M%SZ") + "-" +
                             std::to_string(::getpid()) + ".txt";
    std::error_code ec;
    fs::create_directories(fs::path(file).parent_path(), ec);
    if (auto st = write_file_atomic(file, say.text); st) {
      say("report: " + file + "\n");
    } else {  // writing is part of the result
      say("upgrade gate: INCOMPLETE: the gate's report could not be written: " + st.error().message + "\n");
      if (report.exit_code != 1) report.exit_code = 2;
    }
  }
  report.text = say.text;
  return report;
}

}  // namespace fp
