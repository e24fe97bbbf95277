// Reference answers: one plain-text file per prompt id, <dir>/<prompt_id>.txt, holding the exact
// bytes the model answered when the golden was accepted. The comparison is exact byte equality;
// the diff exists only to show a person what changed.
//
// Readable diffs of unreadable answers: a random-weight model can answer with one long line of
// garbage. Before diffing, each line is cut for display into pieces of at most `wrap_width`
// characters (default 80): at the last space inside the width (the space stays on the left piece),
// or, when there is none, at the width itself; a byte that is not UTF-8 counts as one character and
// shows as U+FFFD, so every piece is valid UTF-8. Every piece but the
// last of a cut line ends with a '\' so a wrap is never mistaken for a real newline. Since display
// pieces can hide a difference (a trailing newline, "\r"), the diff also says where the first
// difference is, by character (and by byte where that differs), quoting whole characters from the
// character that holds the first differing byte: every quote is valid UTF-8.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace fp {

inline constexpr size_t kAnswerWrapWidth = 80;

struct AnswerComparison {
  bool identical = false;
  // Empty when identical. Otherwise:
  //   --- reference/<prompt_id>
  //   +++ run/<prompt_id>
  //   @@ -a,b +c,d @@ hunks (dtl, 3 lines of context) over the display pieces
  //   first difference at character N[, byte B] (line L, column C): reference has X, run has Y
  std::string diff;
};

// Exact comparison of one answer, with a readable unified diff when the bytes differ.
AnswerComparison compare_answer(const std::string& prompt_id, std::string_view expected, std::string_view actual,
                                size_t wrap_width = kAnswerWrapWidth);

// Display pieces of `text` as described above (exposed for tests and reports).
std::vector<std::string> wrap_for_diff(std::string_view text, size_t wrap_width = kAnswerWrapWidth);

// A prompt id is a file name stem: letters, digits, '_', '-', '.', not starting with '.'.
Status validate_prompt_id(const std::string& prompt_id);
// <dir>/<prompt_id>.txt
std::string answer_path(const std::string& dir, const std::string& prompt_id);

// The stored reference answer; an error (naming the path) when there is none or it cannot be read.
Result<std::string> load_reference_answer(const std::string& dir, const std::string& prompt_id);

enum class AnswerChangeKind { added, changed, unchanged };
const char* to_string(AnswerChangeKind k);

struct PlannedAnswerChange {
  std::string prompt_id;
  AnswerChangeKind kind = AnswerChangeKind::unchanged;
  std::string diff;  // for changed: compare_answer's diff; empty otherwise
};

// What save_reference_answers would do with `answers` (prompt id -> answer), in prompt id order,
// without writing anything. Files in `dir` that `answers` does not mention are left alone.
Result<std::vector<PlannedAnswerChange>> plan_answer_changes(const std::string& dir,
                                                             const std::map<std::string, std::string>& answers);

// Writes every added or changed answer atomically (write_file_atomic), creating `dir` if needed,
// and returns the plan it carried out. Unchanged files are not rewritten.
Result<std::vector<PlannedAnswerChange>> save_reference_answers(const std::string& dir,
                                                                const std::map<std::string, std::string>& answers);

}  // namespace fp
