// `flashproof report`: one self-contained HTML file (inline CSS and SVG, no script from anywhere,
// no network, no server) for a run folder, a case folder, a fingerprint folder or a whole results
// tree. Per case: the verdict with its evidence, every figure's samples against the golden's
// median and tolerance, memory, answers; per A/B run (ab.json): both arms' distributions side by
// side and memory per arm; per case with a history (results/history.tsv): the trend of its gated
// figures over the runs on this machine, with the change at each runtime build marked; per support
// matrix (matrix.json, `flashproof matrix`): its table, one row per combination.
//
// The data is read by report/report_data.h; the page is made of report/html_sections.h, which draw
// with report/html_plots.h.
#pragma once

#include <string>

#include "report/report_data.h"

namespace fp {

// The HTML page. Deterministic for the same data.
std::string render_html_report(const ReportData& data);

}  // namespace fp
