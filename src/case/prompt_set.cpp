#include "case/prompt_set.h"

#include <algorithm>
#include <filesystem>

#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

Result<Prompt> parse_prompt(const std::string& path, const std::string& id, const std::string& text) {
  Prompt p;
  p.id = id;
  const auto lines = split_lines(text);
  if (lines.empty() || !starts_with(lines[0], "## ")) {
    p.messages.push_back({"user", trim(text)});
  } else {
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& line = lines[i];
      if (starts_with(line, "## ")) {
        std::string role = trim(line.substr(3));
        if (role != "system" && role != "user" && role != "assistant")
          return make_error(path + ":" + std::to_string(i + 1) + ": turn header " + quote(line) +
                            "; expected ## system, ## user or ## assistant");
        p.messages.push_back({role, ""});
      } else {
        std::string& c = p.messages.back().content;
        if (!c.empty()) c += "\n";
        c += line;
      }
    }
    for (auto& m : p.messages) m.content = trim(m.content);
  }
  if (p.messages.empty() || p.messages.back().role != "user" || p.messages.back().content.empty())
    return make_error(path + ": the last turn must be a non-empty user message");
  return p;
}

}  // namespace

std::string Prompt::as_text() const {
  std::vector<std::string> parts;
  for (const auto& m : messages) parts.push_back(m.content);
  return join(parts, "\n\n");
}

std::string build_long_text(const std::string& document, size_t chars) {
  std::vector<std::string> words;
  std::string w;
  for (char c : document) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      if (!w.empty()) words.push_back(w), w.clear();
    } else {
      w += c;
    }
  }
  if (!w.empty()) words.push_back(w);
  std::string out;
  if (words.empty()) return out;
  for (size_t i = 0;; ++i) {
    const std::string& next = words[i % words.size()];
    if (out.size() + (out.empty() ? 0 : 1) + next.size() > chars) break;
    if (!out.empty()) out += ' ';
    out += next;
  }
  return out;
}

Result<std::vector<Prompt>> load_prompt_set(const Suite& suite, const std::string& set,
                                            const std::optional<LongPrompt>& long_prompt) {
  fs::path dir;
  std::vector<std::string> looked;
  for (const std::string& d : suite.prompt_dirs()) {
    looked.push_back((fs::path(d) / set).string());
    if (std::error_code ec; fs::is_directory(looked.back(), ec)) {
      dir = looked.back();
      break;
    }
  }
  if (dir.empty()) return make_error("no such prompt set folder: " + join(looked, " or "));
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".txt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) return make_error(dir.string() + ": holds no prompt (<id>.txt files)");
  std::string prefix;
  if (long_prompt) {
    FP_TRY(std::string doc, read_file((fs::path(suite.root) / long_prompt->document).string()));
    prefix = build_long_text(doc, long_prompt->chars);
  }
  std::vector<Prompt> out;
  for (const auto& f : files) {
    FP_TRY(std::string text, read_file(f.string()));
    FP_TRY(Prompt p, parse_prompt(f.string(), f.stem().string(), text));
    if (!prefix.empty()) p.messages.back().content = prefix + "\n\n" + p.messages.back().content;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace fp
