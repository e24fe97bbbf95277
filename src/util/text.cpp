#include "util/text.h"

#include "util/split_list.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

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
  for (char c : s) {
    if (++n > 120) {
      out += "...";
      break;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
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

static Result<std::string> gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return make_error(path + ": cannot open: " + std::strerror(errno));
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  int err = 0;
  const char* msg = gzerror(f, &err);
  gzclose(f);
  if (n < 0 || (err != Z_OK && err != Z_STREAM_END))
    return make_error(path + ": corrupt gzip data: " + (msg ? msg : "unknown error"));
  return out;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path + ": cannot open: " + std::strerror(errno));
  char magic[2] = {0, 0};
  in.read(magic, 2);
  if (in.gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
      static_cast<unsigned char>(magic[1]) == 0x8b)
    return gunzip(path);
  in.clear();
  in.seekg(0);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return make_error(path + ": read error");
  return ss.str();
}

Status write_file_atomic(const std::string& path, std::string_view content) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
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
