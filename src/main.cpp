// flashproof: subcommand dispatch only.
#include <csignal>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include <signal.h>
#include <unistd.h>

#include "cli/commands.h"

namespace {

struct Command {
  const char* name;
  int (*fn)(int, char**);
  const char* summary;
};

const Command kCommands[] = {
    {"run", fp::run_command, "run a case: evidence pass, timed runs, goldens, answers, result file"},
    {"explain", fp::explain_command, "verdict for a runtime log you already have (plus a kernel tally)"},
    {"make-model", fp::make_model_command, "write the seeded random-weight GGUF models from their recipes"},
    {"ab", fp::ab_command, "the case with the flag on and off, interleaved: differences, mechanism, answers"},
    {"accept", fp::accept_command, "review a run against the goldens and write what you accept"},
    {"fingerprint", fp::fingerprint_command, "print this machine's fingerprint id (its golden folder)"},
    {"diff", fp::diff_command, "compare two results (or the last two runs): verdicts first, figures, answers"},
    {"gate", fp::gate_command, "upgrade gate: run every case against the previous fingerprint's goldens"},
    {"history", fp::history_command, "list the runs kept per case (latest and previous)"},
    {"report", fp::report_command, "one self-contained HTML report: verdicts, figures vs goldens, A/B plots, trends"},
    {"init", fp::init_command, "make a suite of your own in a folder: cases, goldens, prompts, CMakeLists.txt"},
    {"gpus", fp::gpus_command, "list the GPUs; write the CTest resource spec for them (--resource-spec)"},
    {"matrix", fp::matrix_command, "support matrix: the case per KV type, flag, context, head size: verdict, kernels, speed"},
    {"new-case", fp::new_case_command, "write a case from your launch command, or for a server you did not start"},
    {"support", fp::support_command, "ask the runtime's own ggml backends which shapes and K/V types take fused attention"},
};

void usage(std::ostream& out) {
  out << "flashproof " FLASHPROOF_VERSION " - prove fused attention really ran, time it, diff the answers\n\n"
         "usage: flashproof COMMAND [ARGS]   (flashproof COMMAND --help for more)\n\ncommands:\n";
  for (const auto& c : kCommands) out << "  " << c.name << std::string(std::strlen(c.name) < 13 ? 13 - std::strlen(c.name) : 1, ' ') << c.summary << "\n";
}

}  // namespace

// What escaped a command (a bug: expected failures are values) ends the harness with exit 2 and the
// message, never with abort's 134: CI and a nightly read 134 as a crash of unknown cause.
// std::terminate (an exception leaving a thread, a noexcept function throwing) cannot unwind: its
// handler raises SIGTERM, whose cleanup handler (runtime/process.h), where installed, kills every
// live runtime group.
[[noreturn]] void on_terminate() {
  std::string what = "unknown";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
  }
  std::cerr << "flashproof: internal error (terminate): " << what << "\n";
  std::cerr.flush();
  struct sigaction current {};
  if (::sigaction(SIGTERM, nullptr, &current) == 0 && current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN)
    std::raise(SIGTERM);
  ::_exit(2);
}

int dispatch(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    usage(std::cout);
    return argc < 2 ? 64 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::cout << "flashproof " FLASHPROOF_VERSION "\n";
    return 0;
  }
  for (const auto& c : kCommands)
    if (argv[1] == std::string(c.name)) return c.fn(argc - 2, argv + 2);
  std::cerr << "flashproof: unknown command \"" << argv[1] << "\"\n\n";
  usage(std::cerr);
  return 64;
}

int main(int argc, char** argv) {
  std::set_terminate(on_terminate);
  try {
    return dispatch(argc, argv);
  } catch (const std::exception& e) {  // unwound: every Process destructor stopped its runtime
    std::cerr << "flashproof " << (argc > 1 ? argv[1] : "") << ": internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "flashproof " << (argc > 1 ? argv[1] : "") << ": internal error: an unknown exception\n";
  }
  return 2;
}
