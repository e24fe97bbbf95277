// The nightly runner `flashproof init` writes into a suite (templates/suite/nightly/): the suite's
// folder, the flashproof binary, the CMake prefix it is found under and the user it runs as,
// substituted into the script, the systemd units and the cron line, each quoted the way that file
// reads it (a shell word, a systemd path, a cron field, where % means a new line unless escaped).
#pragma once

#include <string>

#include "util/shell_word.h"

namespace fp {

struct NightlyValues {
  std::string suite;       // absolute folder of the suite
  std::string flashproof;  // absolute path of the flashproof binary
  std::string prefix;      // CMAKE_PREFIX_PATH under which find_package(flashproof) finds it
  std::string user;        // the user the service runs as
};

// The units' name: "flashproof-nightly-" and the suite folder's name with anything but letters,
// digits, '_' and '-' as '-' (two suites of one machine get two units).
std::string nightly_unit_name(const std::string& suite);

// A template file's name in the suite: flashproof-nightly.service -> <unit>.service; others as they are.
std::string nightly_file_name(const std::string& template_name, const std::string& suite);

// `text` with @SUITE_SH@ @FLASHPROOF_SH@ @PREFIX_SH@ (single-quoted shell words), @SUITE_UNIT@ (a systemd
// path: % doubled), @SUITE_UNIT_QUOTED@ (the same inside "..." of ExecStart: \ and " escaped too),
// @SUITE_URL@ (a file:// path), @SUITE_CRON@ (a single-quoted word with % escaped for cron),
// @SUITE_TEXT@ (in comments), @UNIT@ and @USER@ replaced.
std::string render_nightly(std::string text, const NightlyValues& v);

}  // namespace fp
