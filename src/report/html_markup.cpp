#include "report/html_markup.h"

#include <cstdio>

#include "util/text.h"

namespace fp::html {

std::string esc(const std::string& s) { return markup_escape(s); }

std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string status_class(const std::string& s) {
  if (s == "pass" || s == "active" || s == "identical" || s == "confirmed") return "ok";
  if (s == "fail" || s == "not active" || s == "contradicted" || s == "differs") return "bad";
  return "warn";
}

std::string badge(const std::string& text, const std::string& cls) { return "<span class=\"badge " + cls + "\">" + esc(text) + "</span>"; }

}  // namespace fp::html
