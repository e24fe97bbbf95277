#include "cli/explain_command.h"

#include <algorithm>
#include <iostream>
#include <sstream>
#include <map>
#include <string>

#include "cli/args.h"
#include "evidence/device_timings.h"
#include "evidence/kernel_set.h"
#include "evidence/kernel_tally.h"
#include "evidence/log_records.h"
#include "evidence/log_scan.h"
#include "evidence/placement.h"
#include "evidence/runtime_signatures.h"
#include "evidence/verdict.h"
#include "model/gguf_reader.h"
#include "util/text.h"
#include "util/utf8.h"
#include "runtime/runtime_data.h"

namespace fp {
namespace {

constexpr int kExitActive = 0;
constexpr int kExitNotActive = 1;
constexpr int kExitNoEvidence = 2;

const char* const kExplainUsageText =
    "usage: flashproof explain --runtime NAME --log FILE [--kernels FILE] [--expect-backend NAMES]\n"
    "                          [--model FILE.gguf | --layers N] [--require LEVELS]\n"
    "  --runtime         runtime data file stem, e.g. llama-server\n"
    "  --log             the runtime's whole log, plain or gzipped\n"
    "  --kernels         kernel tally from the CUPTI probe (launches, gpu ns, [device,] name per line);\n"
    "                    without it, a backend's own op timings in the log are level 3 (ggml-vulkan's\n"
    "                    GGML_VK_PERF_LOGGER blocks)\n"
    "                    for DIR/kernels.tsv the per-process tallies DIR/kernels.<pid>.tsv are merged when present\n"
    "  --expect-backend  backends the fused op must run on, each of them and no other: CUDA0, CPU,\n"
    "                    CUDA0,CUDA1, or all-gpus (every GPU backend the log names)\n"
    "  --model           the model the log ran: its attention layer count (GGUF block_count) checks that\n"
    "                    the placement counts are whole (not cut off); --layers N gives the count itself\n"
    "  --require         levels that must yield an answer, e.g. log,placement,kernels (default: none;\n"
    "                    the log alone never proves active)\n"
    "exit: 0 active, 1 not active or levels disagree, 2 no evidence, 64 usage error\n";

// Parses "--name value" and "--name=value" pairs.
bool parse_args(Args& args, std::map<std::string, std::string>& opts, std::string& bad) {
  const std::map<std::string, bool> known = {
      {"--runtime", true}, {"--log", true},   {"--kernels", true}, {"--expect-backend", true},
      {"--model", true},   {"--layers", true}, {"--require", true}};
  args.accept_inline_values();
  while (args.next()) {
    const std::string arg = args.arg();
    if (!known.count(arg)) {
      bad = "unknown argument " + quote(args.given());
      return false;
    }
    if (!args.has_value()) {
      bad = "argument " + arg + " needs a value";
      return false;
    }
    const std::string value = args.value();
    if (value.empty()) {
      bad = "argument " + arg + " has an empty value";
      return false;
    }
    if (opts.count(arg)) {
      bad = "argument " + arg + " given twice";
      return false;
    }
    opts[arg] = value;
  }
  for (const char* required : {"--runtime", "--log"})
    if (!opts.count(required)) {
      bad = std::string("missing required argument ") + required;
      return false;
    }
  if (opts.count("--model") && opts.count("--layers")) {
    bad = "give --model or --layers, not both";
    return false;
  }
  return true;
}

int exit_code(const Verdict& v) {
  if (v.activity == Activity::NoEvidence) return kExitNoEvidence;
  return verdict_as_expected(v, /*expect_fused=*/true) ? kExitActive : kExitNotActive;
}

// --require: a comma list of level names.
bool parse_levels(const std::string& text, std::vector<std::string>& out, std::string& bad) {
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    item = trim(item);
    const auto& names = evidence_level_names();
    if (std::find(names.begin(), names.end(), item) == names.end()) {
      bad = "--require " + quote(text) + ": " + quote(item) + " is not a level; valid: " + join(names, ", ");
      return false;
    }
    out.push_back(item);
  }
  return true;
}

}  // namespace

int explain_command(int argc, char** argv) {
  // main() passes the arguments after the command; tests may pass "explain" first.
  const int first = argc > 0 && std::string(argv[0]) == "explain" ? 1 : 0;
  // Usage errors return 64 rather than exit: the tests run explain in-process.
  Args args("explain", argc - first, argv + first, kExplainUsageText);
  auto usage_error = [&](const std::string& message) { return args.print_usage_error(message); };
  std::map<std::string, std::string> opts;
  std::string bad;
  if (!parse_args(args, opts, bad)) return usage_error(bad);

  auto sigs = load_runtime_signatures(opts["--runtime"]);
  if (!sigs) return usage_error("--runtime " + quote(opts["--runtime"]) + ": " + sigs.error().message);
  auto text = read_text_file(opts["--log"]);
  if (!text) return usage_error("--log: " + text.error().message);

  std::vector<LogRecord> records = split_records(*text, *sigs);
  LogScan log = scan_log(records, *sigs);
  Placement placement = scan_placement(records, *sigs);
  VerdictInput in = verdict_input(*sigs);
  in.log = &log;
  in.placement = &placement;
  in.expect_backend = opts.count("--expect-backend") ? opts["--expect-backend"] : "";
  if (opts.count("--require") && !parse_levels(opts["--require"], in.required, bad)) return usage_error(bad);
  Facts known;  // for the cause rules (evidence/causes.h)
  if (opts.count("--model")) {
    auto facts = read_model_facts(opts["--model"]);
    if (!facts) return usage_error("--model: " + facts.error().message);
    known["head_size"] = std::to_string(facts->head_size_k);
    known["layers"] = std::to_string(facts->layers);
    in.model_layers = facts->layers;
    in.head_size = facts->head_size_k;  // a head size without the vector kernel: evidence.degraded_kernels
    in.layers_from = opts["--model"] + " (" + facts->architecture + ".block_count)";
  } else if (opts.count("--layers")) {
    const std::string& n = opts["--layers"];
    if (n.find_first_not_of("0123456789") != std::string::npos || n.size() > 6 || std::stoi(n) < 1)
      return usage_error("--layers " + quote(n) + ": expected the model's attention layer count, a whole number 1..999999");
    in.model_layers = std::stoi(n);
    in.layers_from = "--layers";
  }
  KernelSummary kernels;
  if (opts.count("--kernels")) {
    auto tally = read_process_tallies(opts["--kernels"]);  // DIR/kernels.tsv also reads DIR/kernels.<pid>.tsv
    if (!tally) return usage_error("--kernels: " + tally.error().message);
    kernels = classify_kernels(*tally, *sigs);
    in.kernels = &kernels;
  } else if (sigs->device_timings) {
    // A backend's own op timings in the log (evidence/device_timings.h): level 3 for Vulkan.
    KernelTally t = device_timing_tally(*text, *sigs->device_timings, opts["--log"]);
    if (!t.kernels.empty()) {
      kernels = classify_kernels(t, *sigs);
      in.kernels = &kernels;
      in.gpu_backend_pattern = sigs->device_timings->backend.pattern;
    }
  }
  if (in.head_size == 0) in.head_size = head_size_from_log(records, sigs->causes);  // without --model
  Verdict v = decide(in);
  std::cout << "runtime: " << sigs->runtime << " (" << sigs->source << ")\n"
            << "log: " << opts["--log"] << " (" << records.size() << " records)\n";
  if (in.kernels)
    std::cout << "kernels: " << kernels.source
              << (kernels.processes > 1 ? " (" + std::to_string(kernels.processes) + " processes)" : std::string()) << "\n"
              << "attention kernel families: " << family_shares_text(family_shares(kernels)) << "\n";
  std::cout << format_verdict(v);
  if (!verdict_as_expected(v, /*expect_fused=*/true)) {
    // Why, where the runtime data knows: facts from the model, the expectation and the log.
    for (const auto& [k, value] : verdict_facts(v)) known[k] = value;
    Facts facts = gather_facts(known, {}, records, sigs->causes);
    auto causes = match_causes(sigs->causes, facts, records);
    for (const auto& c : causes) std::cout << "likely cause: " << c.text() << "\n";
    if (causes.empty()) std::cout << causes_text(causes, facts) << "\n";
  }
  return exit_code(v);
}

}  // namespace fp
