// flashproof fingerprint [--runtime NAME] [--json]: what identifies this machine and runtime,
// i.e. the folder name of its goldens (golden/<id>/).
#include <iostream>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "golden/fingerprint.h"
#include "runtime/adapter.h"
#include "runtime/launcher.h"
#include "util/text.h"

namespace fp {

namespace {

const char* kFingerprintUsageText =
    "usage: flashproof fingerprint [--runtime NAME] [--json]\n"
    "Prints the fingerprint id of this machine with that runtime: the folder golden/<id>/.\n";

}  // namespace

int fingerprint_command(int argc, char** argv) {
  std::string runtime = "llama-server";
  bool as_json = false;
  Args args("fingerprint", argc, argv, kFingerprintUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "--runtime" && args.has_value()) {
      runtime = args.value();
    } else if (a == "--json") {
      as_json = true;
    } else if (a == "-h" || a == "--help") {
      std::cout << kFingerprintUsageText;
      return 0;
    } else {
      args.brief_usage_error("unknown argument " + quote(a) + "; valid: --runtime NAME, --json");
    }
  }
  auto adapter = load_adapter(runtime);
  if (!adapter) {
    std::cerr << "flashproof fingerprint: " << adapter.error().message << "\n";
    return 2;
  }
  auto cmd = locate_runtime(*adapter);
  if (!cmd) {
    std::cerr << "flashproof fingerprint: " << cmd.error().message << "\n";
    return 125;
  }
  auto version = runtime_version(*cmd, *adapter, "/tmp");
  if (!version) {
    std::cerr << "flashproof fingerprint: " << version.error().message << "\n";
    return 2;
  }
  Fingerprint f = machine_fingerprint();
  f.runtime = runtime;
  f.runtime_version = version->text;
  f.runtime_build = version->build;
  if (as_json) std::cout << f.to_json().dump(2) << "\n";
  else std::cout << f.id() << "\n";
  return 0;
}

}  // namespace fp
