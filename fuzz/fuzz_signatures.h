// Shared by the fuzz targets that read runtime logs and kernel tallies: the real signatures of every
// runtime data file (llama-server, vLLM), loaded once; a data file that does not load aborts the run.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "evidence/runtime_signatures.h"
#include "util/text.h"

namespace fp::fuzz {

inline const std::vector<RuntimeSignatures>& signatures() {
  static const std::vector<RuntimeSignatures> all = [] {
    std::vector<RuntimeSignatures> v;
    for (const char* runtime : {"llama-server", "vllm"}) {
      const std::string path = std::string(FLASHPROOF_SOURCE_DIR) + "/src/runtime/data/" + runtime + ".json";
      auto text = read_file(path);
      auto s = text ? parse_runtime_signatures(*text, path, runtime) : Result<RuntimeSignatures>(text.error());
      if (!s) {
        std::fprintf(stderr, "fuzz: %s\n", s.error().message.c_str());
        std::abort();
      }
      v.push_back(std::move(*s));
    }
    return v;
  }();
  return all;
}

}  // namespace fp::fuzz
