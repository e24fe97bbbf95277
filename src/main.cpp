// flashproof: subcommand dispatch only.
#include <cstring>
#include <iostream>
#include <string>

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
    {"accept", fp::accept_command, "review a run against the goldens and write what you accept"},
};

void usage(std::ostream& out) {
  out << "flashproof " FLASHPROOF_VERSION " - prove fused attention really ran, time it, diff the answers\n\n"
         "usage: flashproof COMMAND [ARGS]   (flashproof COMMAND --help for more)\n\ncommands:\n";
  for (const auto& c : kCommands) out << "  " << c.name << std::string(12 - std::strlen(c.name), ' ') << c.summary << "\n";
}

}  // namespace

int main(int argc, char** argv) {
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
