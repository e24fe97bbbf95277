#include "flow/case_run/golden_check.h"

#include <cmath>
#include <filesystem>

#include "case/case_file.h"
#include "case/effect_defaults.h"
#include "evidence/verdict.h"
#include "flow/case_run/golden_record.h"
#include "golden/answers.h"
#include "golden/golden_paths.h"
#include "golden/kernel_families.h"
#include "history/history_changes.h"
#include "util/text.h"

namespace fp {
namespace {
namespace fs = std::filesystem;
}  // namespace

std::map<std::string, std::vector<double>> earlier_nights(const std::string& results_root, const RunResult& r) {
  std::map<std::string, std::vector<double>> out;
  if (results_root.empty()) return out;
  auto history = load_history(results_root);
  if (!history) return out;  // an unreadable history teaches nothing; `history` says why
  std::error_code ec;
  const fs::path own = fs::weakly_canonical(r.output_dir, ec);
  const CaseNights nights = load_case_nights(results_root, *history, r.case_name);
  for (const NightRun& run : nights.runs) {
    if (run.fingerprint_id != r.fingerprint_id || run.launches != r.launches) continue;
    // Passing nights only: a night that failed (a real step, a lost kernel, a changed answer, a
    // burst the band did not cover) must not teach the band that such a night is noise.
    if (run.entry.status != "pass") continue;
    if (!r.output_dir.empty() && fs::weakly_canonical(fs::path(run.result_path).parent_path(), ec) == own) continue;
    for (const NightFigure& f : run.figures) out[f.name].push_back(f.median);
  }
  return out;
}

Result<RecordedVerdict> load_recorded_verdict(const std::string& path) {
  FP_TRY(std::string text, read_file(path));
  try {
    auto j = nlohmann::json::parse(text);
    RecordedVerdict v{j.at("state").get<std::string>(), j.at("backend").get<std::string>(), {}};
    auto placed = backends_from_text(v.backend);
    if (!placed)
      return make_error(path + ": backend \"" + v.backend + "\" is not a placement such as \"CPU 30, CUDA0 126\" (backend, fused nodes)");
    v.fused_backends = *placed;
    v.levels_known = j.contains("levels_used");
    if (v.levels_known) v.levels_used = j.at("levels_used").get<std::vector<std::string>>();
    if (j.contains("degraded")) v.degraded = j.at("degraded").get<bool>();
    return v;
  } catch (const nlohmann::json::exception& e) {
    return make_error(path + ": not a valid verdict file (truncated or corrupt?): " + e.what());
  }
}

namespace {

// The timing figures against the thresholds file at `paths`; fills r.golden_status.
void compare_thresholds(const GoldenPaths& paths, const std::string& id, const std::string& results_root, RunResult& r) {
  auto golden = load_golden(paths.golden_file);
  if (!golden) {
    r.golden_status = "unreadable";
    r.failures.push_back("golden unreadable (left untouched): " + golden.error().message);
    return;
  }
  r.golden_status = "compared";
  if (id != r.fingerprint_id) r.golden_lines.push_back("compared with the goldens of fingerprint " + id + " (baseline)");
  GoldenOrigin origin;
  auto recorded = load_golden_fingerprint(paths);
  if (!recorded) {
    r.failures.push_back("golden fingerprint unreadable (left untouched): " + recorded.error().message);
  } else if (*recorded && r.fingerprint.is_object()) {
    auto now = fingerprint_from_json(nlohmann::json::parse(r.fingerprint.dump()), r.output_dir + "/result.json");
    if (now) {
      auto changes = fingerprint_changes(**recorded, *now);
      origin.same_gpu = !(*recorded)->gpu_uuid.empty() && (*recorded)->gpu_uuid == now->gpu_uuid;
      for (const auto& c : changes) {
        r.golden_lines.push_back("fingerprint changed since the golden: " + c.field + ": " +
                                 (c.before.empty() ? "(none)" : c.before) + " -> " + (c.after.empty() ? "(none)" : c.after));
        // Another GPU by its UUID is another machine (golden/compare.h GoldenOrigin).
        if (c.field == "gpu_uuid") origin.other_machine = "GPU UUID " + c.before + ", this run " + c.after;
      }
    }
  }
  std::vector<Measured> measured = measured_figures(r.figures);
  const auto nights = earlier_nights(results_root, r);
  for (auto& m : measured)
    if (auto it = nights.find(m.name); it != nights.end()) m.nights = it->second;
  auto cmp = compare_to_golden(*golden, measured, origin);
  if (!cmp) {
    r.failures.push_back("golden comparison: " + cmp.error().message);
    return;
  }
  for (const auto& f : cmp->figures) {
    r.golden_figures.push_back({f.name, f.status, f.judgement.status, f.gate, f.guard, f.memory, f.judgement.worse_by});
    r.golden_lines.push_back(std::string(to_string(f.status)) + (f.memory ? " [memory] " : f.gate ? " [gate] " : f.guard ? " [guard] " : " ") +
                             f.message);
    if (f.failed)
      // (a memory or guard message starts with MEMORY or GUARD already)
      r.failures.push_back((f.memory || f.guard ? "" : "figure ") + f.message + " (compare " + paths.golden_file +
                           " with " + r.output_dir + "/result.txt)");
  }
  if (!cmp->untrustworthy.empty()) {
    r.golden_lines.push_back("UNTRUSTWORTHY GOLDEN: " + cmp->untrustworthy);
    r.failures.push_back("UNTRUSTWORTHY GOLDEN: " + cmp->untrustworthy + " (remove " + paths.golden_file + " and run `flashproof run " +
                         r.case_file + " --record-missing` when the machine is quiet)");
  }
  if (!cmp->busier.empty()) r.golden_lines.push_back("BUSIER: " + cmp->busier);
  if (!cmp->slower.empty()) r.golden_lines.push_back("SLOWER MACHINE: " + cmp->slower);
  if (!cmp->other_machine.empty()) r.golden_lines.push_back("OTHER MACHINE: " + cmp->other_machine);
  for (const auto& moved : cmp->memory_moves) {
    r.golden_lines.push_back(moved);
    r.failures.push_back(moved + " (golden " + paths.golden_file + "; if that is intended, keep it with `flashproof accept " + r.output_dir + "`)");
  }
  compare_kernel_set(*golden, paths.golden_file, r);
}

void compare_answers(const GoldenPaths& paths, RunResult& r) {
  for (auto& a : r.answers) {
    auto ref = load_reference_answer(paths.answers_dir, a.prompt_id);
    if (!ref) {
      a.reference = "no reference";
      r.failures.push_back("answer " + a.prompt_id + ": no reference answer (" + ref.error().message + ")");
      continue;
    }
    auto c = compare_answer(a.prompt_id, *ref, a.text);
    a.reference = c.identical ? "identical" : "differs";
    a.diff = c.diff;
    if (!c.identical) r.failures.push_back("answer " + a.prompt_id + " differs from its reference:\n" + c.diff);
  }
}

// The verdict recorded with the golden: the same state on the same devices.
void compare_verdict(const GoldenPaths& paths, RunResult& r) {
  std::error_code ec;
  if (!fs::exists(paths.verdict_file, ec)) return;
  auto before = load_recorded_verdict(paths.verdict_file);
  if (!before) {
    r.failures.push_back("recorded verdict unreadable (left untouched): " + before.error().message);
    return;
  }
  const std::string was = recorded_verdict_text(*before), now = verdict_text(r.verdict);
  if (verdict_differs(*before, r.verdict))
    r.failures.push_back("verdict differs from the one recorded with the golden (" + paths.verdict_file + "): " + was + " -> " + now);
  else
    r.golden_lines.push_back("verdict as recorded: " + now + " (recorded " + was + ")");
  for (const auto& lost : evidence_lost_since_golden(*before, r, paths.verdict_file)) r.failures.push_back(lost);
}

// How to get a golden for this machine, in one sentence.
std::string how_to_record(const RunResult& r) {
  const std::string n = std::to_string(kDefaultGoldenLaunches);
  if (r.launches >= static_cast<int>(kMinGoldenLaunches))
    return "review this run and keep it with `flashproof accept " + r.output_dir + "`, or record one with `flashproof run " +
           r.case_file + " --record-missing` (" + n + " launches)";
  return "record one with `flashproof run " + r.case_file + " --record-missing` (" + n + " launches), or run `flashproof run " +
         r.case_file + " --launches " + n + "` and keep that run with `flashproof accept RUNDIR`";
}

}  // namespace

std::vector<std::string> evidence_lost_since_golden(const RecordedVerdict& before, const RunResult& r,
                                                    const std::string& verdict_file) {
  std::vector<std::string> out;
  if (!before.levels_known) return out;
  for (const auto& lost : evidence_lost(before.levels_used, r.verdict.levels_used, r.verdict.levels_unavailable,
                                        "when the golden was recorded (" + verdict_file + ")", "in this run"))
    out.push_back(lost + (r.output_dir.empty() ? "" : "; if that is intended, keep it with `flashproof accept " + r.output_dir + "`"));
  return out;
}

void compare_kernel_set(const Golden& golden, const std::string& golden_file, RunResult& r) {
  if (golden.kernel_families.empty()) {
    if (!r.kernel_families.empty())
      r.golden_lines.push_back("kernels: the golden holds no attention kernel set (recorded without the kernel probe or before "
                               "kernel sets were kept); this run's: " + kernel_families_text(golden_kernel_families(r.kernel_families)) +
                               " (accept a run to keep it)");
    return;
  }
  if (r.kernel_families.empty()) {
    r.golden_lines.push_back("kernels: not compared: this run has no kernel tally (the golden's: " +
                             kernel_families_text(golden.kernel_families) + ")");
    return;
  }
  const KernelFamilyComparison kc = compare_kernel_families(golden.kernel_families, r.kernel_families);
  for (const auto& l : kc.lines()) r.golden_lines.push_back("kernels: " + l);
  for (const auto& f : kc.failures())
    r.failures.push_back(f + " (attention kernel set of " + golden_file + "; if that is intended, keep it with `flashproof accept " +
                         r.output_dir + "`)");
}

void compare_goldens(const GoldenCheckOptions& o, RunResult& r) {
  const std::string id = o.golden_id.empty() ? r.fingerprint_id : o.golden_id;
  const bool own = id == r.fingerprint_id;
  const GoldenPaths ref = golden_paths(o.golden_root, id, r.case_name);
  const GoldenPaths thr = o.timing_root.empty() ? ref : golden_paths(o.timing_root, id, r.case_name);
  r.golden_dir = thr.dir;
  std::error_code ec;
  const bool have_thresholds = fs::exists(thr.golden_file, ec);
  // An empty answers folder holds no answers (a recording the disk stopped leaves one): recorded again.
  const bool have_answers = fs::is_directory(ref.answers_dir, ec) && !fs::is_empty(ref.answers_dir, ec);
  const bool answers_only = o.record_missing_answers && !o.record_missing;
  const bool record_thresholds = own && o.record_missing && o.timing_root.empty() && !have_thresholds;
  const bool record_answers = own && (o.record_missing || o.record_missing_answers) && !have_answers;

  // Nothing to compare with and nothing to record: one failure says how to get a golden.
  if (!have_thresholds && !have_answers && !record_thresholds && !record_answers && !answers_only && o.timing_root.empty()) {
    r.golden_status = "missing";
    r.failures.push_back("no golden for this machine: " + thr.golden_file + " does not exist (fingerprint " + id + "); " +
                         how_to_record(r));
    return;
  }

  // Timing figures.
  if (answers_only && o.timing_root.empty()) {
    r.golden_status = "not compared";
    r.golden_lines.push_back("figures not compared: this run records and checks reference answers and the verdict only");
  } else if (have_thresholds) {
    compare_thresholds(thr, id, o.results_root, r);
  } else if (!o.timing_root.empty()) {
    r.golden_status = "not compared";
    r.golden_lines.push_back("figures not compared: no reviewed golden for fingerprint " + id + " (" + thr.golden_file +
                             " does not exist)");
  } else if (!record_thresholds) {
    r.golden_status = "missing";
    r.failures.push_back("no golden thresholds for this machine: " + thr.golden_file + " does not exist (fingerprint " + id +
                         "); " + how_to_record(r));
  }

  // Answers, and the verdict they were recorded with (the upgrade gate judges its baseline's itself).
  if (have_answers) compare_answers(ref, r);
  else if (!record_answers)
    r.failures.push_back("no reference answers for this machine: " + ref.answers_dir + " does not exist; record them with `flashproof run " +
                         r.case_file + " --record-missing-answers` (or all of a golden with --record-missing)");
  if (o.golden_id.empty()) compare_verdict(ref, r);

  // What is missing, from a passing run only.
  if (!record_thresholds && !record_answers) return;
  if (!r.failures.empty()) {
    r.golden_lines.push_back("nothing recorded: this run failed (a golden is only recorded from a passing run)");
    return;
  }
  auto plan = plan_golden(ref, r, nullptr, record_thresholds, record_answers, record_answers);
  if (!plan) {
    r.failures.push_back("recording the golden failed: " + plan.error().message);
    return;
  }
  if (auto st = write_golden_plan(ref, *plan); !st) {
    // Not a failed run: one that could not finish what it was asked (a full disk): incomplete, exit 2.
    r.failures.push_back("recording the golden failed: " + st.error().message);
    r.complete = false;  // a golden that cannot be written (a full disk): incomplete, exit 2, never a pass
    return;
  }
  if (record_thresholds) {
    r.golden_status = "recorded";
    r.golden_lines.push_back("recorded " + ref.golden_file + " from " + std::to_string(r.launches) +
                             (r.attached.empty() ? " launches" : " separated rounds of requests (attached: band source \"rounds\")"));
    // Kept, and said: a busy machine's golden is marked by its own load figure (golden/compare.h kBusyGoldenLimit).
    if (const std::string busy = busy_golden_text(*plan->golden); !busy.empty())
      r.golden_lines.push_back("BUSY RECORDING: " + ref.golden_file + " was " + busy);
  }
  if (record_answers) {
    r.golden_lines.push_back("recorded " + std::to_string(r.answers.size()) + " reference answers and the verdict (" +
                             verdict_text(r.verdict) + ") in " + ref.dir);
    for (auto& a : r.answers) a.reference = "recorded";
  }
}

std::string recorded_verdict_text(const std::string& state, const std::string& backend) {
  return state + (backend.empty() ? "" : " (" + backend + ")");
}

std::string recorded_verdict_text(const RecordedVerdict& v) {
  return recorded_verdict_text(v.state + (v.degraded == true && v.state == "active" ? ", degraded" : ""), v.backend);
}

bool verdict_differs(const RecordedVerdict& before, const RunVerdict& now) {
  return before.state != to_string(now.activity) || fused_devices_differ(before.fused_backends, now.fused_backends) ||
         (before.degraded && *before.degraded != now.degraded.has_value());
}

}  // namespace fp
