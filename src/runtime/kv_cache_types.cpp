#include "runtime/kv_cache_types.h"

#include <algorithm>

#include "util/json_fields.h"
#include "runtime/runtime_data.h"
#include "util/split_list.h"
#include "util/text.h"

namespace fp {
namespace {

bool known_type(const KvCacheTypes& t, const std::string& type) {
  return std::find(t.types.begin(), t.types.end(), type) != t.types.end();
}

// "q8_0" or "q8_0/f16" into a pair; `what` names the item in errors.
Result<KvPair> parse_pair(const std::string& item, const KvCacheTypes& t, const std::string& what) {
  const size_t slash = item.find('/');
  KvPair p{trim(item.substr(0, slash)), trim(slash == std::string::npos ? item : item.substr(slash + 1))};
  if (slash != std::string::npos && item.find('/', slash + 1) != std::string::npos)
    return make_error(what + " " + quote(item) + ": expected TYPE or K/V (one slash)");
  for (const auto& type : {p.k, p.v})
    if (!known_type(t, type))
      return make_error(what + " " + quote(item) + ": " + quote(type) + " is not a KV cache type the runtime accepts; valid: " +
                        join(t.types, ", ") + " (" + t.data_file + ": kv_cache.types)");
  return p;
}

enum class FlagForm { None, Joined, ValueNext };

// Whether `arg` is one of `flags`: "-ctk" (value next) or "-ctk=q8_0" (joined).
FlagForm flag_form(const std::vector<std::string>& flags, const std::string& arg) {
  for (const auto& f : flags) {
    if (arg == f) return FlagForm::ValueNext;
    if (starts_with(arg, f + "=")) return FlagForm::Joined;
  }
  return FlagForm::None;
}

}  // namespace

Result<KvCacheTypes> parse_kv_cache_types(const std::string& text, const std::string& path) {
  FP_TRY(nlohmann::json j, parse_json_object(text, path));
  JsonFields top(j, path);
  if (!top.has("kv_cache"))
    return make_error(path + ": no \"kv_cache\" section: this runtime's KV cache types are not known (the section lists the "
                           "flags and the values the runtime accepts, e.g. llama-server.json)");
  FP_TRY(JsonFields s, top.object("kv_cache"));
  FP_TRY_STATUS(s.only_keys({"comment", "k_flags", "v_flags", "types", "default", "mixed_pairs", "block_bytes", "block_bytes_comment"}));
  KvCacheTypes t;
  t.data_file = path;
  FP_TRY(t.k_flags, s.string_list("k_flags"));
  FP_TRY(t.v_flags, s.string_list("v_flags"));
  FP_TRY(t.types, s.string_list("types"));
  FP_TRY(t.default_type, s.string("default"));
  if (t.k_flags.empty()) return s.error("k_flags", "empty; expected the flags that set the K cache type, e.g. [\"-ctk\"]");
  if (t.v_flags.empty()) return s.error("v_flags", "empty; expected the flags that set the V cache type, e.g. [\"-ctv\"]");
  if (t.types.empty()) return s.error("types", "empty; expected the KV cache types the runtime accepts");
  for (const auto& type : t.types)
    if (type.empty() || type.find_first_of("/, ") != std::string::npos)
      return s.error("types", "type " + quote(type) + " is empty or holds '/', ',' or a space");
  if (!known_type(t, t.default_type)) return s.error("default", "not one of \"types\": " + join(t.types, ", "));
  std::vector<std::string> mixed;
  if (s.has("mixed_pairs")) {
    FP_TRY(mixed, s.string_list("mixed_pairs"));
  }
  for (const auto& m : mixed) {
    auto p = parse_pair(m, t, path + ": field \"kv_cache.mixed_pairs\": item");
    if (!p) return p.error();
    t.mixed_pairs.push_back(*p);
  }
  if (s.has("block_bytes")) {
    const nlohmann::json& b = s.raw()["block_bytes"];
    if (!b.is_object()) return s.error("block_bytes", "expected an object: type -> [elements per block, bytes per block]");
    for (const auto& [type, v] : b.items()) {
      if (!known_type(t, type)) return s.error("block_bytes", quote(type) + " is not one of \"types\": " + join(t.types, ", "));
      if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer() || v[0].get<int>() < 1 ||
          v[1].get<int>() < 1)
        return s.error("block_bytes", quote(type) + " = " + v.dump() + ": expected [elements per block, bytes per block], whole numbers >= 1");
      t.block_bytes[type] = {v[0].get<int>(), v[1].get<int>()};
    }
  }
  return t;
}

KvPair kv_pair_of(const std::vector<std::string>& argv, const KvCacheTypes& t) {
  KvPair p{t.default_type, t.default_type};
  for (size_t i = 0; i < argv.size(); ++i) {
    for (auto [flags, type] : {std::make_pair(&t.k_flags, &p.k), std::make_pair(&t.v_flags, &p.v)}) {
      const FlagForm form = flag_form(*flags, argv[i]);
      if (form == FlagForm::Joined) *type = argv[i].substr(argv[i].find('=') + 1);
      if (form == FlagForm::ValueNext && i + 1 < argv.size()) *type = argv[i + 1];
    }
  }
  return p;
}

Result<KvCacheTypes> load_kv_cache_types(const std::string& runtime) {
  FP_TRY(RuntimeDataFile f, read_runtime_data(runtime));
  return parse_kv_cache_types(f.text, f.path);
}

Result<std::vector<KvPair>> parse_kv_pairs(const std::string& list, const KvCacheTypes& t) {
  std::vector<KvPair> out;
  auto add = [&](const KvPair& p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  for (const std::string& item : split_list(list)) {
    if (item.empty()) return make_error("--kv " + quote(list) + ": an empty item; expected TYPE, K/V, same or all, comma-separated");
    if (item == "same" || item == "all") {
      for (const auto& type : t.types) add({type, type});
      if (item == "all")
        for (const auto& p : t.mixed_pairs) add(p);
      continue;
    }
    FP_TRY(KvPair p, parse_pair(item, t, "--kv item"));
    add(p);
  }
  return out;
}

std::vector<std::string> with_kv_pair(const std::vector<std::string>& argv, const KvCacheTypes& t, const KvPair& p) {
  std::vector<std::string> out;
  for (size_t i = 0; i < argv.size(); ++i) {
    const FlagForm form = std::max(flag_form(t.k_flags, argv[i]), flag_form(t.v_flags, argv[i]));
    if (form == FlagForm::ValueNext) ++i;  // skip its value too
    if (form != FlagForm::None) continue;
    out.push_back(argv[i]);
  }
  out.insert(out.end(), {t.k_flags.front(), p.k, t.v_flags.front(), p.v});
  return out;
}

}  // namespace fp
