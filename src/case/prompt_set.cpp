#include "case/prompt_set.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "util/text.h"
#include "util/utf8.h"

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

PromptLimit prompt_limit(int context, size_t bytes_per_token, const std::string& vocabulary) {
  PromptLimit l;
  l.bytes = static_cast<size_t>(std::max(context, 1)) * std::max<size_t>(bytes_per_token, 1);
  l.why = "shape.context " + std::to_string(context) + " tokens x " + std::to_string(bytes_per_token) + " bytes per token at most (" +
          vocabulary + ")";
  return l;
}

namespace {

// A prompt's text: a regular file (after symlinks) of at most limit.bytes, valid UTF-8.
Result<std::string> read_prompt_file(const fs::path& file, const PromptLimit& limit) {
  const std::string path = file.string();
  std::error_code ec;
  const fs::file_status st = fs::status(file, ec);
  if (ec) return make_error(path + ": cannot read the prompt: " + ec.message());
  if (!fs::is_regular_file(st))
    return make_error(path + ": cannot read the prompt: " +
                      (fs::is_directory(st) ? "a folder" : fs::is_fifo(st) ? "a named pipe (FIFO)" : "a special file") +
                      ", not a regular file (a prompt is a text file <id>.txt)");
  const uintmax_t size = fs::file_size(file, ec);
  if (!ec && size > limit.bytes) return make_error(path + ": " + std::to_string(size) + " bytes, more than the " +
                                                   std::to_string(limit.bytes) + " a prompt can hold (" + limit.why +
                                                   "): it cannot fit the case's context; shorten it or raise shape.context");
  FP_TRY(std::string text, read_file(path, limit.bytes));
  if (const size_t at = invalid_utf8_at(text); at != std::string::npos) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[at]));
    return make_error(path + ": byte offset " + std::to_string(at) + " (" + byte +
                      ") is not UTF-8: a prompt must be UTF-8 text (it is sent to the runtime as JSON); save the file as UTF-8");
  }
  return text;
}

// The <id>.txt files of a prompt set's folder, sorted. Errors name the folder and why it cannot be listed.
Result<std::vector<fs::path>> prompt_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->path().extension() == ".txt") files.push_back(it->path());
  if (ec) return make_error(dir.string() + ": cannot list the prompt set: " + ec.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) return make_error(dir.string() + ": holds no prompt (<id>.txt files)");
  return files;
}

}  // namespace

Result<std::vector<Prompt>> load_prompt_set(const Suite& suite, const std::string& set,
                                            const std::optional<LongPrompt>& long_prompt, const PromptLimit& limit) {
  fs::path dir;
  std::vector<std::string> looked;
  for (const std::string& d : suite.prompt_dirs()) {
    looked.push_back((fs::path(d) / set).string());
    std::error_code ec;
    const fs::file_status st = fs::status(looked.back(), ec);
    if (ec && st.type() != fs::file_type::not_found) return make_error(looked.back() + ": cannot read the prompt set folder: " + ec.message());
    if (fs::is_directory(st)) {
      dir = looked.back();
      break;
    }
  }
  if (dir.empty()) return make_error("no such prompt set folder: " + join(looked, " or "));
  FP_TRY(std::vector<fs::path> files, prompt_files(dir));
  std::string prefix;
  if (long_prompt) {
    FP_TRY(std::string doc, read_prompt_file(fs::path(suite.root) / long_prompt->document, limit));
    prefix = build_long_text(doc, long_prompt->chars);
  }
  std::vector<Prompt> out;
  for (const auto& f : files) {
    FP_TRY(std::string text, read_prompt_file(f, limit));
    if (!prefix.empty() && prefix.size() + 2 + text.size() > limit.bytes)
      return make_error(f.string() + ": with the long prompt's " + std::to_string(prefix.size()) + " characters before it, " +
                        std::to_string(prefix.size() + 2 + text.size()) + " bytes, more than the " + std::to_string(limit.bytes) +
                        " a prompt can hold (" + limit.why + "): it cannot fit the case's context");
    FP_TRY(Prompt p, parse_prompt(f.string(), f.stem().string(), text));
    if (!prefix.empty()) p.messages.back().content = prefix + "\n\n" + p.messages.back().content;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace fp
