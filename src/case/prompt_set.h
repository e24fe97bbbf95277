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

// The most bytes one prompt may hold, and why: a prompt that cannot fit the case's context is refused
// when the case loads (with its size and this limit), not after a runtime was launched; and no prompt
// file is held in memory beyond it, however large the file.
struct PromptLimit {
  size_t bytes = size_t{64} << 20;     // no context known: 64 MiB
  std::string why = "the limit for a prompt file when no context is known";
};

// A token stands for this many bytes at most when the model's vocabulary is not at hand (an attached
// server): a bound far above the longest token of a real vocabulary, so that it refuses only prompts
// that cannot fit any tokenizer's context.
inline constexpr size_t kBytesPerTokenUnknownVocabulary = 1024;

// The limit of a context of `context` tokens when no token stands for more than `bytes_per_token`
// bytes: `vocabulary` says where that figure comes from ("the longest token of the model's vocabulary").
PromptLimit prompt_limit(int context, size_t bytes_per_token, const std::string& vocabulary);

// Loads every prompt of a set, sorted by id, from the first of suite.prompt_dirs() that has it; a
// long prompt's document is relative to the suite root. With a long prompt, each prompt's last user message
// is preceded by the document, repeated whole-word-wise to exactly `chars` characters at most.
// Errors name the file: an entry <id>.txt that is not a regular file (a symlink loop, a dangling link,
// a named pipe, a folder), one that cannot be read, one that is not UTF-8 (with the byte offset: a
// prompt is sent as JSON, and repairing it would send another prompt), a prompt over `limit`.
Result<std::vector<Prompt>> load_prompt_set(const Suite& suite, const std::string& set,
                                            const std::optional<LongPrompt>& long_prompt = std::nullopt,
                                            const PromptLimit& limit = PromptLimit{});

// The document repeated to at most `chars` characters, cut at a word boundary. Deterministic.
std::string build_long_text(const std::string& document, size_t chars);

}  // namespace fp
