#include "case/effect_defaults.h"

#include <algorithm>

#include "case/case_file.h"
#include "util/text.h"

namespace fp {

const std::vector<FloorRow>& floor_table() {
  static const std::vector<FloorRow> rows = [] {
    std::vector<FloorRow> out;
    for (const auto& d : figure_registry())
      if (d.floor > 0) out.push_back({std::string(d.name), d.floor, std::string(d.floor_why)});
    return out;
  }();
  return rows;
}

double default_floor(const std::string& figure) {
  const std::string name = base_figure_name(figure);
  if (const FigureDef* d = figure_def(name)) return d->floor;
  const FloorRow* best = nullptr;
  for (const auto& row : floor_table())
    if (starts_with(name, row.figure + "_") && (!best || row.figure.size() > best->figure.size())) best = &row;
  return best ? best->floor : 0.0;
}

MinEffect default_min_effect(Job, const std::string& figure) { return MinEffect{kDefaultMinEffect, default_floor(figure)}; }

const std::vector<std::string>& user_felt_figures() {
  static const std::vector<std::string> names = user_felt_figure_names();
  return names;
}

bool is_user_felt(const std::string& figure) {
  const FigureDef* d = figure_def(figure);
  return d && d->user_felt;
}

std::optional<MinEffect> default_guard(Job, const std::string& figure) {
  if (!is_user_felt(figure)) return std::nullopt;
  return MinEffect{kDefaultGuardEffect, default_floor(figure)};
}

}  // namespace fp
