// A suite: the folder an operator keeps in their own repository (cases/, golden/, prompts/,
// results/), marked by flashproof-suite.json at its root. `flashproof init DIR` writes one; this
// repository is one too. Every command finds its suite from --root DIR or by walking up from the
// working directory to the marker; relative paths in a case (model, recipe, documents) are relative
// to the suite root.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace fp {

inline constexpr const char* kSuiteMarker = "flashproof-suite.json";

struct Suite {
  std::string root;     // absolute
  std::string marker;   // root/flashproof-suite.json ("" when --root named a folder without one)
  std::string cases;    // absolute folders, from the marker's fields (defaults: cases, prompts, golden, results)
  std::string prompts;
  std::string golden;
  std::string results;
  // Where prompt sets are looked up, first match wins: the suite's prompts folder, then the sets
  // flashproof ships (share/flashproof/prompts).
  std::vector<std::string> prompt_dirs() const;
};

// The suite rooted at `root`: reads root/flashproof-suite.json when it is there (its folder fields
// are paths inside the suite), else the default layout. Errors name the marker, the field and the value.
Result<Suite> load_suite(const std::string& root);

// `given_root` (--root DIR) when set; else the nearest folder holding the marker, from `start`
// upward; else, from each of `fallback_starts` (e.g. the case files named) upward. An error that says
// where it looked and how to make a suite when none is found.
Result<Suite> find_suite(const std::string& given_root, const std::string& start,
                         const std::vector<std::string>& fallback_starts = {});

// The marker's text for a new suite (flashproof init) with the given prompts folder.
std::string suite_marker_text(const std::string& prompts_dir = "prompts");

}  // namespace fp
