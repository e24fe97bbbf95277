// The report's sections: one per case run, per A/B run and per support matrix, and the page's style.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report_data.h"

namespace fp::html {

// The page's CSS (inline: the report loads nothing from anywhere).
extern const char* const kStyle;

// One case run: verdict and evidence, figures against the golden, memory, headroom, answers, and
// the trend of its gated figures when `trend` is given. Its anchor is case-<index>.
std::string case_section(const ReportCase& rc, const std::vector<TrendPoint>* trend, size_t index);

// One A/B run (ab.json at `path`): both arms, their distributions, memory per arm, the mechanism.
// Its anchor is ab-<index>.
std::string ab_section(const nlohmann::json& ab, const std::string& path, size_t index);

// A support matrix (report/matrix_report.h): the table as matrix.txt shows it, a row's colour by
// whether the verdict is what its flag asked for. Its anchor is matrix-<index>.
std::string matrix_section(const nlohmann::json& m, const std::string& path, size_t index);

}  // namespace fp::html
