#include "golden/fingerprint.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <thread>

#include "measure/nvml.h"
#include "util/json_fields.h"
#include "util/split_list.h"
#include "util/regex.h"
#include "util/text.h"

namespace fp {

namespace {

// The string fields in file order; `machine` false marks the case fields.
struct StringField {
  const char* key;
  std::string Fingerprint::*member;
  bool machine;
  bool said_when_both_known = false;  // a change is named only when both sides have the field
};

const std::vector<StringField>& string_fields() {
  static const std::vector<StringField> fields = {
      {"cpu_model", &Fingerprint::cpu_model, true},
      {"gpu_name", &Fingerprint::gpu_name, true},
      {"gpu_driver", &Fingerprint::gpu_driver, true},
      {"cuda_version", &Fingerprint::cuda_version, true},
      {"gpu_uuid", &Fingerprint::gpu_uuid, true, true},
      {"os_kernel", &Fingerprint::os_kernel, true, true},
      {"runtime", &Fingerprint::runtime, true},
      {"runtime_version", &Fingerprint::runtime_version, true},
      {"runtime_build", &Fingerprint::runtime_build, true},
      {"runtime_build_log", &Fingerprint::runtime_build_log, true},
      {"runtime_fa_pairs", &Fingerprint::runtime_fa_pairs, true, true},
      {"runtime_gpu_archs", &Fingerprint::runtime_gpu_archs, true, true},
      {"model_sha256", &Fingerprint::model_sha256, false},
      {"launch", &Fingerprint::launch, false},
      {"flashproof_version", &Fingerprint::flashproof_version, true},
  };
  return fields;
}

nlohmann::ordered_json fields_json(const Fingerprint& f, bool with_case) {
  nlohmann::ordered_json j;
  j["id"] = f.id();
  for (const auto& field : string_fields()) {
    if (!field.machine && !with_case) continue;
    j[field.key] = f.*field.member;
    if (std::string(field.key) == "cpu_model") j["cores"] = f.cores;
  }
  return j;
}

void fill_gpu(Fingerprint& f) {
  auto nvml = Nvml::open();
  if (!nvml) return;
  auto gpus = nvml->gpus();
  if (gpus && !gpus->empty()) {
    f.gpu_name = gpus->front().name;
    if (gpus->size() > 1) f.gpu_name = std::to_string(gpus->size()) + " x " + f.gpu_name;
    for (const auto& g : *gpus) f.gpu_uuid += (f.gpu_uuid.empty() ? "" : ",") + g.uuid;
  }
  if (auto d = nvml->driver()) {
    f.gpu_driver = d->driver_version;
    if (d->cuda_version > 0) f.cuda_version = d->cuda_version_text();
  }
}

}  // namespace

std::string slug(const std::string& s) {
  std::string out;
  bool dash = false;
  for (char c : s) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '.') {
      if (dash && !out.empty()) out += '-';
      out += l;
      dash = false;
    } else {
      dash = true;
    }
  }
  return out;
}

std::string Fingerprint::id() const {
  std::string hw = gpu_name.empty() ? slug(cpu_model) + "-" + std::to_string(cores) + "c"
                                    : slug(gpu_name) + (gpu_driver.empty() ? "" : "-" + slug(gpu_driver));
  std::string build = slug(runtime_build);
  if (build.empty()) build = slug(runtime_version);
  else if (std::isdigit(static_cast<unsigned char>(build[0]))) build = "b" + build;  // llama.cpp's own spelling: b11669
  std::string id = hw + "-" + slug(runtime);
  return build.empty() ? id : id + "-" + build;
}

nlohmann::ordered_json Fingerprint::to_json() const { return fields_json(*this, true); }
nlohmann::ordered_json Fingerprint::machine_json() const { return fields_json(*this, false); }

Result<Fingerprint> fingerprint_from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) return make_error(origin + ": a fingerprint must be a JSON object, got " + j.type_name());
  Fingerprint f;
  f.flashproof_version.clear();
  for (const auto& [key, value] : j.items()) {
    if (key == "id") {
      if (!value.is_string()) return make_error(origin + ": field \"id\": expected a string");
      continue;
    }
    if (key == "cores") {
      if (!value.is_number_unsigned())
        return make_error(origin + ": field \"cores\": " + value.dump() + " is invalid: expected a whole number");
      f.cores = value.get<unsigned>();
      continue;
    }
    bool known = false;
    for (const auto& field : string_fields()) {
      if (key != field.key) continue;
      known = true;
      if (!value.is_string())
        return make_error(origin + ": field " + quote(key) + ": " + value.dump() + " is invalid: expected a string");
      f.*field.member = value.get<std::string>();
    }
    if (!known) {
      std::vector<std::string> valid = {"id", "cores"};
      for (const auto& field : string_fields()) valid.push_back(field.key);
      return unknown_key_error(origin, key, valid, KeyWording::KeyParenthesized);
    }
  }
  return f;
}

Result<Fingerprint> load_fingerprint(const std::string& path) {
  FP_TRY(std::string text, read_file(path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return make_error(path + ": not a valid fingerprint file (truncated or corrupt JSON): " + e.what());
  }
  return fingerprint_from_json(j, path);
}

std::vector<FieldChange> fingerprint_changes(const Fingerprint& before, const Fingerprint& after) {
  std::vector<FieldChange> out;
  for (const auto& field : string_fields()) {
    const std::string& a = before.*field.member;
    const std::string& b = after.*field.member;
    if ((!field.machine || field.said_when_both_known) && (a.empty() || b.empty())) continue;
    if (a != b) out.push_back({field.key, a, b});
    if (std::string(field.key) == "cpu_model" && before.cores != after.cores)
      out.push_back({"cores", std::to_string(before.cores), std::to_string(after.cores)});
  }
  return out;
}

std::string describe_changes(const std::vector<FieldChange>& changes, const std::string& indent) {
  if (changes.empty()) return indent + "(no change)\n";
  std::string out;
  auto shown = [](const std::string& s) { return s.empty() ? std::string("(none)") : s; };
  for (const auto& c : changes) out += indent + c.field + ": " + shown(c.before) + " -> " + shown(c.after) + "\n";
  return out;
}

bool fa_pair_compiled(const std::string& pairs, const std::string& pair) {
  if (pairs == "all") return true;
  const auto list = split_list(pairs, ',', ListItems::NonEmptyUnique);
  return std::find(list.begin(), list.end(), pair) != list.end();
}

FaPairChange fa_pair_change(const std::string& before, const std::string& after) {
  FaPairChange c;
  c.all_before = before == "all";
  c.all_after = after == "all";
  const auto b = c.all_before ? std::vector<std::string>{} : split_list(before, ',', ListItems::NonEmptyUnique);
  const auto a = c.all_after ? std::vector<std::string>{} : split_list(after, ',', ListItems::NonEmptyUnique);
  if (!c.all_before)
    for (const auto& p : a)
      if (std::find(b.begin(), b.end(), p) == b.end()) c.added.push_back(p);
  if (!c.all_after)
    for (const auto& p : b)
      if (std::find(a.begin(), a.end(), p) == a.end()) c.removed.push_back(p);
  return c;
}

bool same_hardware(const Fingerprint& a, const Fingerprint& b) {
  return a.cpu_model == b.cpu_model && a.cores == b.cores && a.gpu_name == b.gpu_name;
}

Fingerprint machine_fingerprint() {
  Fingerprint f;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (starts_with(line, "model name")) {
      f.cpu_model = trim(line.substr(line.find(':') + 1));
      break;
    }
  if (f.cpu_model.empty()) f.cpu_model = "unknown-cpu";
  f.cores = std::thread::hardware_concurrency();
  struct utsname u;
  if (::uname(&u) == 0) f.os_kernel = u.release;
  fill_gpu(f);
  return f;
}

std::string build_stated_in_log(const std::string& log_text, size_t limit) {
  static const Regex kBuild(R"((?:^|[\s:(])build:? b?([0-9]+)\b)");
  const size_t end = std::min(limit, log_text.size());
  for (size_t pos = 0; pos < end;) {
    size_t nl = log_text.find('\n', pos);
    if (nl == std::string::npos) nl = log_text.size();
    const std::string_view line = std::string_view(log_text).substr(pos, nl - pos);
    pos = nl + 1;
    RegexMatch m;
    if (regex_search(line, kBuild, m)) return m.str(1);
  }
  return "";
}

}  // namespace fp
