// Secrets never reach a result file or a report: values of options and environment variables whose
// name says key, token, secret, password or auth are replaced by "***".
#pragma once

#include <map>
#include <string>
#include <vector>

namespace fp {

// `--api-key X` and `--api-key=X` (and any option whose name matches) keep the option, lose the value.
std::vector<std::string> redact_argv(const std::vector<std::string>& argv);
std::map<std::string, std::string> redact_env(const std::map<std::string, std::string>& env);
bool is_secret_name(const std::string& name);

}  // namespace fp
