#include "util/text.h"

#include "util/split_list.h"
#include "util/utf8.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

namespace fp {

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
    start = end + 1;
  }
  return lines;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> split_commas(std::string_view text) { return split_list(text, ',', ListItems::NonEmpty); }

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string markup_escape(std::string_view s, bool flatten_newlines) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\n': out += flatten_newlines ? " " : "\n"; break;
      case '\r': if (!flatten_newlines) out += ch; break;
      default: out += ch;
    }
  }
  return out;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    if (++n > 120) {
      out += "...";
      break;
    }
    const char c = s[i];
    // A byte that starts no valid UTF-8 sequence is written as \xNN, so that a quote is valid UTF-8
    // whatever it quotes; a valid multi-byte character is kept whole (never cut by the length limit).
    if (static_cast<unsigned char>(c) >= 0x80) {
      if (const size_t len = utf8_char_at(s, i); len > 0) {
        out.append(s.substr(i, len));
        i += len;
        continue;
      }
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x80) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
    ++i;
  }
  return out + "\"";
}

std::string utc_stamp(const char* fmt) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}

namespace {

// The rest of an open gzip stream, at most `max_bytes` of it.
Result<std::string> gunzip_fd(int fd, const std::string& path, size_t max_bytes) {
  gzFile f = gzdopen(fd, "rb");
  if (!f) {
    ::close(fd);
    return make_error(path + ": cannot open: " + std::strerror(errno));
  }
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) {
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      gzclose(f);
      return make_error(path + ": larger than the limit of " + std::to_string(max_bytes) + " bytes once uncompressed");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  int err = 0;
  const char* msg = gzerror(f, &err);
  const std::string why = msg ? msg : "unknown error";
  gzclose(f);
  if (n < 0 || (err != Z_OK && err != Z_STREAM_END)) return make_error(path + ": corrupt gzip data: " + why);
  return out;
}

// What a file that is not a regular one is, for an error message.
std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a special file";
}

}  // namespace

Result<std::string> read_file(const std::string& path) { return read_file(path, static_cast<size_t>(-1)); }

Result<std::string> read_file(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: a named pipe must not block the harness before fstat can refuse it.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return make_error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  const bool stated = ::fstat(fd, &st) == 0;
  if (!stated || !S_ISREG(st.st_mode)) {
    const std::string why = !stated ? std::string(std::strerror(errno)) : file_kind(st.st_mode) + ", not a regular file";
    ::close(fd);
    return make_error(path + ": cannot read: " + why);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  unsigned char magic[2] = {0, 0};
  if (::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) return gunzip_fd(fd, path, max_bytes);
  std::string out;
  // st_size is 0 for /proc files: read until the end whatever it says, never more than max_bytes.
  if (st.st_size > 0) out.reserve(std::min(static_cast<size_t>(st.st_size), max_bytes));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return make_error(path + ": read error: " + std::strerror(e));
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd);
      return make_error(path + ": larger than the limit of " + std::to_string(max_bytes) + " bytes");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

Status write_file_atomic(const std::string& path, std::string_view content) {
  // A temporary name of its own (O_EXCL: never one that is there already, O_NOFOLLOW: never through a
  // link): two threads or a stale file of an earlier process with the same pid cannot share it.
  static std::atomic<unsigned> writes{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(writes++);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return make_error(path + ": cannot write: " + std::strerror(errno));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t w = ::write(fd, content.data() + done, content.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return make_error(path + ": write failed: " + std::strerror(e));
    }
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return make_error(path + ": fsync/close failed: " + std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return make_error(path + ": rename failed: " + std::strerror(e));
  }
  return ok_status();
}

Status write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files) {
  for (size_t i = 0; i < files.size(); ++i) {
    if (auto st = write_file_atomic(files[i].first, files[i].second); !st) {
      for (size_t k = 0; k < i; ++k) ::unlink(files[k].first.c_str());
      return st;
    }
  }
  return ok_status();
}

std::string with_placeholder(std::string text, const std::string& dir, const std::string& name) {
  if (dir.empty() || dir == "/") return text;
  const auto in_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '/'; };
  for (size_t pos = 0; (pos = text.find(dir, pos)) != std::string::npos;) {
    const size_t end = pos + dir.size();
    const bool starts = pos == 0 || !in_name(text[pos - 1]);
    const bool ends = end == text.size() || text[end] == '/' || !in_name(text[end]);
    if (!starts || !ends) {
      pos = end;
      continue;
    }
    text.replace(pos, dir.size(), name);
    pos += name.size();
  }
  return text;
}

std::string quote_args(const std::vector<std::string>& argv) {
  std::vector<std::string> q;
  for (const auto& a : argv) q.push_back(a.find_first_of(" \t\"'") == std::string::npos && !a.empty() ? a : quote(a));
  return join(q, " ");
}

}  // namespace fp
