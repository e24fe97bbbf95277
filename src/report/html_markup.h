// Small pieces of the report's HTML: escaping, SVG coordinates, status badges.
#pragma once

#include <string>

namespace fp::html {

// Text and attribute values escaped for HTML.
std::string esc(const std::string& s);

// An SVG coordinate: one decimal is plenty.
std::string px(double v);

// The colour class of a status word: "ok" (pass, active, identical, confirmed), "bad" (fail, not
// active, contradicted, differs), else "warn".
std::string status_class(const std::string& s);

// A coloured label: <span class="badge CLS">TEXT</span>.
std::string badge(const std::string& text, const std::string& cls);

}  // namespace fp::html
