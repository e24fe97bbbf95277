#include "case/suite_nightly.h"

#include <cctype>
#include <cstdio>
#include <filesystem>

namespace fp {
namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
}

std::string escaped(const std::string& s, const std::string& chars, const std::string& with) {
  std::string out;
  for (char c : s) {
    if (chars.find(c) != std::string::npos) out += with;
    out += c;
  }
  return out;
}

}  // namespace

std::string nightly_unit_name(const std::string& suite) {
  std::string name = std::filesystem::path(suite).lexically_normal().filename().string();
  if (name.empty()) name = std::filesystem::path(suite).lexically_normal().parent_path().filename().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '-';
  return "flashproof-nightly" + (name.empty() ? std::string() : "-" + name);
}

std::string nightly_file_name(const std::string& template_name, const std::string& suite) {
  const std::string base = "flashproof-nightly.";
  if (template_name.rfind(base, 0) == 0) return nightly_unit_name(suite) + "." + template_name.substr(base.size());
  return template_name;
}

std::string render_nightly(std::string text, const NightlyValues& v) {
  const std::string unit_path = escaped(v.suite, "%", "%");
  replace_all(text, "@SUITE_SH@", shell_word(v.suite));
  replace_all(text, "@FLASHPROOF_SH@", shell_word(v.flashproof));
  replace_all(text, "@PREFIX_SH@", shell_word(v.prefix));
  replace_all(text, "@SUITE_UNIT_QUOTED@", escaped(unit_path, "\\\"", "\\"));
  replace_all(text, "@SUITE_UNIT@", unit_path);
  std::string url;
  for (char c : v.suite) {
    if (std::isalnum(static_cast<unsigned char>(c)) || std::string("/-_.~").find(c) != std::string::npos) {
      url += c;
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      url += buf;
    }
  }
  replace_all(text, "@SUITE_URL@", escaped(url, "%", "%"));  // a unit file reads %% as %
  replace_all(text, "@SUITE_CRON@", escaped(shell_word(v.suite), "%", "\\"));
  replace_all(text, "@SUITE_TEXT@", v.suite);
  replace_all(text, "@UNIT@", nightly_unit_name(v.suite));
  replace_all(text, "@USER@", v.user);
  return text;
}

}  // namespace fp
