#include "flow/ab/answer_differences.h"

#include <map>

#include "flow/ab/answer_classification.h"
#include "flow/passes/answers_pass.h"
#include "flow/passes/progress.h"
#include "runtime/process.h"
#include "util/text.h"

namespace fp {

void classify_answer_differences(const CaseContext& off, const LaunchPlacement& off_at, const CaseContext& on, const LaunchPlacement& on_at,
                                 AbRun& r, bool quiet) {
  std::vector<std::string> differ;
  for (const auto& a : r.answers)
    if (!a.identical) differ.push_back(a.prompt_id);
  if (differ.empty()) return;
  auto all_unclassified = [&](UnclassifiedWhy why, const std::string& detail) {
    for (auto& a : r.answers)
      if (!a.identical) a.difference.why = why, a.difference.detail = detail;
  };
  if (!off.adapter.token_probabilities) {
    all_unclassified(UnclassifiedWhy::not_asked, "");
    r.off.answers_pass = r.on.answers_pass = "not run: the runtime data names no way to ask for token probabilities";
    return;
  }
  // Both arms' passes or neither: one that cannot run leaves the differences unclassified.
  const std::string not_run = "not run: " + std::to_string(differ.size()) + " prompts answered differently, ";
  r.off.answers_pass = r.on.answers_pass = not_run + "not classified";
  std::map<std::string, AnswersPass> passes;
  for (const auto* ctx : {&off, &on}) {
    AbArm& arm = ctx == &off ? r.off : r.on;
    if (interrupted()) {
      arm.answers_pass = "not run: " + interrupted_text();
      all_unclassified(UnclassifiedWhy::pass_failed, "flag " + arm.name + ": not run: interrupted");
      return;
    }
    progress_line(quiet, ctx->c.name + " ab",
                  "answers pass, flag " + arm.name + " (" + std::to_string(differ.size()) + " prompts answered differently)");
    auto pass = run_answers_pass(*ctx, ctx == &off ? off_at : on_at, differ);
    if (!pass) {
      arm.answers_pass = "failed: " + pass.error().message;
      if (ctx == &off) r.on.answers_pass = not_run + "flag off's answers pass failed";
      all_unclassified(UnclassifiedWhy::pass_failed, "flag " + arm.name + ": " + pass.error().message);
      return;
    }
    // The log as the run's folder names it, so that ab.txt carries no folder of its own.
    std::string log = pass->log_path;
    if (starts_with(log, r.output_dir + "/")) log.erase(0, r.output_dir.size() + 1);
    arm.answers_pass = std::to_string(differ.size()) + " prompts (" + join(differ, ", ") + "), log " + log +
                       (pass->errors.empty() ? "" : "; " + join(pass->errors, "; "));
    passes[arm.name] = std::move(*pass);
  }
  for (auto& a : r.answers) {
    if (a.identical) continue;
    auto po = passes["off"].answers.find(a.prompt_id), pn = passes["on"].answers.find(a.prompt_id);
    if (po == passes["off"].answers.end() || pn == passes["on"].answers.end()) {
      a.difference.why = UnclassifiedWhy::pass_failed;
      a.difference.detail = "no answer from flag " + std::string(po == passes["off"].answers.end() ? "off" : "on") + "'s pass";
      continue;
    }
    a.difference = classify_answer_difference(r.off.answers.at(a.prompt_id), r.on.answers.at(a.prompt_id), po->second, pn->second);
  }
}

}  // namespace fp
