#include "report/html_report.h"

#include "report/html_markup.h"
#include "report/html_sections.h"
#include "report/lenient_json.h"
#include "util/text.h"

namespace fp {
namespace {

using json = nlohmann::json;

// The page checks itself (tests/report/render_check.sh reads these attributes in headless
// Chromium): how many plots there are, how many have a drawn area and marks, and any script error.
const char* kSelfCheck = R"(<script>
(function(){var e=[];window.addEventListener('error',function(x){e.push(String(x.message))});
window.addEventListener('load',function(){var p=document.querySelectorAll('svg.plot'),d=0;
for(var i=0;i<p.length;i++){var b=p[i].getBoundingClientRect();if(b.width>0&&b.height>0&&p[i].querySelector('circle,rect,polyline'))d++;}
var h=document.documentElement;h.setAttribute('data-plots',p.length);h.setAttribute('data-plots-drawn',d);
h.setAttribute('data-errors',e.length);h.setAttribute('data-error-text',e.join(' | '));h.setAttribute('data-rendered','yes');});})();
</script>)";

}  // namespace

std::string render_html_report(const ReportData& d) {
  using namespace html;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
                    "<title>flashproof report: " + esc(d.source) + "</title><style>" + kStyle + "</style></head><body>";
  size_t pass = 0, fail = 0, other = 0;
  for (const auto& c : d.cases) {
    const std::string s = str(c.result, {"status"});
    (s == "pass" ? pass : s == "fail" ? fail : other)++;
  }
  out += "<header><h1>flashproof report</h1><p>" + esc(d.source) + " &middot; " + std::to_string(d.cases.size()) + " case(s): " +
         std::to_string(pass) + " pass, " + std::to_string(fail) + " fail, " + std::to_string(other) + " incomplete &middot; " +
         std::to_string(d.ab_runs.size()) + " A/B run(s) &middot; " + std::to_string(d.matrix_runs.size()) + " matrix run(s) &middot; generated " + esc(d.generated_utc) + "</p></header><main>";
  if (!d.notes.empty()) {
    out += "<div class=\"notes\"><b>Not everything could be read:</b><ul>";
    for (const auto& n : d.notes) out += "<li>" + esc(n) + "</li>";
    out += "</ul></div>";
  }
  out += "<table><tr><th>case</th><th>status</th><th>verdict</th><th>job</th><th>runtime</th><th>first failure</th></tr>";
  for (size_t i = 0; i < d.cases.size(); ++i) {
    const json& r = d.cases[i].result;
    const std::string s = str(r, {"status"}), v = str(r, {"verdict", "state_text"}, str(r, {"verdict", "state"}, "no evidence"));
    auto failures = strings(r, "failures");
    out += "<tr><td><a href=\"#case-" + std::to_string(i) + "\">" + esc(str(r, {"case"})) + "</a></td><td>" + badge(s, status_class(s)) + "</td><td>" +
           badge(v, status_class(v)) + " " + esc(str(r, {"verdict", "backend"})) + "</td><td>" + esc(str(r, {"job"})) + "</td><td>" +
           esc(str(r, {"runtime", "name"}) + " " + str(r, {"runtime", "build"})) + "</td><td>" + esc(failures.empty() ? "" : failures.front()) +
           "</td></tr>";
  }
  for (size_t i = 0; i < d.ab_runs.size(); ++i)
    out += "<tr><td><a href=\"#ab-" + std::to_string(i) + "\">A/B " + esc(str(d.ab_runs[i], {"case"})) + "</a></td><td colspan=\"5\">" +
           esc(str(d.ab_runs[i], {"decision", "text"})) + "</td></tr>";
  for (size_t i = 0; i < d.matrix_runs.size(); ++i)
    out += "<tr><td><a href=\"#matrix-" + std::to_string(i) + "\">matrix " + esc(str(d.matrix_runs[i], {"case"})) + "</a></td><td colspan=\"5\">" +
           esc(std::to_string(d.matrix_runs[i].value("rows", json::array()).size())) + " combinations: " +
           esc(join(strings(d.matrix_runs[i], "axes"), "; ")) + "</td></tr>";
  out += "</table>";
  for (size_t i = 0; i < d.cases.size(); ++i) {
    auto t = d.trends.find(str(d.cases[i].result, {"case"}));
    out += case_section(d.cases[i], t == d.trends.end() ? nullptr : &t->second, i);
  }
  for (size_t i = 0; i < d.ab_runs.size(); ++i) out += ab_section(d.ab_runs[i], d.ab_paths[i], i);
  for (size_t i = 0; i < d.matrix_runs.size(); ++i) out += matrix_section(d.matrix_runs[i], d.matrix_paths[i], i);
  out += "</main>";
  out += kSelfCheck;
  out += "</body></html>\n";
  return out;
}

}  // namespace fp
