// The one place where text from outside (a runtime's log, its command output, a server's body, a
// path) becomes valid UTF-8 before it reaches JSON or a report: nlohmann_json refuses to write a
// string that is not, and a result that cannot be written is worse than one with a U+FFFD in a quote.
// Prompts are not repaired: they are refused at load (case/prompt_set.h), since repairing them would
// send the runtime another prompt than the file holds.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "util/result.h"

namespace fp {

// The byte offset of the first byte that does not belong to a valid UTF-8 sequence (overlong forms,
// surrogates and code points above U+10FFFF are invalid), or std::string_view::npos when all is valid.
size_t invalid_utf8_at(std::string_view s);

// The length (1..4) of the valid UTF-8 character starting at s[i], or 0 when no valid one starts there.
size_t utf8_char_at(std::string_view s, size_t i);

// The largest length <= max_bytes at which valid UTF-8 `s` can be cut without splitting a character.
size_t utf8_cut(std::string_view s, size_t max_bytes);

// `s` with each maximal invalid subpart (Unicode's "substitution of maximal subparts", what
// browsers do) replaced by U+FFFD; *replaced_bytes (when given) gets the number of bytes replaced.
std::string valid_utf8(std::string_view s, size_t* replaced_bytes = nullptr);

// valid_utf8, and the bytes replaced noted under `source` (a file's path, "HTTP response bodies")
// for the run's result (not_utf8_noted). A source read again (a log's head, then the whole log)
// keeps its largest count, not the sum: the count says how many bytes of that source were not text.
std::string valid_utf8_noted(std::string_view s, const std::string& source);

// A file's text (util/text.h read_file) through valid_utf8_noted under its path: how every runtime
// log and runtime output is read.
Result<std::string> read_text_file(const std::string& path);

// What valid_utf8_noted replaced since the last clear, by source; thread-safe. A run clears it at its
// start and writes it into its result.
std::map<std::string, size_t> not_utf8_noted();
void clear_not_utf8_noted();

}  // namespace fp
