// Prompt sets: <suite prompts>/<set>/<id>.txt (or a set flashproof ships, share/flashproof/prompts), one prompt per file, the file name its stable id.
// A file whose first line is `## system`, `## user` or `## assistant` holds chat turns, each
// introduced by such a line; any other file is one user message.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "case/case_file.h"
#include "case/suite.h"
#include "util/result.h"

namespace fp {

struct Message {
  std::string role;
  std::string content;
};

struct Prompt {
  std::string id;
  std::vector<Message> messages;
  // The prompt as one text, for completion endpoints: the turns' contents joined by blank lines.
  std::string as_text() const;
};

// Loads every prompt of a set, sorted by id, from the first of suite.prompt_dirs() that has it; a
// long prompt's document is relative to the suite root. With a long prompt, each prompt's last user message
// is preceded by the document, repeated whole-word-wise to exactly `chars` characters at most.
Result<std::vector<Prompt>> load_prompt_set(const Suite& suite, const std::string& set,
                                            const std::optional<LongPrompt>& long_prompt = std::nullopt);

// The document repeated to at most `chars` characters, cut at a word boundary. Deterministic.
std::string build_long_text(const std::string& document, size_t chars);

}  // namespace fp
