#include "cli/make_model_command.h"

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/suite_option.h"
#include "model/model_recipe.h"
#include "util/sha256.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

const char* kMakeModelUsageText =
    "usage: flashproof make-model RECIPE.json... [--record] [--root DIR]\n"
    "Writes each recipe's seeded random-weight llama GGUF at its \"output\", a path inside the suite\n"
    "(--root DIR, else the nearest folder holding flashproof-suite.json from here or the recipe up),\n"
    "and checks its sha256 against the recipe's; --record writes the sha256 into the recipe.\n";

Status record_sha(const std::string& recipe_path, const std::string& sha) {
  FP_TRY(std::string text, read_file(recipe_path));
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
  j["sha256"] = sha;
  return write_file_atomic(recipe_path, j.dump(2) + "\n");
}

}  // namespace

int make_model_file(const std::string& recipe_path, const std::string& root, bool record) {
  auto recipe = load_model_recipe(recipe_path);
  if (!recipe) {
    std::cerr << "flashproof make-model: " << recipe.error().message << "\n";
    return 1;
  }
  const fs::path out = fs::path(root) / recipe->output;
  auto sha_written = write_recipe_model(*recipe, out.string());
  if (!sha_written) {
    std::cerr << "flashproof make-model: " << sha_written.error().message << "\n";
    return 1;
  }
  const std::string& sha = *sha_written;
  std::error_code size_ec;
  std::cout << recipe->name << ": " << out.string() << " " << fs::file_size(out, size_ec) << " bytes sha256 " << sha << "\n";
  if (record) {
    if (auto st = record_sha(recipe_path, sha); !st) {
      std::cerr << "flashproof make-model: " << st.error().message << "\n";
      return 1;
    }
    return 0;
  }
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
  std::vector<std::string> recipes;
  Args args("make-model", argc, argv, kMakeModelUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "--record") {
      record = true;
    } else if (a == "--root" && args.has_value()) {
      root = args.value();
    } else if (a == "-h" || a == "--help") {
      std::cout << kMakeModelUsageText;
      return 0;
    } else if (args.is_option()) {
      args.brief_usage_error("unknown option " + quote(a) + "; valid: --record, --root DIR");
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
  for (const auto& r : recipes) rc = std::max(rc, make_model_file(r, suite->root, record));
  return rc;
}

}  // namespace fp
