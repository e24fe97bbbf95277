// flashproof init DIR: a suite of one's own (case/suite.h) from the template flashproof ships
// (share/flashproof/suite/, templates/suite/ in the sources), with a runnable example case.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "case/case_file.h"
#include "case/suite.h"
#include "case/suite_nightly.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/make_model_command.h"
#include "util/shipped_data.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

const char* kInitUsageText =
    "usage: flashproof init DIR\n"
    "Makes a suite in DIR (created if missing; an existing folder keeps its files, and nothing is\n"
    "overwritten): flashproof-suite.json (the marker every command looks for), CMakeLists.txt using the\n"
    "installed flashproof package, cases/example-chat.json (an example to edit, runnable as it is on a\n"
    "tiny generated model), models/tiny.json and its model, prompts/chat/, golden/, README.md, a\n"
    ".gitignore for results/ and build/, and nightly/: a nightly runner for this machine (run-nightly.sh,\n"
    "a systemd service and timer, the same as a cron line). Then, in DIR:\n"
    "  cmake -S . -B build && ctest --test-dir build\n"
    "exit: 0 made, 2 could not (said why; nothing overwritten), 64 usage\n";

// The example case names this recipe; init copies it into the suite with its output inside the suite.
constexpr const char* kExampleRecipe = "tiny.json";
constexpr const char* kExampleModel = "models/generated/tiny.gguf";
constexpr const char* kExampleShaPlaceholder = "set by flashproof init from models/tiny.json";
constexpr const char* kExamplePrompts = "chat";

struct Planned {
  fs::path path;         // inside the new suite
  std::string content;
  bool executable = false;
};

// What the nightly runner needs to know (case/suite_nightly.h): this binary, the prefix it is
// installed under (where find_package(flashproof) finds <prefix>/lib/cmake/flashproof), the user
// running init.
NightlyValues nightly_values(const fs::path& dir) {
  NightlyValues v;
  v.suite = dir.string();
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  v.flashproof = ec ? "flashproof" : exe.string();
  v.prefix = exe.parent_path().parent_path().string();  // <prefix>/bin/flashproof
  const passwd* pw = ::getpwuid(::geteuid());
  v.user = pw && pw->pw_name ? pw->pw_name : std::to_string(::geteuid());
  return v;
}

// The template's files as they land in the suite: "gitignore" becomes ".gitignore", the example
// case gets the recipe's sha256.
Result<std::vector<Planned>> plan_template(const fs::path& from, const fs::path& to, const std::string& model_sha,
                                           const NightlyValues& nightly) {
  std::vector<Planned> out;
  std::error_code ec;
  if (!fs::is_directory(from, ec))
    return make_error(from.string() + ": no suite template here (flashproof's share/flashproof is incomplete: reinstall)");
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    fs::path rel = it->path().lexically_relative(from);
    if (rel == "gitignore") rel = ".gitignore";
    FP_TRY(std::string text, read_file(it->path().string()));
    const size_t at = text.find(kExampleShaPlaceholder);
    if (at != std::string::npos) text.replace(at, std::string(kExampleShaPlaceholder).size(), model_sha);
    const bool nightly_file = *rel.begin() == "nightly";
    if (nightly_file) {
      text = render_nightly(text, nightly);
      rel = rel.parent_path() / nightly_file_name(rel.filename().string(), nightly.suite);
    }
    out.push_back({to / rel, text, rel.extension() == ".sh"});
  }
  if (ec) return make_error(from.string() + ": cannot read the suite template: " + ec.message());
  return out;
}

Result<std::vector<Planned>> plan_suite(const fs::path& dir) {
  const fs::path share = shipped_data_dir();
  const fs::path recipe_path = share / "models" / kExampleRecipe;
  FP_TRY(std::string recipe_text, read_file(recipe_path.string()));
  nlohmann::ordered_json recipe = nlohmann::ordered_json::parse(recipe_text, nullptr, false);
  if (!recipe.is_object() || !recipe.contains("sha256") || !recipe["sha256"].is_string())
    return make_error(recipe_path.string() + ": not a model recipe with a \"sha256\"");
  const std::string sha = recipe["sha256"].get<std::string>();
  recipe["output"] = kExampleModel;

  FP_TRY(std::vector<Planned> files, plan_template(share / "suite", dir, sha, nightly_values(dir)));
  files.push_back({dir / kSuiteMarker, suite_marker_text("prompts")});
  files.push_back({dir / "models" / kExampleRecipe, recipe.dump(2) + "\n"});
  const fs::path prompts = share / "prompts" / kExamplePrompts;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(prompts, ec)) {
    if (!e.is_regular_file()) continue;
    FP_TRY(std::string text, read_file(e.path().string()));
    files.push_back({dir / "prompts" / kExamplePrompts / e.path().filename(), text});
  }
  if (ec) return make_error(prompts.string() + ": cannot read the shipped prompt set: " + ec.message());
  std::sort(files.begin(), files.end(), [](const Planned& a, const Planned& b) { return a.path < b.path; });
  return files;
}

int init_failed(const std::string& message) {
  std::cerr << "flashproof init: " << message << "\n";
  return 2;
}

}  // namespace

int init_command(int argc, char** argv) {
  std::string dir_arg;
  Args args("init", argc, argv, kInitUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kInitUsageText;
      return 0;
    }
    if (args.is_option() || !dir_arg.empty()) args.usage_error("unexpected argument " + quote(a));
    dir_arg = a;
  }
  if (dir_arg.empty()) {
    std::cerr << "flashproof init: name the folder of the new suite\n" << kInitUsageText;
    return 64;
  }
  std::error_code ec;
  const fs::path dir = fs::absolute(dir_arg, ec).lexically_normal();
  if (fs::exists(dir / kSuiteMarker, ec)) return init_failed((dir / kSuiteMarker).string() + " exists: " + dir.string() + " is a suite already");
  auto planned = plan_suite(dir);
  if (!planned) return init_failed(planned.error().message);
  for (const auto& f : *planned)
    if (fs::exists(f.path, ec)) return init_failed(f.path.string() + " exists; nothing written (init never overwrites)");
  for (const auto& f : *planned) {
    fs::create_directories(f.path.parent_path(), ec);
    if (auto st = write_file_atomic(f.path.string(), f.content); !st) return init_failed(st.error().message);
    if (f.executable) fs::permissions(f.path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add, ec);
    std::cout << "wrote " << f.path.lexically_relative(dir).string() << "\n";
  }
  fs::create_directories(dir / "golden", ec);
  fs::create_directories(dir / "results" / "nightly", ec);

  // The example's model, so that the example case is valid (and runnable) at once.
  if (make_model_file((dir / "models" / kExampleRecipe).string(), dir.string(), false) != 0)
    return init_failed("cannot generate the example's model (above)");
  auto suite = load_suite(dir.string());
  if (!suite) return init_failed(suite.error().message);
  auto example = load_case((dir / "cases/example-chat.json").string(), *suite);
  if (!example) return init_failed("the example case does not load: " + example.error().message);
  std::cout << "example case valid: cases/example-chat.json\n\n"
            << "suite: " << dir.string() << "\n"
            << "next:  cd " << dir.string() << " && cmake -S . -B build && ctest --test-dir build\n";
  const std::string unit = nightly_unit_name(dir.string());
  std::cout << "\nnightly: nightly/run-nightly.sh runs the suite's CTest, keeps each night in results/nightly/ and exits\n"
            << "non-zero when a case failed. Every night at 02:30, with systemd (as root):\n"
            << "  cp " << shell_word((dir / "nightly" / (unit + ".service")).string()) << " "
            << shell_word((dir / "nightly" / (unit + ".timer")).string()) << " /etc/systemd/system/\n"
            << "  systemctl daemon-reload && systemctl enable --now " << unit << ".timer\n"
            << "or without systemd: the line in nightly/crontab, added with crontab -e\n";
  return 0;
}

}  // namespace fp
