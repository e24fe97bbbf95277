// Re-judges a recorded side-by-side gate run (its gate.json) with the statistics of this build, look
// by look as the gate would have looked (flow/paired/gate_replay.h), without launching anything.
// --no-machine drops the machine-speed reference from every launch (the statistics before the
// machine term), so both can be compared on the same launches. Prints every look's gated figures
// and the outcome. Recorded figures: bench/README.md section 3.
// usage: gate_replay GATE.json [--no-machine]
#include <cstdio>
#include <fstream>
#include <string>

#include "flow/paired/gate_replay.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gate_replay GATE.json [--no-machine]\n");
    return 64;
  }
  const bool machine = !(argc > 2 && std::string(argv[2]) == "--no-machine");
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "%s: cannot be read\n", argv[1]);
    return 66;
  }
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  auto r = fp::replay_gate(j, machine);
  if (!r) {
    std::fprintf(stderr, "%s: %s\n", argv[1], r.error().message.c_str());
    return 65;
  }
  for (const auto& line : r->looks) std::printf("  %s\n", line.c_str());
  std::printf("%s: %s after %d of %d recorded blocks (%s)\n", argv[1], r->outcome.c_str(), r->blocks, r->recorded_blocks,
              machine ? "machine term where it fits" : "no machine term");
  return 0;
}
