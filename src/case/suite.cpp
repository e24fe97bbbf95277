#include "case/suite.h"

#include <filesystem>

#include "util/json_fields.h"
#include "util/shipped_data.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

fs::path absolute_normal(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return (ec ? fs::path(p) : a).lexically_normal();
}

// A folder field of the marker: a relative path that stays inside the suite.
Result<std::string> folder(const JsonFields& f, const std::string& key, const fs::path& root) {
  FP_TRY(std::string p, f.string_or(key, key));
  const fs::path rel = fs::path(p).lexically_normal();
  if (p.empty() || rel.is_absolute() || rel.empty() || *rel.begin() == "..")
    return f.error(key, quote(p) + ": expected a folder inside the suite, relative to " + root.string() + " (e.g. \"" + key + "\")");
  return (root / rel).lexically_normal().string();
}

bool has_marker(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kSuiteMarker, ec);
}

}  // namespace

std::vector<std::string> Suite::prompt_dirs() const { return {prompts, shipped_data_dir() + "/prompts"}; }

Result<Suite> load_suite(const std::string& root_arg) {
  const fs::path root = absolute_normal(root_arg);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return make_error("suite root " + quote(root.string()) + ": not a folder");
  Suite s;
  s.root = root.string();
  nlohmann::json j = nlohmann::json::object();
  if (has_marker(root)) {
    s.marker = (root / kSuiteMarker).string();
    FP_TRY(std::string text, read_file(s.marker));
    FP_TRY(j, parse_json_object(text, s.marker));
  }
  JsonFields f(j, s.marker.empty() ? root.string() : s.marker);
  FP_TRY_STATUS(f.only_keys({"comment", "flashproof_suite", "cases", "prompts", "golden", "results"}));
  if (f.has("flashproof_suite")) FP_TRY_STATUS(f.integer("flashproof_suite", 1, 1));
  FP_TRY(s.cases, folder(f, "cases", root));
  FP_TRY(s.prompts, folder(f, "prompts", root));
  FP_TRY(s.golden, folder(f, "golden", root));
  FP_TRY(s.results, folder(f, "results", root));
  return s;
}

Result<Suite> find_suite(const std::string& given_root, const std::string& start,
                         const std::vector<std::string>& fallback_starts) {
  if (!given_root.empty()) return load_suite(given_root);
  std::vector<std::string> looked;
  std::vector<fs::path> starts = {absolute_normal(start)};
  for (const auto& f : fallback_starts) starts.push_back(absolute_normal(f).parent_path());
  for (const fs::path& from : starts) {
    for (fs::path dir = from;; dir = dir.parent_path()) {
      if (has_marker(dir)) return load_suite(dir.string());
      if (dir == dir.root_path() || dir.parent_path() == dir) break;
    }
    looked.push_back(from.string());
  }
  return make_error("no flashproof suite: no " + std::string(kSuiteMarker) + " in " + join(looked, " or ") +
                    " or any folder above; give --root DIR, or make a suite with `flashproof init DIR`");
}

std::string suite_marker_text(const std::string& prompts_dir) {
  return "{\n"
         "  \"comment\": \"Marks a flashproof suite: every flashproof command run in this folder or below uses it. Folders are relative to this file.\",\n"
         "  \"flashproof_suite\": 1,\n"
         "  \"cases\": \"cases\",\n"
         "  \"prompts\": \"" + prompts_dir + "\",\n"
         "  \"golden\": \"golden\",\n"
         "  \"results\": \"results\"\n"
         "}\n";
}

}  // namespace fp
