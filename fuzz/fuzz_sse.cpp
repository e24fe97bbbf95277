// Fuzzes the SSE parser: the input is fed whole and again in chunks whose sizes come from the
// input's first bytes; both must dispatch the same events and agree on success (a parser that
// depends on where the network cut the bytes is a bug). A small event limit exercises the bound.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client/sse_parser.h"

namespace {

struct Run {
  std::vector<fp::SseEvent> events;
  std::vector<std::string> unknown;
  bool ok = true;
  bool partial = false;
};

Run parse(std::string_view stream, std::string_view cuts, size_t limit) {
  Run r;
  fp::SseParser p(
      [&](const fp::SseEvent& e) -> fp::Status {
        r.events.push_back(e);
        if (e.data == "fail") return fp::make_error("callback refused");  // error path of the callback
        return fp::ok_status();
      },
      limit);
  p.set_unknown_field_callback([&](std::string_view f, std::string_view v) -> fp::Status {
    r.unknown.push_back(std::string(f) + "=" + std::string(v));
    return fp::ok_status();
  });
  size_t i = 0, k = 0;
  while (i < stream.size()) {
    size_t n = cuts.empty() ? stream.size() : 1 + static_cast<unsigned char>(cuts[k++ % cuts.size()]) % 16;
    fp::Status st = p.feed(stream.substr(i, n));
    i += n;
    if (!st) {
      if (st.error().message.empty()) __builtin_trap();
      if (p.feed("data: more\n\n")) __builtin_trap();  // failed once, fails forever
      r.ok = false;
      return r;
    }
  }
  r.partial = p.has_partial_event();
  if (p.events_dispatched() != r.events.size()) __builtin_trap();
  return r;
}

bool same(const Run& a, const Run& b) {
  if (a.ok != b.ok || a.events.size() != b.events.size()) return false;
  for (size_t i = 0; i < a.events.size(); ++i)
    if (a.events[i].data != b.events[i].data || a.events[i].event != b.events[i].event ||
        a.events[i].id != b.events[i].id)
      return false;
  return !a.ok || (a.unknown == b.unknown && a.partial == b.partial);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  // First byte: how many of the next bytes are chunk sizes (0-7); the rest is the stream.
  size_t ncuts = in.empty() ? 0 : static_cast<unsigned char>(in[0]) % 8;
  if (!in.empty()) in.remove_prefix(1);
  std::string_view cuts = in.substr(0, std::min(ncuts, in.size()));
  std::string_view stream = in.substr(cuts.size());
  for (size_t limit : {size_t{64}, fp::SseParser::kDefaultMaxEventBytes}) {
    Run whole = parse(stream, {}, limit);
    Run chunked = parse(stream, cuts.empty() ? std::string_view("\x01") : cuts, limit);
    if (!same(whole, chunked)) __builtin_trap();
  }
  return 0;
}
