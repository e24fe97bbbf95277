#include "cli/make_model_command.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/suite_option.h"
#include "model/model_recipe.h"
#include "util/format_number.h"
#include "util/sha256.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

const char* kMakeModelUsageText =
    "usage: flashproof make-model RECIPE.json... [--record] [--weight-type TYPE] [--threads N] [--root DIR]\n"
    "Writes each recipe's seeded random-weight llama GGUF at its \"output\", a path inside the suite\n"
    "(--root DIR, else the nearest folder holding flashproof-suite.json from here or the recipe up),\n"
    "and checks its sha256 against the recipe's; --record writes the sha256 into the recipe.\n"
    "The file is streamed: rows computed on N threads (default: one per core), written in order and\n"
    "hashed as they go, in at most 128 MiB of tensor data in memory whatever the model's size; the\n"
    "bytes are the same on every machine and for every N.\n"
    "  --weight-type TYPE  the matrices as f16, q8_0, q4_0 or q4_k instead of the recipe's \"weight_type\":\n"
    "                      written beside it as <output>-<TYPE>.gguf (no sha256 checked or recorded)\n"
    "  --threads N         workers that compute the rows (default: one per core)\n";

// This process's peak resident memory so far (getrusage: KiB on Linux).
long peak_rss_mib() {
  struct rusage u {};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

Status record_sha(const std::string& recipe_path, const std::string& sha) {
  FP_TRY(std::string text, read_file(recipe_path));
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
  j["sha256"] = sha;
  return write_file_atomic(recipe_path, j.dump(2) + "\n");
}

}  // namespace

int make_model_file(const std::string& recipe_path, const std::string& root, bool record, const std::optional<WeightType>& weight_type,
                    unsigned threads) {
  auto recipe = load_model_recipe(recipe_path);
  if (!recipe) {
    std::cerr << "flashproof make-model: " << recipe.error().message << "\n";
    return 1;
  }
  if (weight_type) recipe = recipe_with_weight_type(*recipe, *weight_type);
  const fs::path out = fs::path(root) / recipe->output;
  const auto t0 = std::chrono::steady_clock::now();
  auto sha_written = write_recipe_model(*recipe, out.string(), threads);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!sha_written) {
    std::cerr << "flashproof make-model: " << sha_written.error().message << "\n";
    return 1;
  }
  const std::string& sha = *sha_written;
  std::error_code size_ec;
  const uintmax_t bytes = fs::file_size(out, size_ec);
  std::cout << recipe->name << ": " << out.string() << " " << bytes << " bytes sha256 " << sha << " ("
            << fixed(seconds, 1) << " s, " << fixed(static_cast<double>(bytes) / 1e6 / std::max(seconds, 1e-6), 0)
            << " MB/s, peak RSS " << peak_rss_mib() << " MiB)\n";
  if (record) {
    if (auto st = record_sha(recipe_path, sha); !st) {
      std::cerr << "flashproof make-model: " << st.error().message << "\n";
      return 1;
    }
    return 0;
  }
  if (weight_type) return 0;  // a variant: nothing recorded to check against
  if (!recipe->sha256.empty() && recipe->sha256 != sha) {
    std::cerr << "flashproof make-model: " << recipe_path << ": field \"sha256\" = " << recipe->sha256
              << " but the generator produced " << sha
              << " (the generator changed: re-run with --record after review)\n";
    return 1;
  }
  return 0;
}

int make_model_command(int argc, char** argv) {
  bool record = false;
  std::string root;
  std::optional<WeightType> weight_type;
  unsigned threads = 0;
  std::vector<std::string> recipes;
  Args args("make-model", argc, argv, kMakeModelUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "--record") {
      record = true;
    } else if (a == "--root" && args.has_value()) {
      root = args.value();
    } else if (a == "--weight-type" && args.has_value()) {
      auto t = parse_weight_type(args.value());
      if (!t) args.usage_error("--weight-type " + t.error().message);
      weight_type = *t;
    } else if (a == "--threads" && args.has_value()) {
      const std::string v = args.value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 1 || n > 1024) args.usage_error("--threads " + quote(v) + ": expected a whole number from 1 to 1024");
      threads = static_cast<unsigned>(n);
    } else if (a == "-h" || a == "--help") {
      std::cout << kMakeModelUsageText;
      return 0;
    } else if (args.is_option()) {
      args.brief_usage_error("unknown option " + quote(a) + "; valid: --record, --weight-type TYPE, --threads N, --root DIR");
    } else {
      recipes.push_back(a);
    }
  }
  if (recipes.empty()) {
    std::cerr << "flashproof make-model: name at least one recipe, e.g. fixtures/models/tiny.json\n";
    return 64;
  }
  auto suite = command_suite(root, recipes);
  if (!suite) {
    std::cerr << "flashproof make-model: " << suite.error().message << "\n";
    return 2;
  }
  int rc = 0;
  if (record && weight_type) {
    std::cerr << "flashproof make-model: --record and --weight-type together: the recipe records its own weight type's sha256 only\n";
    return 64;
  }
  for (const auto& r : recipes) rc = std::max(rc, make_model_file(r, suite->root, record, weight_type, threads));
  return rc;
}

}  // namespace fp
