#include "cli/explain_command.h"

#include <iostream>
#include <map>
#include <string>

#include "evidence/kernel_tally.h"
#include "evidence/log_records.h"
#include "evidence/log_scan.h"
#include "evidence/placement.h"
#include "evidence/runtime_signatures.h"
#include "evidence/verdict.h"
#include "util/text.h"

namespace fp {
namespace {

constexpr int kExitActive = 0;
constexpr int kExitNotActive = 1;
constexpr int kExitNoEvidence = 2;
constexpr int kExitUsage = 64;

const char* const kUsage =
    "usage: flashproof explain --runtime NAME --log FILE [--kernels FILE] [--expect-backend NAME]\n"
    "  --runtime         runtime data file stem, e.g. llama-server\n"
    "  --log             the runtime's whole log, plain or gzipped\n"
    "  --kernels         kernel tally from the CUPTI probe (launches, gpu ns, name per line)\n"
    "  --expect-backend  backend the fused op must run on, e.g. CUDA0 or CPU\n"
    "exit: 0 active, 1 not active or levels disagree, 2 no evidence, 64 usage error\n";

int usage_error(const std::string& message) {
  std::cerr << "flashproof explain: " << message << "\n" << kUsage;
  return kExitUsage;
}

// Parses "--name value" and "--name=value" pairs.
bool parse_args(int argc, char** argv, std::map<std::string, std::string>& opts, std::string& bad) {
  const std::map<std::string, bool> known = {
      {"--runtime", true}, {"--log", true}, {"--kernels", true}, {"--expect-backend", true}};
  // main() passes the arguments after the command; tests may pass "explain" first.
  int first = argc > 0 && std::string(argv[0]) == "explain" ? 1 : 0;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    size_t eq = arg.find('=');
    bool inline_value = starts_with(arg, "--") && eq != std::string::npos;
    if (inline_value) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    if (!known.count(arg)) {
      bad = "unknown argument " + quote(argv[i]);
      return false;
    }
    if (!inline_value) {
      if (i + 1 >= argc) {
        bad = "argument " + arg + " needs a value";
        return false;
      }
      value = argv[++i];
    }
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
  return true;
}

int exit_code(const Verdict& v) {
  if (v.activity == Activity::NoEvidence) return kExitNoEvidence;
  if (v.activity == Activity::Active && !v.disagreement) return kExitActive;
  return kExitNotActive;
}

}  // namespace

int explain_command(int argc, char** argv) {
  std::map<std::string, std::string> opts;
  std::string bad;
  if (!parse_args(argc, argv, opts, bad)) return usage_error(bad);

  auto sigs = load_runtime_signatures(opts["--runtime"]);
  if (!sigs) return usage_error("--runtime " + quote(opts["--runtime"]) + ": " + sigs.error().message);
  auto text = read_file(opts["--log"]);
  if (!text) return usage_error("--log: " + text.error().message);

  std::vector<LogRecord> records = split_records(*text, *sigs);
  LogScan log = scan_log(records, *sigs);
  Placement placement = scan_placement(records, *sigs);
  VerdictInput in;
  in.log = &log;
  in.placement = &placement;
  in.expect_backend = opts.count("--expect-backend") ? opts["--expect-backend"] : "";
  in.hints = sigs->hints;
  KernelSummary kernels;
  if (opts.count("--kernels")) {
    auto tally = read_kernel_tally(opts["--kernels"]);
    if (!tally) return usage_error("--kernels: " + tally.error().message);
    kernels = classify_kernels(*tally, *sigs);
    in.kernels = &kernels;
  }
  Verdict v = decide(in);
  std::cout << "runtime: " << sigs->runtime << " (" << sigs->source << ")\n"
            << "log: " << opts["--log"] << " (" << records.size() << " records)\n";
  if (in.kernels) std::cout << "kernels: " << opts["--kernels"] << "\n";
  std::cout << format_verdict(v);
  return exit_code(v);
}

}  // namespace fp
