#include "golden/golden_file.h"

#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "util/json_fields.h"
#include "util/text.h"

namespace fp {

namespace {

using nlohmann::json;

const char* const kSpreadKind = "mad_of_launch_medians";

// What a golden of an older schema must be told: how to get one of this schema.
std::string rerecord_advice() {
  return "re-record it from several launches: move it away and run `flashproof run CASE --record-missing` "
         "(5 fresh launches by default), or run `flashproof run CASE --launches 5` and `flashproof accept RUNDIR`";
}

// A JSON value as it appears in the file, shortened for an error message.
std::string clipped_json(const json& v) {
  std::string s = v.dump();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

Error field_error(const std::string& origin, const std::string& field, const std::string& value,
                  const std::string& valid) {
  return make_error(origin + ": " + field + ": " + value + " is invalid: expected " + valid);
}

Status check_keys(const json& obj, const std::set<std::string>& allowed, const std::string& origin,
                  const std::string& where) {
  std::string list;
  for (const auto& k : allowed) list += (list.empty() ? "" : ", ") + k;
  for (const auto& k : allowed)
    if (!obj.contains(k))
      return make_error(origin + ": " + where + ": missing required key " + quote(k) +
                        " (required: " + list + ")");
  return only_keys(obj, origin + ": " + where, KeyWording::KeyParenthesized, allowed);
}

bool valid_figure_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
  return true;
}

Result<double> number_field(const json& fig, const std::string& key, const std::string& origin,
                            const std::string& where, bool non_negative) {
  const json& v = fig.at(key);
  std::string valid = non_negative ? "a finite number >= 0" : "a finite number";
  if (!v.is_number()) return field_error(origin, where + "." + key, clipped_json(v), valid);
  double d = v.get<double>();
  if (!std::isfinite(d) || (non_negative && d < 0)) return field_error(origin, where + "." + key, clipped_json(v), valid);
  return d;
}

Result<GoldenFigure> parse_figure(const json& fig, const std::string& origin, const std::string& where, bool has_band) {
  if (!fig.is_object()) return field_error(origin, where, clipped_json(fig), "an object");
  std::set<std::string> keys = {"median", "spread", "n", "direction", "gate"};
  if (has_band) keys.insert("band_source");
  FP_TRY_STATUS(check_keys(fig, keys, origin, where));
  GoldenFigure f;
  FP_TRY(f.median, number_field(fig, "median", origin, where, false));
  FP_TRY(f.spread, number_field(fig, "spread", origin, where, true));
  const json& n = fig.at("n");
  if (!n.is_number_unsigned() || n.get<unsigned long long>() < 1)
    return field_error(origin, where + ".n", clipped_json(n), "an integer >= 1 (the launches the golden was recorded from)");
  f.n = static_cast<size_t>(n.get<unsigned long long>());
  const json& dir = fig.at("direction");
  std::optional<Direction> d = dir.is_string() ? parse_direction(dir.get<std::string>()) : std::nullopt;
  if (!d) return field_error(origin, where + ".direction", clipped_json(dir), "\"lower_is_better\" or \"higher_is_better\"");
  f.direction = *d;
  const json& gate = fig.at("gate");
  if (!gate.is_boolean()) return field_error(origin, where + ".gate", clipped_json(gate), "true or false");
  f.gate = gate.get<bool>();
  if (has_band) {
    const json& band = fig.at("band_source");
    std::optional<BandSource> b = band.is_string() ? parse_band_source(band.get<std::string>()) : std::nullopt;
    if (!b) return field_error(origin, where + ".band_source", clipped_json(band), "\"launches\", \"launches-widened\", \"rounds\" or \"nights\"");
    f.band_source = *b;
  }
  return f;
}

Result<GoldenKernelFamily> parse_family(const json& fam, const std::string& origin, const std::string& where) {
  if (!fam.is_object()) return field_error(origin, where, clipped_json(fam), "an object");
  FP_TRY_STATUS(check_keys(fam, {"fused", "share_median", "share_spread", "n"}, origin, where));
  GoldenKernelFamily f;
  const json& fused = fam.at("fused");
  if (!fused.is_boolean()) return field_error(origin, where + ".fused", clipped_json(fused), "true or false");
  f.fused = fused.get<bool>();
  FP_TRY(f.share_median, number_field(fam, "share_median", origin, where, true));
  if (f.share_median > 1) return field_error(origin, where + ".share_median", clipped_json(fam.at("share_median")), "a share from 0 to 1");
  FP_TRY(f.share_spread, number_field(fam, "share_spread", origin, where, true));
  const json& n = fam.at("n");
  if (!n.is_number_unsigned() || n.get<unsigned long long>() < 1)
    return field_error(origin, where + ".n", clipped_json(n), "an integer >= 1 (the probed launches the shares came from)");
  f.n = static_cast<size_t>(n.get<unsigned long long>());
  return f;
}

}  // namespace

const char* to_string(Direction d) {
  return d == Direction::higher_is_better ? "higher_is_better" : "lower_is_better";
}

const char* to_string(BandSource s) {
  switch (s) {
    case BandSource::launches: return "launches";
    case BandSource::launches_widened: return "launches-widened";
    case BandSource::rounds: return "rounds";
    case BandSource::nights: return "nights";
  }
  return "launches";
}

std::optional<BandSource> parse_band_source(std::string_view s) {
  for (BandSource b : {BandSource::launches, BandSource::launches_widened, BandSource::rounds, BandSource::nights})
    if (s == to_string(b)) return b;
  return std::nullopt;
}

std::optional<Direction> parse_direction(std::string_view s) {
  if (s == "lower_is_better") return Direction::lower_is_better;
  if (s == "higher_is_better") return Direction::higher_is_better;
  return std::nullopt;
}

Result<Golden> parse_golden(std::string_view text, const std::string& origin) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    return make_error(origin + ": not valid JSON (truncated or corrupt?): " + e.what());
  }
  if (!doc.is_object()) return field_error(origin, "(top level)", clipped_json(doc), "a JSON object");
  // An older schema first: its keys differ, and the version says more than a key error would.
  if (doc.contains("schema_version") && doc["schema_version"].is_number_integer() &&
      doc["schema_version"].get<long long>() == 1)
    return make_error(origin + ": schema_version: 1 is a golden of the old scheme (one launch's samples, fixed "
                      "tolerances) and is no longer read (schema " + std::to_string(kGoldenSchemaVersion) +
                      ": medians of several launches and their spread); " + rerecord_advice());
  // Version 2 lacks kernel_families (it loads with no kernel set); version 3 requires it; version 4
  // adds band_source to every figure (older ones load as "launches").
  const bool v2 = doc.contains("schema_version") && doc["schema_version"] == 2;
  const bool v3 = doc.contains("schema_version") && doc["schema_version"] == 3;
  std::set<std::string> keys = {"schema_version", "fingerprint", "spread_kind", "figures"};
  if (!v2) keys.insert("kernel_families");
  FP_TRY_STATUS(check_keys(doc, keys, origin, "(top level)"));
  Golden g;
  const json& ver = doc.at("schema_version");
  if (!ver.is_number_integer() || (ver.get<long long>() != kGoldenSchemaVersion && !v2 && !v3))
    return field_error(origin, "schema_version", clipped_json(ver), "2, 3 or " + std::to_string(kGoldenSchemaVersion));
  g.schema_version = static_cast<int>(ver.get<long long>());
  const json& fp_id = doc.at("fingerprint");
  if (!fp_id.is_string() || trim(fp_id.get<std::string>()).empty())
    return field_error(origin, "fingerprint", clipped_json(fp_id), "a non-empty string (the machine fingerprint id)");
  g.fingerprint = fp_id.get<std::string>();
  const json& kind = doc.at("spread_kind");
  if (kind != kSpreadKind) return field_error(origin, "spread_kind", clipped_json(kind), std::string("\"") + kSpreadKind + "\"");
  const json& figs = doc.at("figures");
  if (!figs.is_object() || figs.empty())
    return field_error(origin, "figures", clipped_json(figs), "a non-empty object of figures by name");
  for (const auto& [name, fig] : figs.items()) {
    if (!valid_figure_name(name))
      return field_error(origin, "figures", quote(name), "figure names of letters, digits, '_', '.', '-'");
    FP_TRY(GoldenFigure f, parse_figure(fig, origin, "figures." + name, !v2 && !v3));
    g.figures.emplace(name, f);
  }
  if (v2) return g;
  const json& fams = doc.at("kernel_families");
  if (!fams.is_object())
    return field_error(origin, "kernel_families", clipped_json(fams), "an object of attention kernel families by name ({} for none)");
  for (const auto& [name, fam] : fams.items()) {
    if (!valid_figure_name(name))
      return field_error(origin, "kernel_families", quote(name), "family names of letters, digits, '_', '.', '-'");
    FP_TRY(GoldenKernelFamily f, parse_family(fam, origin, "kernel_families." + name));
    g.kernel_families.emplace(name, f);
  }
  return g;
}

Result<Golden> load_golden(const std::string& path) {
  FP_TRY(std::string text, read_file(path));
  return parse_golden(text, path);
}

Status validate_golden(const Golden& g, const std::string& origin) {
  // Round-tripping through the parser keeps one definition of "valid". NaN/inf would be written as
  // null by the serializer and rejected on the way back, which is the point.
  auto parsed = parse_golden(golden_to_json(g), origin);
  if (!parsed) return parsed.error();
  return ok_status();
}

std::string golden_to_json(const Golden& g) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = kGoldenSchemaVersion;
  doc["fingerprint"] = g.fingerprint;
  doc["spread_kind"] = kSpreadKind;
  doc["figures"] = nlohmann::ordered_json::object();
  for (const auto& [name, f] : g.figures) {  // std::map: sorted by name
    nlohmann::ordered_json o;
    o["median"] = f.median;
    o["spread"] = f.spread;
    o["n"] = f.n;
    o["direction"] = to_string(f.direction);
    o["gate"] = f.gate;
    o["band_source"] = to_string(f.band_source);
    doc["figures"][name] = std::move(o);
  }
  doc["kernel_families"] = nlohmann::ordered_json::object();
  for (const auto& [name, f] : g.kernel_families) {
    nlohmann::ordered_json o;
    o["fused"] = f.fused;
    o["share_median"] = f.share_median;
    o["share_spread"] = f.share_spread;
    o["n"] = f.n;
    doc["kernel_families"][name] = std::move(o);
  }
  return doc.dump(2) + "\n";
}

Status save_golden_atomic(const std::string& path, const Golden& g) {
  FP_TRY_STATUS(validate_golden(g, path + " (not written)"));
  return write_file_atomic(path, golden_to_json(g));
}

}  // namespace fp
