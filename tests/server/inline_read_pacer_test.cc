#include "server/services/inline_read_pacer.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::services {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;

TEST(InlineReadPacerTest, ACallThatIsNotAloneNeverReadsInline) {
  InlineReadPacer pacer;
  EXPECT_FALSE(pacer.Next(/*waiting=*/false, /*alone=*/false));
  EXPECT_FALSE(pacer.last_read_inline());
  EXPECT_TRUE(pacer.Next(false, true));
  EXPECT_TRUE(pacer.last_read_inline());
  EXPECT_FALSE(pacer.Next(false, false));
}

TEST(InlineReadPacerTest, ASequentialCallerReadsEveryAnswerInline) {
  InlineReadPacer pacer;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(pacer.Next(false, true)) << "call " << i;
  }
}

TEST(InlineReadPacerTest, AWaitingCallPausesInlineReadsForFourCalls) {
  InlineReadPacer pacer;
  ASSERT_TRUE(pacer.Next(false, true));
  // The next call had waited: it and the three after it leave their
  // answers to the reader, alone or not.
  std::vector<bool> inline_reads;
  inline_reads.push_back(pacer.Next(/*waiting=*/true, true));
  for (int i = 0; i < 3; ++i) inline_reads.push_back(pacer.Next(false, true));
  EXPECT_THAT(inline_reads, Each(false));
  EXPECT_TRUE(pacer.Next(false, true));
}

TEST(InlineReadPacerTest, ThePauseDoublesWhileCallsKeepWaitingUpTo256) {
  InlineReadPacer pacer;
  ASSERT_TRUE(pacer.Next(false, true));
  // Concurrent callers: after every inline read, the next call waited.
  std::vector<int> pauses;
  bool waiting = true;
  for (int round = 0; round < 9; ++round) {
    int pause = 0;
    while (!pacer.Next(waiting, true)) {
      waiting = false;  // calls during the pause do not count
      ++pause;
    }
    pauses.push_back(pause);
    waiting = true;  // after this inline read the next call waited again
  }
  EXPECT_THAT(pauses, ElementsAre(4, 8, 16, 32, 64, 128, 256, 256, 256));
}

TEST(InlineReadPacerTest, AnInlineReadWithNothingWaitingResetsThePause) {
  InlineReadPacer pacer;
  ASSERT_TRUE(pacer.Next(false, true));
  for (int round = 0; round < 3; ++round) {  // pauses of 4, 8, 16
    ASSERT_FALSE(pacer.Next(true, true));
    while (!pacer.Next(false, true)) {
    }
  }
  // This inline read found nothing waiting: the pause is 4 again.
  ASSERT_TRUE(pacer.Next(false, true));
  int pause = 0;
  ASSERT_FALSE(pacer.Next(true, true));
  ++pause;
  while (!pacer.Next(false, true)) ++pause;
  EXPECT_EQ(pause, 4);
}

TEST(InlineReadPacerTest, WaitingAfterACallThatDidNotReadInlineIsIgnored) {
  InlineReadPacer pacer;
  ASSERT_FALSE(pacer.Next(false, false));
  // The thread does not check for waiting calls after such a call; a
  // stray `waiting` does not start a pause.
  EXPECT_TRUE(pacer.Next(true, true));
}

}  // namespace
}  // namespace inspector::services
