// Reads fields of a JSON object with errors that name the file, the field's full path, the value
// and what would be valid. The one reader of JSON keys: case files, runtime data, evidence rules
// (signatures, causes, instruments), goldens and fingerprints.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "util/result.h"

namespace fp {

// How an unknown key is worded: each file kind keeps the wording its users and tests know.
enum class KeyWording {
  Field,             // `<where>: unknown field "<path>"; valid fields here: a, b` (case files, runtime data)
  KeyList,           // `<where>: unknown key "<key>"; valid keys: a, b` (evidence rules)
  KeyParenthesized,  // `<where>: unknown key "<key>" (valid keys: a, b)` (goldens, fingerprints)
};

// The error for an unknown key; `valid` is listed in the order given, `shown_key` is the key as
// named (a full path for KeyWording::Field).
Error unknown_key_error(const std::string& where, const std::string& shown_key, const std::vector<std::string>& valid,
                        KeyWording wording);

// Ok when every key of `obj` is one of `valid` (listed sorted in the error); an error naming the
// first other key, or `<where>: value <obj> is not an object` when obj is not an object.
Status only_keys(const nlohmann::json& obj, const std::string& where, KeyWording wording,
                 const std::set<std::string>& valid);

// Fields of one JSON object, the case-file wording (KeyWording::Field).
class JsonFields {
 public:
  JsonFields(const nlohmann::json& obj, std::string file, std::string prefix = "")
      : obj_(obj), file_(std::move(file)), prefix_(std::move(prefix)) {}

  // An error for field `key` (or for the object itself when key is empty).
  Error error(const std::string& key, const std::string& problem) const;
  std::string path(const std::string& key) const { return prefix_.empty() ? key : prefix_ + "." + key; }

  Status only_keys(const std::set<std::string>& allowed) const;
  bool has(const std::string& key) const { return obj_.contains(key); }
  Result<std::string> string(const std::string& key) const;
  Result<std::string> string_or(const std::string& key, const std::string& fallback) const;
  Result<long long> integer(const std::string& key, long long lo, long long hi) const;
  Result<long long> integer_or(const std::string& key, long long lo, long long hi, long long fallback) const;
  Result<double> number_or(const std::string& key, double lo, double hi, double fallback) const;
  Result<bool> boolean(const std::string& key) const;
  Result<bool> boolean_or(const std::string& key, bool fallback) const;
  Result<std::string> one_of(const std::string& key, const std::vector<std::string>& valid) const;
  Result<std::vector<std::string>> string_list(const std::string& key) const;
  // The child object, with its own field paths (`launch.env`, ...).
  Result<JsonFields> object(const std::string& key) const;
  const nlohmann::json& raw() const { return obj_; }
  const std::string& file() const { return file_; }

 private:
  const nlohmann::json& obj_;
  std::string file_, prefix_;
};

// Parses a JSON object from text, naming the file and the byte offset on failure; a key given twice
// in one object is an error naming it (JSON parsers keep the last one without a word).
Result<nlohmann::json> parse_json_object(const std::string& text, const std::string& file);

}  // namespace fp
