// flashproof gpus: the GPUs NVML sees, the CTest resource spec for them, and the GPUs CTest gave
// the current test.
#include <cstdio>
#include <iostream>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "measure/nvml.h"
#include "runtime/ctest_gpus.h"
#include "util/text.h"

namespace fp {
namespace {

const char* kGpusUsageText =
    "usage: flashproof gpus [--resource-spec [FILE] | --assigned]\n"
    "Lists the GPUs NVML sees (index, name, memory, UUID).\n\n"
    "  --resource-spec [FILE]  write CTest's resource spec for them (one \"gpus\" entry per GPU, id =\n"
    "                          NVML index, 1 slot) to FILE (default: stdout), for\n"
    "                          `ctest --resource-spec-file FILE -j N`: GPU cases declare RESOURCE_GROUPS\n"
    "                          gpus:1, so N cases run at once and never two on one GPU\n"
    "  --assigned              print the CUDA_VISIBLE_DEVICES a runtime started by this test would get\n"
    "                          from CTest (CTEST_RESOURCE_GROUP_<n>_GPUS), or \"none\"\n"
    "exit: 0 done, 1 no GPU or NVML error (no spec is written: CPU cases need none), 64 usage\n";

int list_gpus(const std::string& spec_file, bool want_spec) {
  auto nvml = Nvml::open();
  auto gpus = nvml ? nvml->gpus() : Result<std::vector<GpuInfo>>(nvml.error());
  if (!gpus) {
    std::cerr << "flashproof gpus: " << gpus.error().message << "\n";
    if (want_spec) std::cerr << "flashproof gpus: no resource spec written (CPU cases need none: run ctest without --resource-spec-file)\n";
    return 1;
  }
  if (gpus->empty()) {
    std::cerr << "flashproof gpus: NVML lists no GPU" << (want_spec ? "; no resource spec written" : "") << "\n";
    return 1;
  }
  if (!want_spec) {
    for (const auto& g : *gpus)
      std::printf("%u  %-24s %8.0f MiB  %s\n", g.index, g.name.c_str(), static_cast<double>(g.memory_total_bytes) / (1 << 20), g.uuid.c_str());
    return 0;
  }
  const std::string spec = ctest_resource_spec_json(*gpus);
  if (spec_file.empty() || spec_file == "-") {
    std::cout << spec;
    return 0;
  }
  if (auto st = write_file_atomic(spec_file, spec); !st) {
    std::cerr << "flashproof gpus: " << st.error().message << "\n";
    return 1;
  }
  std::cerr << "flashproof gpus: wrote " << spec_file << " (" << gpus->size() << " GPU" << (gpus->size() == 1 ? "" : "s")
            << "); use: ctest --resource-spec-file " << spec_file << " -j " << gpus->size() << "\n";
  return 0;
}

}  // namespace

int gpus_command(int argc, char** argv) {
  bool want_spec = false, assigned = false;
  std::string spec_file;
  Args args("gpus", argc, argv, kGpusUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kGpusUsageText;
      return 0;
    } else if (a == "--resource-spec") {
      want_spec = true;
      if (auto file = args.optional_value()) spec_file = *file;
    } else if (a == "--assigned") {
      assigned = true;
    } else {
      args.usage_error("unknown argument " + quote(a));
    }
  }
  if (assigned && want_spec) {
    std::cerr << "flashproof gpus: --assigned and --resource-spec are separate questions; ask one\n";
    return 64;
  }
  if (assigned) {
    auto ids = ctest_gpu_ids();
    if (!ids) {
      std::cerr << "flashproof gpus: " << ids.error().message << "\n";
      return 1;
    }
    std::cout << ids->value_or("none") << "\n";
    return 0;
  }
  return list_gpus(spec_file, want_spec);
}

}  // namespace fp
