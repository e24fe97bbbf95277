#include "util/json_fields.h"

#include <functional>
#include <set>

#include "util/text.h"

namespace fp {

using json = nlohmann::json;

namespace {
std::string shown(const json& v) {
  std::string s = v.dump();
  return s.size() > 120 ? s.substr(0, 117) + "..." : s;
}
const char* type_word(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_float: return "a decimal number";
    default: return "a whole number";
  }
}
}  // namespace

Error unknown_key_error(const std::string& where, const std::string& shown_key, const std::vector<std::string>& valid,
                        KeyWording wording) {
  switch (wording) {
    case KeyWording::Field:
      return make_error(where + ": unknown field \"" + shown_key + "\"; valid fields here: " + join(valid, ", "));
    case KeyWording::KeyList:
      return make_error(where + ": unknown key " + quote(shown_key) + "; valid keys: " + join(valid, ", "));
    case KeyWording::KeyParenthesized:
      break;
  }
  return make_error(where + ": unknown key " + quote(shown_key) + " (valid keys: " + join(valid, ", ") + ")");
}

Status only_keys(const json& obj, const std::string& where, KeyWording wording, const std::set<std::string>& valid) {
  if (!obj.is_object()) return make_error(where + ": value " + quote(obj.dump()) + " is not an object");
  for (const auto& [k, _] : obj.items())
    if (!valid.count(k)) return unknown_key_error(where, k, {valid.begin(), valid.end()}, wording);
  return ok_status();
}

Error JsonFields::error(const std::string& key, const std::string& problem) const {
  if (key.empty()) return make_error(file_ + ": " + (prefix_.empty() ? "" : "field \"" + prefix_ + "\": ") + problem);
  std::string where = file_ + ": field \"" + path(key) + "\"";
  if (obj_.contains(key)) where += " = " + shown(obj_[key]);
  return make_error(where + ": " + problem);
}

Status JsonFields::only_keys(const std::set<std::string>& allowed) const {
  for (const auto& [k, _] : obj_.items())
    if (!allowed.count(k)) return unknown_key_error(file_, path(k), {allowed.begin(), allowed.end()}, KeyWording::Field);
  return ok_status();
}

Result<std::string> JsonFields::string(const std::string& key) const {
  if (!obj_.contains(key)) return error(key, "missing; expected a string");
  const json& v = obj_[key];
  if (!v.is_string()) return error(key, std::string("is ") + type_word(v) + "; expected a string");
  return v.get<std::string>();
}

Result<std::string> JsonFields::string_or(const std::string& key, const std::string& fallback) const {
  return obj_.contains(key) ? string(key) : Result<std::string>(fallback);
}

Result<long long> JsonFields::integer(const std::string& key, long long lo, long long hi) const {
  std::string range = "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (!obj_.contains(key)) return error(key, "missing; " + range);
  const json& v = obj_[key];
  if (!v.is_number_integer()) return error(key, std::string("is ") + type_word(v) + "; " + range);
  long long x = v.get<long long>();
  if (x < lo || x > hi) return error(key, "out of range; " + range);
  return x;
}

Result<long long> JsonFields::integer_or(const std::string& key, long long lo, long long hi, long long fallback) const {
  return obj_.contains(key) ? integer(key, lo, hi) : Result<long long>(fallback);
}

Result<double> JsonFields::number_or(const std::string& key, double lo, double hi, double fallback) const {
  if (!obj_.contains(key)) return fallback;
  std::string range = "expected a number from " + std::to_string(lo) + " to " + std::to_string(hi);
  const json& v = obj_[key];
  if (!v.is_number()) return error(key, std::string("is ") + type_word(v) + "; " + range);
  double x = v.get<double>();
  if (!(x >= lo && x <= hi)) return error(key, "out of range; " + range);
  return x;
}

Result<bool> JsonFields::boolean(const std::string& key) const {
  if (!obj_.contains(key)) return error(key, "missing; expected true or false");
  const json& v = obj_[key];
  if (!v.is_boolean()) return error(key, std::string("is ") + type_word(v) + "; expected true or false");
  return v.get<bool>();
}

Result<bool> JsonFields::boolean_or(const std::string& key, bool fallback) const {
  return obj_.contains(key) ? boolean(key) : Result<bool>(fallback);
}

Result<std::string> JsonFields::one_of(const std::string& key, const std::vector<std::string>& valid) const {
  FP_TRY(std::string s, string(key));
  for (const auto& v : valid)
    if (s == v) return s;
  return error(key, "not valid; expected one of: " + join(valid, ", "));
}

Result<std::vector<std::string>> JsonFields::string_list(const std::string& key) const {
  if (!obj_.contains(key)) return error(key, "missing; expected an array of strings");
  const json& v = obj_[key];
  if (!v.is_array()) return error(key, std::string("is ") + type_word(v) + "; expected an array of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      return make_error(file_ + ": field \"" + path(key) + "[" + std::to_string(i) + "]\" = " + shown(v[i]) +
                        ": is " + type_word(v[i]) + "; expected a string");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

Result<JsonFields> JsonFields::object(const std::string& key) const {
  if (!obj_.contains(key)) return error(key, "missing; expected an object");
  const json& v = obj_[key];
  if (!v.is_object()) return error(key, std::string("is ") + type_word(v) + "; expected an object");
  return JsonFields(v, file_, path(key));
}

namespace {

// Finds the first key given twice in one object while nlohmann_json parses (it keeps the last one
// silently): its path, e.g. "plan.repetitions" or "launch.argv[2].x".
class DuplicateKeyFinder {
 public:
  bool operator()(int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: frames_.push_back({true, {}, "", 0}); break;
      case json::parse_event_t::array_start: frames_.push_back({false, {}, "", 0}); break;
      case json::parse_event_t::key:
        if (!frames_.empty() && parsed.is_string()) {
          Frame& f = frames_.back();
          f.key = parsed.get<std::string>();
          if (!f.keys.insert(f.key).second && duplicate_.empty()) duplicate_ = path();
        }
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        next_element();
        break;
      case json::parse_event_t::value: next_element(); break;
    }
    return true;
  }
  const std::string& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;   // object: the key being read
    size_t index;      // array: the element being read
  };
  void next_element() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_)
      p += f.object ? (p.empty() ? "" : ".") + f.key : "[" + std::to_string(f.index) + "]";
    return p;
  }
  std::vector<Frame> frames_;
  std::string duplicate_;
};

}  // namespace

Result<json> parse_json_object(const std::string& text, const std::string& file) {
  json j;
  DuplicateKeyFinder duplicates;
  try {
    j = json::parse(text, std::ref(duplicates));
  } catch (const json::parse_error& e) {
    return make_error(file + ": not valid JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const json::exception& e) {  // e.g. out_of_range: a number too large for a double
    return make_error(file + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) return make_error(file + ": expected a JSON object at the top level");
  if (!duplicates.duplicate().empty())
    return make_error(file + ": field \"" + duplicates.duplicate() + "\" is given twice (JSON keeps only the last one, silently); keep one");
  return j;
}

}  // namespace fp
