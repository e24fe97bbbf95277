#include "report/redact.h"

#include "util/regex.h"

namespace fp {

bool is_secret_name(const std::string& name) {
  static const Regex secret("(api[-_]?key|token|secret|passw(or)?d|auth|credential)", true);
  return regex_search(name, secret);
}

std::vector<std::string> redact_argv(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  bool next_is_secret = false;
  for (const auto& a : argv) {
    if (next_is_secret) {
      out.push_back("***");
      next_is_secret = false;
      continue;
    }
    if (a.size() > 1 && a[0] == '-') {
      auto eq = a.find('=');
      std::string name = a.substr(0, eq);
      if (is_secret_name(name)) {
        if (eq == std::string::npos) next_is_secret = true;
        out.push_back(eq == std::string::npos ? a : name + "=***");
        continue;
      }
    }
    out.push_back(a);
  }
  return out;
}

std::map<std::string, std::string> redact_env(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : env) out[k] = is_secret_name(k) ? "***" : v;
  return out;
}

}  // namespace fp
