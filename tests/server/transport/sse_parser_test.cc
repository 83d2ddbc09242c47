#include "common/sse_parser.h"

#include <ostream>
#include <string>
#include <vector>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector {

// For readable failure messages (found by argument-dependent lookup).
void PrintTo(const SseEvent& e, std::ostream* os) {
  *os << "{id=" << e.id << " event=" << e.event << " data=" << e.data
      << " retry=" << (e.retry_ms ? std::to_string(*e.retry_ms) : "-") << "}";
}

namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

SseEvent Ev(std::string data, std::string event = "message",
            std::string id = "", std::optional<int64_t> retry = {}) {
  SseEvent e;
  e.data = std::move(data);
  e.event = std::move(event);
  e.id = std::move(id);
  e.retry_ms = retry;
  return e;
}

std::vector<SseEvent> ParseWhole(const std::string& input,
                                 SseParser* parser = nullptr) {
  SseParser local;
  if (parser == nullptr) parser = &local;
  std::vector<SseEvent> events;
  EXPECT_TRUE(parser->Feed(input, &events).ok());
  return events;
}

std::vector<SseEvent> ParseBytewise(const std::string& input) {
  SseParser parser;
  std::vector<SseEvent> events;
  for (char c : input) {
    EXPECT_TRUE(parser.Feed(std::string_view(&c, 1), &events).ok());
  }
  return events;
}

// Every split of `input` into two chunks gives the same events as one.
void ExpectSplitInvariant(const std::string& input) {
  std::vector<SseEvent> whole = ParseWhole(input);
  for (size_t cut = 0; cut <= input.size(); ++cut) {
    SseParser parser;
    std::vector<SseEvent> events;
    ASSERT_TRUE(
        parser.Feed(std::string_view(input).substr(0, cut), &events).ok());
    ASSERT_TRUE(parser.Feed(std::string_view(input).substr(cut), &events).ok());
    EXPECT_EQ(events, whole) << "cut at " << cut;
  }
  EXPECT_EQ(ParseBytewise(input), whole);
}

// Inputs and the data of the events they give (of type "message", no id).
struct DataCase {
  const char* name;
  std::string input;
  std::vector<std::string> data;
};

// Names the case in test listings (not its bytes).
void PrintTo(const DataCase& c, std::ostream* os) { *os << c.name; }

class SseDataTest : public ::testing::TestWithParam<DataCase> {};

TEST_P(SseDataTest, GivesTheseEvents) {
  std::vector<SseEvent> expected;
  for (const std::string& data : GetParam().data) expected.push_back(Ev(data));
  EXPECT_EQ(ParseWhole(GetParam().input), expected);
}

INSTANTIATE_TEST_SUITE_P(
    SseParserTest, SseDataTest,
    ::testing::Values(
        DataCase{"SimpleEvent", "data: hello\n\n", {"hello"}},
        DataCase{"MultipleDataLinesJoinedWithNewline",
                 "data: a\ndata: b\ndata:c\n\n",
                 {"a\nb\nc"}},
        DataCase{"CrLfLineEnds", "data: a\r\ndata: b\r\n\r\n", {"a\nb"}},
        DataCase{"CrLineEnds", "data: a\rdata: b\r\r", {"a\nb"}},
        DataCase{"MixedLineEnds", "data: a\r\n\ndata: b\n\r\n", {"a", "b"}},
        DataCase{"CommentsAreIgnored",
                 ": keepalive\n\n:\ndata: x\n: inside\n\n",
                 {"x"}},
        // A field without a colon has an empty value: "data" alone appends
        // an empty line, "event" alone resets the type.
        DataCase{
            "DataWithoutColonAppendsAnEmptyLine", "data\ndata\n\n", {"\n"}},
        DataCase{"EmptyData", "data:\n\n", {""}},
        DataCase{"EventWithoutColonResetsTheType", "event\ndata: x\n\n", {"x"}},
        DataCase{"OnlyOneLeadingSpaceIsStripped", "data:  two\n\n", {" two"}},
        DataCase{"NoSpaceAfterTheColon", "data:no-space\n\n", {"no-space"}},
        DataCase{"ColonInTheValue", "data: a: b\n\n", {"a: b"}},
        DataCase{"UnknownFieldsAreIgnored",
                 "foo: bar\nData: no\ndata: yes\n\n",
                 {"yes"}}),
    [](const ::testing::TestParamInfo<DataCase>& info) {
      return std::string(info.param.name);
    });

TEST(SseParserTest, EventTypeAndIdAndRetry) {
  SseParser parser;
  auto events = ParseWhole(
      "event: endpoint\nid: 7\nretry: 1500\ndata: /messages\n\n"
      "data: next\n\n",
      &parser);
  EXPECT_THAT(events, ElementsAre(Ev("/messages", "endpoint", "7", 1500),
                                  Ev("next", "message", "7")));
  EXPECT_EQ(parser.last_event_id(), "7");
  EXPECT_EQ(parser.retry_ms(), 1500);
}

TEST(SseParserTest, CrLfSplitAcrossChunksIsOneLineEnd) {
  SseParser parser;
  std::vector<SseEvent> events;
  ASSERT_TRUE(parser.Feed("data: a\r", &events).ok());
  ASSERT_TRUE(parser.Feed("\ndata: b\r", &events).ok());
  ASSERT_TRUE(parser.Feed("", &events).ok());
  ASSERT_TRUE(parser.Feed("\n\r", &events).ok());
  ASSERT_TRUE(parser.Feed("\n", &events).ok());
  // "\r" "\n" is one line end; the final "\r\n" is the empty line.
  EXPECT_THAT(events, ElementsAre(Ev("a\nb")));
}

TEST(SseParserTest, BlockWithoutDataDispatchesNothingButKeepsId) {
  SseParser parser;
  // The MCP priming event: an id and empty data, or just an id.
  auto events = ParseWhole("id: 1\n\nid: 2\nevent: ping\n\n", &parser);
  EXPECT_THAT(events, IsEmpty());
  EXPECT_EQ(parser.last_event_id(), "2");
  // The event type does not leak into the next event.
  events = ParseWhole("data: x\n\n", &parser);
  EXPECT_THAT(events, ElementsAre(Ev("x", "message", "2")));
}

TEST(SseParserTest, IdPersistsAndCanBeReset) {
  EXPECT_THAT(ParseWhole("id: a\ndata: 1\n\ndata: 2\n\nid\ndata: 3\n\n"),
              ElementsAre(Ev("1", "message", "a"), Ev("2", "message", "a"),
                          Ev("3", "message", "")));
}

TEST(SseParserTest, IdWithNulIsIgnored) {
  std::string input =
      std::string("id: good\ndata: 1\n\nid: b") + '\0' + "d\ndata: 2\n\n";
  EXPECT_THAT(ParseWhole(input), ElementsAre(Ev("1", "message", "good"),
                                             Ev("2", "message", "good")));
}

TEST(SseParserTest, IdIsCommittedOnlyAtDispatch) {
  SseParser parser;
  std::vector<SseEvent> events;
  ASSERT_TRUE(parser.Feed("id: 5\ndata: partial\n", &events).ok());
  EXPECT_EQ(parser.last_event_id(), "");
  ASSERT_TRUE(parser.Feed("\n", &events).ok());
  EXPECT_EQ(parser.last_event_id(), "5");
}

TEST(SseParserTest, InvalidRetryIsIgnored) {
  SseParser parser;
  auto events = ParseWhole(
      "retry: 10x\ndata: a\n\nretry: -5\ndata: b\n\nretry:\ndata: c\n\n"
      "retry: 99999999999999999999999\ndata: d\n\nretry: 250\ndata: e\n\n",
      &parser);
  EXPECT_THAT(events, ElementsAre(Ev("a"), Ev("b"), Ev("c"), Ev("d"),
                                  Ev("e", "message", "", 250)));
  EXPECT_EQ(parser.retry_ms(), 250);
}

TEST(SseParserTest, RetryWithoutDataStillCounts) {
  SseParser parser;
  EXPECT_THAT(ParseWhole("retry: 42\n\n", &parser), IsEmpty());
  EXPECT_EQ(parser.retry_ms(), 42);
}

TEST(SseParserTest, ByteOrderMarkAtStartIsSkipped) {
  EXPECT_THAT(ParseWhole("\xEF\xBB\xBF"
                         "data: x\n\n"),
              ElementsAre(Ev("x")));
  // Only one, and only at the start: a second BOM is part of the field name.
  EXPECT_THAT(ParseWhole("\xEF\xBB\xBF\xEF\xBB\xBF"
                         "data: x\n\ndata: y\n\n"),
              ElementsAre(Ev("y")));
  // A BOM split over chunks.
  SseParser parser;
  std::vector<SseEvent> events;
  ASSERT_TRUE(parser.Feed("\xEF", &events).ok());
  ASSERT_TRUE(parser.Feed("\xBB", &events).ok());
  ASSERT_TRUE(parser
                  .Feed("\xBF"
                        "data: z\n\n",
                        &events)
                  .ok());
  EXPECT_THAT(events, ElementsAre(Ev("z")));
}

TEST(SseParserTest, BomPrefixThatIsNotABom) {
  SseParser parser;
  std::vector<SseEvent> events;
  ASSERT_TRUE(parser.Feed("\xEF", &events).ok());
  ASSERT_TRUE(parser.Feed("x\ndata: y\n\n", &events).ok());
  EXPECT_THAT(events, ElementsAre(Ev("y")));
}

TEST(SseParserTest, UnterminatedEventIsNotDispatched) {
  EXPECT_THAT(ParseWhole("data: a\n\ndata: b\n"), ElementsAre(Ev("a")));
  EXPECT_THAT(ParseWhole("data: a\n\ndata: b"), ElementsAre(Ev("a")));
}

TEST(SseParserTest, ChunkingDoesNotChangeTheResult) {
  ExpectSplitInvariant(
      "\xEF\xBB\xBF: hi\r\nevent: e1\r\nid: 1\r\ndata: one\r\ndata: two\r\n"
      "\r\nretry: 30\rdata: three\r\rid: 2\n\ndata:four\n\n");
  ExpectSplitInvariant("data: a\r\r\ndata: b\n\r\r\n");
}

TEST(SseParserTest, DataOverLimitIsAnError) {
  SseParser parser(10);
  std::vector<SseEvent> events;
  ASSERT_TRUE(parser.Feed("data: 0123456789\n\n", &events).ok());
  EXPECT_THAT(events, ElementsAre(Ev("0123456789")));
  // Two lines joined: 5 + 1 + 5 = 11 bytes.
  absl::Status status = parser.Feed("data: 01234\ndata: 56789\n\n", &events);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ErrorReason(status), "TOO_LARGE");
  // Sticky until Reset.
  EXPECT_EQ(parser.Feed("data: x\n\n", &events).code(),
            absl::StatusCode::kResourceExhausted);
  parser.Reset();
  ASSERT_TRUE(parser.Feed("data: x\n\n", &events).ok());
  EXPECT_THAT(events, SizeIs(2));
}

TEST(SseParserTest, LongLineIsAnErrorEvenWithoutLineEnd) {
  SseParser parser(10);
  std::vector<SseEvent> events;
  std::string comment = ":" + std::string(10 + SseParser::kLineSlack - 1, 'x');
  EXPECT_TRUE(parser.Feed(comment, &events).ok());
  EXPECT_EQ(parser.Feed("y", &events).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(SseParserTest, EventsBeforeTheErrorAreReturned) {
  SseParser parser(4);
  std::vector<SseEvent> events;
  absl::Status status = parser.Feed("data: ok\n\ndata: too long\n\n", &events);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(events, ElementsAre(Ev("ok")));
}

TEST(SseParserTest, ResetKeepsLastEventIdAndRetry) {
  SseParser parser;
  std::vector<SseEvent> events;
  ASSERT_TRUE(
      parser.Feed("id: 9\nretry: 5\ndata: a\n\nid: 10\ndata: par", &events)
          .ok());
  parser.Reset();
  EXPECT_EQ(parser.last_event_id(), "9");
  EXPECT_EQ(parser.retry_ms(), 5);
  ASSERT_TRUE(parser.Feed("data: b\n\n", &events).ok());
  EXPECT_THAT(events,
              ElementsAre(Ev("a", "message", "9", 5), Ev("b", "message", "9")));
}

TEST(SseParserTest, SetLastEventId) {
  SseParser parser;
  parser.set_last_event_id("42");
  std::vector<SseEvent> events;
  ASSERT_TRUE(parser.Feed("data: x\n\n", &events).ok());
  EXPECT_THAT(events, ElementsAre(Ev("x", "message", "42")));
}

TEST(SseParserTest, BinaryBytesPassThrough) {
  std::string data = "\x01\xff\xfe";
  EXPECT_THAT(ParseWhole("data: " + data + "\n\n"), ElementsAre(Ev(data)));
}

}  // namespace
}  // namespace inspector
