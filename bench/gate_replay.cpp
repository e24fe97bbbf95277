// Re-judges a recorded side-by-side gate run (its gate.json) with the statistics of this build, look
// by look as the gate would have looked (flow/paired/gate_replay.h), without launching anything.
// --guard FIGURE=EFFECT adds a guard
// (e.g. itl_requests_ms=0.05 on a run recorded before the gate guarded the full requests' decode).
// Prints every look's gated figures and guards, and the outcome. Recorded figures: bench/README.md section 3.
// usage: gate_replay GATE.json [--guard FIGURE=EFFECT]...
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "flow/paired/gate_replay.h"

int main(int argc, char** argv) {
  const char* usage = "usage: gate_replay GATE.json [--guard FIGURE=EFFECT]...\n";
  if (argc < 2) {
    std::fprintf(stderr, "%s", usage);
    return 64;
  }
  std::map<std::string, double> guards;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--guard" && i + 1 < argc) {
      const std::string g = argv[++i];
      const size_t eq = g.find('=');
      char* end = nullptr;
      const double effect = eq == std::string::npos ? 0 : std::strtod(g.c_str() + eq + 1, &end);
      if (eq == std::string::npos || eq == 0 || !end || *end != '\0' || !(effect > 0 && effect < 1)) {
        std::fprintf(stderr, "--guard %s: expected FIGURE=EFFECT with EFFECT a fraction between 0 and 1, e.g. itl_requests_ms=0.05\n", g.c_str());
        return 64;
      }
      guards[g.substr(0, eq)] = effect;
    } else {
      std::fprintf(stderr, "%s: unknown option\n%s", a.c_str(), usage);
      return 64;
    }
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "%s: cannot be read\n", argv[1]);
    return 66;
  }
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  auto r = fp::replay_gate(j, guards);
  if (!r) {
    std::fprintf(stderr, "%s: %s\n", argv[1], r.error().message.c_str());
    return 65;
  }
  for (const auto& line : r->looks) std::printf("  %s\n", line.c_str());
  std::printf("%s: %s after %d of %d recorded blocks\n", argv[1], r->outcome.c_str(), r->blocks, r->recorded_blocks);
  return 0;
}
