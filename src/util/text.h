// Small string helpers shared by every part; depends on nothing project-specific.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.h"

namespace fp {

std::vector<std::string> split_lines(std::string_view text);
std::string trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// "a, b,,c" -> {"a", "b", "c"}: trimmed, empty items dropped.
std::vector<std::string> split_commas(std::string_view text);
// Quotes a value for an error message: "value" with control characters escaped, cut at 120 chars.
std::string quote(std::string_view s);
// A command line for a result file: the arguments joined by spaces, one that is empty or holds a
// blank or a quote written with quote().
std::string quote_args(const std::vector<std::string>& argv);

// &, <, >, " and ' as entities: text and attribute values of HTML and XML. With flatten_newlines a
// line break becomes a space and '\r' is dropped (a one-line XML attribute).
std::string markup_escape(std::string_view s, bool flatten_newlines = false);

// Prints to a stream and keeps everything printed (a command's report, written to a file after).
struct TeeText {
  std::ostream& out;
  std::string text;
  void operator()(const std::string& s) {
    out << s << std::flush;
    text += s;
  }
};

// `text` with every occurrence of the folder `dir` (ending a path component) written as `name`, e.g.
// {suite} or {run}: what result files print, so that two runs or two checkouts write the same line.
std::string with_placeholder(std::string text, const std::string& dir, const std::string& name);

// The current UTC time formatted with strftime, e.g. utc_stamp("%Y%m%dT%H%M%SZ").
std::string utc_stamp(const char* fmt);

// Whole file as bytes; transparently gunzips a .gz file (by magic bytes, not by name). Only a regular
// file (after symlinks): a folder, a named pipe or a device is an error naming the path and what it
// is (a pipe would block the harness). With `max_bytes`, more than that (uncompressed) is an error
// and never more than that is held in memory.
Result<std::string> read_file(const std::string& path);
Result<std::string> read_file(const std::string& path, size_t max_bytes);
// Writes path atomically: a temporary file beside it, fsync, then rename. Never leaves half a file.
Status write_file_atomic(const std::string& path, std::string_view content);
// Writes the files (path, content) in order, each with write_file_atomic; when one fails, removes
// those written before it: a run's files say the same thing or are not there (a result.txt saying pass
// beside a result.json that could not be written is how an incomplete run looked green).
Status write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace fp
