// The report's SVG plots, drawn inline: a run's samples against its golden, the two arms of an A/B
// run, bars of memory, a figure's trend over the runs. Deterministic for the same data.
#pragma once

#include <string>
#include <vector>

#include "report/report_data.h"

namespace fp::html {

// One horizontal bar: label, value (MiB), colour class.
struct Bar {
  std::string label, cls;
  double value = 0;
};

// A run's samples of one figure against the golden (none when `g` is null): the golden median,
// the tolerance band up to the limit, the samples with their box and median.
std::string figure_vs_golden_plot(const std::string& name, const std::vector<double>& s, const GoldenMark* g);

// A/B: the arms' samples of one figure on one axis.
std::string ab_plot(const std::string& name, const std::vector<double>& off, const std::vector<double>& on);

// Horizontal bars of MiB; `kind` names the plot (data-plot), `title` labels it.
std::string bars_plot(const std::string& kind, const std::string& title, const std::vector<Bar>& bars);

// A figure's medians over the runs of one case, oldest left; a dashed line where the runtime build
// changed, labelled with the step (red when worse).
std::string trend_plot(const std::string& figure, const std::vector<TrendPoint>& pts, bool lower_better);

}  // namespace fp::html
