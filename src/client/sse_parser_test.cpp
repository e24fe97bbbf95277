#include "client/sse_parser.h"
#include "testing/recorded_chat.h"

#include <gtest/gtest.h>


namespace fp {
namespace {

struct Collected {
  std::vector<SseEvent> events;
  SseParser parser;
  explicit Collected(size_t max = SseParser::kDefaultMaxEventBytes)
      : parser([this](const SseEvent& e) {
          events.push_back(e);
          return ok_status();
        }, max) {}
};

std::vector<std::string> data_of(const std::vector<SseEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.data);
  return out;
}

// The recorded events' data, without the "data: " prefix.
std::vector<std::string> recorded_data() {
  std::vector<std::string> out;
  for (const auto& e : testing::recorded_chat_events()) out.push_back(e.substr(6));
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

TEST(SseParser, RecordedStreamInOneChunk) {
  Collected c;
  ASSERT_TRUE(c.parser.feed(testing::recorded_chat_stream()));
  EXPECT_EQ(data_of(c.events), recorded_data());
  EXPECT_EQ(c.events.size(), 8u);
  EXPECT_EQ(c.events.back().data, "[DONE]");
  EXPECT_EQ(c.events.front().event, "");
  EXPECT_FALSE(c.parser.has_partial_event());
}

// Every split point, for LF, CRLF (including between CR and LF) and CR line endings.
TEST(SseParser, SplitAtEveryBytePosition) {
  const std::string lf = testing::recorded_chat_stream();
  for (const std::string& stream : {lf, replace_all(lf, "\n", "\r\n"), replace_all(lf, "\n", "\r")}) {
    for (size_t cut = 0; cut <= stream.size(); ++cut) {
      Collected c;
      ASSERT_TRUE(c.parser.feed(std::string_view(stream).substr(0, cut)));
      ASSERT_TRUE(c.parser.feed(std::string_view(stream).substr(cut)));
      ASSERT_EQ(data_of(c.events), recorded_data()) << "cut at byte " << cut;
    }
  }
}

// CRLF read as two breaks would cut a multi-line event in two.
TEST(SseParser, MultiLineDataWithCrlfSplitEverywhere) {
  const std::string stream = "data: a\r\ndata: b\r\n\r\n: note\r\ndata: c\r\n\r\n";
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    Collected c;
    ASSERT_TRUE(c.parser.feed(std::string_view(stream).substr(0, cut)));
    ASSERT_TRUE(c.parser.feed(std::string_view(stream).substr(cut)));
    ASSERT_EQ(data_of(c.events), (std::vector<std::string>{"a\nb", "c"})) << "cut at byte " << cut;
  }
}

TEST(SseParser, ByteByByteCrlf) {
  const std::string stream = replace_all(testing::recorded_chat_stream(), "\n", "\r\n");
  Collected c;
  for (char ch : stream) ASSERT_TRUE(c.parser.feed(std::string_view(&ch, 1)));
  EXPECT_EQ(data_of(c.events), recorded_data());
}

TEST(SseParser, SeveralEventsInOneChunkAndPartialTail) {
  Collected c;
  ASSERT_TRUE(c.parser.feed("data: 1\n\ndata: 2\n\ndata: 3"));
  EXPECT_EQ(data_of(c.events), (std::vector<std::string>{"1", "2"}));
  EXPECT_TRUE(c.parser.has_partial_event());
  ASSERT_TRUE(c.parser.feed("\n"));
  EXPECT_TRUE(c.parser.has_partial_event());  // a data line, but no blank line yet
  ASSERT_TRUE(c.parser.feed("\n"));
  EXPECT_EQ(data_of(c.events), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(c.parser.events_dispatched(), 3u);
}

TEST(SseParser, CommentsAreIgnored) {
  Collected c;
  ASSERT_TRUE(c.parser.feed(": keep-alive\n\n:\ndata: a\n: between lines\ndata: b\n\n"));
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].data, "a\nb");
}

TEST(SseParser, FieldsAndSpaces) {
  Collected c;
  ASSERT_TRUE(c.parser.feed("event: ping\nid: 7\ndata:x\ndata:  two\ndata\n\ndata: plain\n\n"));
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[0].event, "ping");
  EXPECT_EQ(c.events[0].id, "7");
  EXPECT_EQ(c.events[0].data, "x\n two\n");  // one leading space dropped; bare `data` is an empty line
  EXPECT_EQ(c.events[1].event, "");          // event type does not carry over
  EXPECT_EQ(c.events[1].id, "7");            // the last event id does
}

TEST(SseParser, EventWithoutDataIsNotDispatched) {
  Collected c;
  ASSERT_TRUE(c.parser.feed("event: x\nretry: 10\n\n"));
  EXPECT_TRUE(c.events.empty());
  ASSERT_TRUE(c.parser.feed("data:\n\n"));  // an empty data line is an event with empty data
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].data, "");
}

TEST(SseParser, OversizeEventIsAnErrorAndSticks) {
  Collected c(64);
  ASSERT_TRUE(c.parser.feed("data: " + std::string(50, 'a') + "\n\n"));  // fits
  Status st = ok_status();
  for (int i = 0; i < 10 && st; ++i) st = c.parser.feed("data: 0123456789\n");
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("limit of 64 bytes"), std::string::npos) << st.error().message;
  EXPECT_FALSE(c.parser.feed("\n\n"));
  EXPECT_EQ(c.events.size(), 1u);
}

TEST(SseParser, OversizeLineWithoutNewlineIsAnError) {
  Collected c(1000);
  Status st = ok_status();
  int chunks = 0;
  while (st && chunks < 100) {
    st = c.parser.feed(std::string(100, 'z'));
    ++chunks;
  }
  EXPECT_FALSE(st);
  EXPECT_EQ(chunks, 11);  // 1100 bytes > 1000
}

TEST(SseParser, CallbackErrorStopsTheParser) {
  int calls = 0;
  SseParser p([&](const SseEvent& e) -> Status {
    ++calls;
    if (e.data == "bad") return make_error("rejected bad");
    return ok_status();
  });
  Status st = p.feed("data: ok\n\ndata: bad\n\ndata: never\n\n");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "rejected bad");
  EXPECT_EQ(calls, 2);
}

TEST(SseParser, UnknownFieldCallbackSeesLlamaServerErrorLine) {
  Collected c;
  std::string field, value;
  c.parser.set_unknown_field_callback([&](std::string_view f, std::string_view v) {
    field = std::string(f);
    value = std::string(v);
    return ok_status();
  });
  ASSERT_TRUE(c.parser.feed("error: {\"code\":400}\n\ndata: [DONE]\n\n"));
  EXPECT_EQ(field, "error");
  EXPECT_EQ(value, "{\"code\":400}");
  EXPECT_EQ(data_of(c.events), (std::vector<std::string>{"[DONE]"}));
}

}  // namespace
}  // namespace fp
