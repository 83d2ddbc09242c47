// End-to-end tests of `inspectorctl tui` in a real terminal: tmux runs it
// at 80x24 (the narrow, stacked layout) against a real inspectord and the
// fixture server; the test types keys with send-keys and reads the screen
// with capture-pane, waiting for what it expects with a deadline.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/daemon_clients.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/tmux.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace tui_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::kFixtureServer;
using ::testing::Not;
using testing::ProcessResult;
using testing::TempDir;
using testing::Tmux;
using testing::WaitUntil;

class TuiE2eTest : public testing::DaemonFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartDaemon());
    ASSERT_EQ(Ctl({"servers", "add", "fixture", "--", "node", kFixtureServer,
                   "stdio"})
                  .exit_code,
              0);
    ASSERT_EQ(Ctl({"connect", "fixture"}).exit_code, 0);
    // Until this inspectord implements InterceptService, every intercept
    // command exits 8 ("not available"): nothing here can be exercised.
    ProcessResult state = Ctl({"intercept", "status"});
    if (state.exit_code == 8 &&
        state.err.find("not available") != std::string::npos) {
      GTEST_SKIP() << "inspectord does not implement InterceptService yet";
    }
    ASSERT_EQ(state.exit_code, 0) << state.err;
  }

  // The shell command line tmux runs: inspectorctl tui with this daemon,
  // in the test's directory (where `s` writes its export).
  std::string TuiCommand(const std::string& editor,
                         const std::string& addr = "",
                         const std::string& args = "") {
    return absl::StrCat(
        "cd '", dir_.path(), "' && env LC_ALL=C.UTF-8 TERM=xterm-256color VISUAL= EDITOR='", editor,
        "' INSPECTOR_ADDR=", addr.empty() ? daemon_->address() : addr,
        " INSPECTOR_TOKEN_FILE='", daemon_->token_file(), "' ",
        INSPECTORCTL_PATH, " tui", args);
  }
};

TEST_F(TuiE2eTest, ModifyAHeldToolCallAndSeeTheChangedResult) {
  ProcessResult bp =
      Ctl({"break", "add", "method=tools/call,target=echo,direction=c2s"});
  ASSERT_EQ(bp.exit_code, 0) << bp.err;
  const std::string editor = dir_.File("edit.sh");
  testing::WriteFile(
      editor, "#!/bin/sh\nsed -i 's/from-the-client/changed-in-the-tui/' \"$1\"\n");
  ASSERT_EQ(chmod(editor.c_str(), 0755), 0);

  Tmux tmux(dir_.File("tmux.sock"));
  ASSERT_TRUE(tmux.Start(TuiCommand(editor)));
  ASSERT_TRUE(tmux.WaitFor({"[PASSTHROUGH]", "F5 Fwd"}));

  std::future<ProcessResult> call = std::async(std::launch::async, [this] {
    return Ctl({"call", "fixture", "echo", "message=from-the-client"});
  });
  // Held: marked in the list. The daemon's pings keep arriving, so the
  // filter picks the echo call out (and selects it).
  ASSERT_TRUE(tmux.WaitFor({"⏸", "tools/call [echo]  held h-", "held: 1"}));
  tmux.Keys({"/", "t", "a", "r", "g", "e", "t", ":", "e", "c", "h", "o",
             "Enter"});
  ASSERT_TRUE(tmux.WaitFor({"HELD h-", "\"method\": \"tools/call\""}));
  tmux.Keys({"F6"});
  ASSERT_TRUE(tmux.WaitFor({"modified", "held: 0"}));
  ProcessResult result = call.get();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("changed-in-the-tui"));
  // The answer arrives and, the selection following the newest message,
  // its changed result is on screen.
  ASSERT_TRUE(tmux.WaitFor(
      {"← tools/call (response)", "\"text\": \"changed-in-the-tui\""}));

  // The filter narrows the list; Esc clears it.
  tmux.Keys({"/", "Escape"});  // clears target:echo
  tmux.Keys({"/", "m", "e", "t", "h", "o", "d", ":", "x", "y", "z"});
  ASSERT_TRUE(tmux.WaitFor({"Filter: method:xyz_", "no message matches"}));
  tmux.Keys({"Escape"});
  ASSERT_TRUE(tmux.WaitFor({"tools/call [echo]"}));

  // i switches to INTERCEPT and back.
  tmux.Keys({"i"});
  ASSERT_TRUE(tmux.WaitFor({"[INTERCEPT]"}));
  EXPECT_THAT(Ctl({"intercept", "status"}).out, HasSubstr("INTERCEPT"));
  tmux.Keys({"i"});
  ASSERT_TRUE(tmux.WaitFor({"[PASSTHROUGH]"}));

  tmux.Keys({"q"});
  EXPECT_TRUE(tmux.WaitSessionGone());
}

// `e` explores a server: its skills (numbered) and tools; a digit shows
// that skill through skills/get. A server without the skills extension
// says so and still lists its tools.
TEST_F(TuiE2eTest, ExploreAServersSkillsAndTools) {
  ASSERT_EQ(Ctl({"servers", "add", "skilled", "--env", "FIXTURE_SKILLS=1",
                 "--", "node", kFixtureServer, "stdio"})
                .exit_code,
            0);
  Tmux tmux(dir_.File("tmux.sock"));
  ASSERT_TRUE(tmux.Start(TuiCommand("true", "", " --server skilled")));
  ASSERT_TRUE(tmux.WaitFor({"F5 Fwd"}));
  tmux.Keys({"e"});
  ASSERT_TRUE(tmux.WaitFor(
      {"EXPLORE skilled", "Skills (2)", "[1] git-workflow", "[2] tampered",
       " 2 skills"}));
  tmux.Keys({"2"});
  ASSERT_TRUE(tmux.WaitFor({"SKILL tampered (skills/get)",
                            "skill://fixture/tampered/SKILL.md"}));
  tmux.Keys({"1"});
  ASSERT_TRUE(tmux.WaitFor({"SKILL git-workflow (skills/get)"}));
  tmux.Keys({"Escape"});
  ASSERT_TRUE(tmux.WaitFor({"F5 Fwd"}));
  tmux.Keys({"q"});
  EXPECT_TRUE(tmux.WaitSessionGone());

  // The plain fixture has no skills: the report says why, tools stay.
  Tmux plain(dir_.File("tmux-plain.sock"));
  ASSERT_TRUE(plain.Start(TuiCommand("true", "", " --server fixture")));
  ASSERT_TRUE(plain.WaitFor({"F5 Fwd"}));
  plain.Keys({"e"});
  ASSERT_TRUE(plain.WaitFor({"EXPLORE fixture", "Skills: the list failed",
                             "Tools ("}));
  plain.Keys({"q"});
  EXPECT_TRUE(plain.WaitSessionGone());
}

TEST_F(TuiE2eTest, ForwardAndDropFromTheKeyboard) {
  ASSERT_EQ(
      Ctl({"break", "add", "method=tools/call,target=echo,direction=c2s"})
          .exit_code,
      0);
  Tmux tmux(dir_.File("tmux.sock"));
  ASSERT_TRUE(tmux.Start(TuiCommand("true")));
  ASSERT_TRUE(tmux.WaitFor({"[PASSTHROUGH]"}));
  // Only the echo calls (the daemon's pings would take the selection).
  tmux.Keys({"/", "t", "a", "r", "g", "e", "t", ":", "e", "c", "h", "o",
             "Enter"});

  std::future<ProcessResult> forwarded = std::async(std::launch::async, [this] {
    return Ctl({"call", "fixture", "echo", "message=as-sent"});
  });
  ASSERT_TRUE(tmux.WaitFor({"held h-", "held: 1"}));
  // F6 with an editor that changes nothing: nothing sent, still held.
  tmux.Keys({"F6"});
  ASSERT_TRUE(tmux.WaitFor({"unchanged: nothing sent"}));
  tmux.Keys({"F5"});
  ASSERT_TRUE(tmux.WaitFor({"forwarded", "held: 0"}));
  EXPECT_THAT(forwarded.get().out, HasSubstr("as-sent"));

  std::future<ProcessResult> dropped = std::async(std::launch::async, [this] {
    return Ctl({"call", "fixture", "echo", "message=never"});
  });
  ASSERT_TRUE(tmux.WaitFor({"held h-", "held: 1"}));
  tmux.Keys({"F8"});
  ASSERT_TRUE(tmux.WaitFor({"dropped", "held: 0"}));
  EXPECT_NE(dropped.get().exit_code, 0);
  // F5 on a message that is not held says so.
  tmux.Keys({"F5"});
  ASSERT_TRUE(tmux.WaitFor({"not held"}));
  tmux.Keys({"q"});
  EXPECT_TRUE(tmux.WaitSessionGone());
}

// The session files `s` wrote into `dir`.
std::vector<std::string> SessionFiles(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("session-", 0) == 0 && name.size() > 5 &&
        name.substr(name.size() - 5) == ".json") {
      found.push_back(entry.path().string());
    }
  }
  return found;
}

TEST_F(TuiE2eTest, ReplayARequestAndExportItsSession) {
  ASSERT_EQ(Ctl({"call", "fixture", "echo", "message=first-call"}).exit_code,
            0);
  // The TUI's backlog is read from history, which commits up to ~50 ms
  // after the answer: wait for the call's row first.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Ctl({"history", "--method", "tools/call"}).out.find("echo") !=
               std::string::npos;
      },
      absl::Seconds(30), "history has the echo call"));
  Tmux tmux(dir_.File("tmux.sock"));
  ASSERT_TRUE(tmux.Start(TuiCommand("true")));
  ASSERT_TRUE(tmux.WaitFor({"[PASSTHROUGH]"}));
  // The echo call and its answer (from the backlog); k selects the call.
  tmux.Keys({"/", "t", "a", "r", "g", "e", "t", ":", "e", "c", "h", "o",
             "Enter"});
  ASSERT_TRUE(tmux.WaitFor({"Filter: target:echo   2/"}));
  tmux.Keys({"G", "k"});
  ASSERT_TRUE(tmux.WaitFor({"\"method\": \"tools/call\""}));
  // r on an answer is refused; on the request it is sent again, and the
  // replayed call and its answer join the list.
  tmux.Keys({"j", "r"});
  ASSERT_TRUE(tmux.WaitFor({"select a recorded client-to-server request"}));
  tmux.Keys({"k", "r"});
  ASSERT_TRUE(tmux.WaitFor({"replayed #", ": answer #",
                            "Filter: target:echo   4/"}));
  const std::string screen = tmux.Screen();
  EXPECT_THAT(screen, Not(HasSubstr("(error)"))) << screen;

  // s writes the selected message's session into the current directory.
  ASSERT_THAT(SessionFiles(dir_.path()), IsEmpty());
  tmux.Keys({"g", "s"});
  ASSERT_TRUE(tmux.WaitFor({"session exported to"}));
  std::vector<std::string> files = SessionFiles(dir_.path());
  ASSERT_EQ(files.size(), 1u);
  struct stat info;
  ASSERT_EQ(stat(files[0].c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
  nlohmann::json exported =
      nlohmann::json::parse(testing::ReadFile(files[0]), nullptr, false);
  ASSERT_FALSE(exported.is_discarded()) << testing::ReadFile(files[0]);
  EXPECT_THAT(exported.dump(), HasSubstr("first-call"));
  // The file is a session the daemon takes back.
  ProcessResult imported = Ctl({"sessions", "import", files[0]});
  EXPECT_EQ(imported.exit_code, 0) << imported.err;
  tmux.Keys({"q"});
  EXPECT_TRUE(tmux.WaitSessionGone());
}

// The issue's story: a person stops a client's tools/call, edits its
// arguments, sends it; later replays the whole session against the server
// and sees what changed. The breakpoint is still set during the replay,
// so the replayed call is held as well and forwarded from the keyboard
// while the replay waits for it.
TEST_F(TuiE2eTest, EditAHeldCallThenReplayTheSessionAndSeeWhatChanged) {
  ProcessResult listed = Ctl({"rpc", "fixture", "tools/list"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  ASSERT_EQ(
      Ctl({"break", "add", "method=tools/call,target=echo,direction=c2s"})
          .exit_code,
      0);
  const std::string editor = dir_.File("edit.sh");
  testing::WriteFile(
      editor, "#!/bin/sh\nsed -i 's/from-the-client/edited-in-the-tui/' \"$1\"\n");
  ASSERT_EQ(chmod(editor.c_str(), 0755), 0);

  Tmux tmux(dir_.File("tmux.sock"));
  ASSERT_TRUE(tmux.Start(TuiCommand(editor)));
  ASSERT_TRUE(tmux.WaitFor({"[PASSTHROUGH]"}));
  tmux.Keys({"/", "t", "a", "r", "g", "e", "t", ":", "e", "c", "h", "o",
             "Enter"});
  std::future<ProcessResult> call = std::async(std::launch::async, [this] {
    return Ctl({"call", "fixture", "echo", "message=from-the-client"});
  });
  ASSERT_TRUE(tmux.WaitFor({"held h-", "held: 1"}));
  tmux.Keys({"F6"});
  ASSERT_TRUE(tmux.WaitFor({"modified", "held: 0"}));
  ProcessResult result = call.get();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("edited-in-the-tui"));
  ASSERT_TRUE(tmux.WaitFor({"\"text\": \"edited-in-the-tui\""}));

  // Then the server changes (its tools/list now comes in pages of two),
  // and R replays the whole session against it. Its echo call meets the
  // breakpoint again.
  ProcessResult updated =
      Ctl({"servers", "update", "fixture", "--env", "FIXTURE_PAGE_SIZE=2"});
  ASSERT_EQ(updated.exit_code, 0) << updated.err;
  tmux.Keys({"R"});
  ASSERT_TRUE(tmux.WaitFor({"replaying session"}));
  ASSERT_TRUE(tmux.WaitFor({"held h-", "held: 1"}));
  // The screen is live meanwhile; the held replayed call is the newest
  // row, selected, and it carries the edited arguments.
  ASSERT_TRUE(tmux.WaitFor({"HELD h-2"}));
  ProcessResult held = Ctl({"-o", "json", "held"});
  ASSERT_EQ(held.exit_code, 0) << held.err;
  EXPECT_THAT(held.out, HasSubstr("edited-in-the-tui"));
  tmux.Keys({"F5"});
  // The diff against the recording: tools/list changed (a page, and a
  // cursor to the next); the echo answers the same (the edited call was
  // recorded as sent), so it is not listed.
  ASSERT_TRUE(tmux.WaitFor({"REPLAY of session", "answers changed:",
                            "tools/list changed", "+ /result/nextCursor"}));
  EXPECT_THAT(tmux.Screen(), Not(HasSubstr("tools/call changed")));
  // The replay is a session of its own, kind replay, of the recorded one.
  ProcessResult sessions = Ctl({"-o", "json", "sessions", "list", "--kind",
                                "replay"});
  ASSERT_EQ(sessions.exit_code, 0) << sessions.err;
  EXPECT_THAT(sessions.out, HasSubstr("replayOf"));
  // Esc closes the report: the selected message is shown again.
  tmux.Keys({"Escape"});
  ASSERT_TRUE(tmux.WaitFor({"F5 Fwd"}));
  EXPECT_THAT(tmux.Screen(), Not(HasSubstr("REPLAY of session")));
  tmux.Keys({"q"});
  EXPECT_TRUE(tmux.WaitSessionGone());
}

TEST(TuiUnreachableTest, UnreachableDaemonExitsWithCodeFour) {
  TempDir dir;
  Tmux tmux(dir.File("tmux.sock"));
  // A port nothing listens on; `read` keeps the pane open to be read.
  testing::RefusingPort refusing;
  ASSERT_TRUE(tmux.Start(absl::StrCat(
      "env LC_ALL=C.UTF-8 TERM=xterm-256color INSPECTOR_ADDR=127.0.0.1:",
      refusing.port(), " INSPECTOR_TOKEN=0123456789abcdef ",
      INSPECTORCTL_PATH, " tui; echo \"exit=$?\"; read line")));
  ASSERT_TRUE(tmux.WaitFor({"exit=4"}));
  EXPECT_THAT(tmux.Screen(), HasSubstr("error: inspectord is not running"));
}

}  // namespace
}  // namespace tui_e2e_test
}  // namespace inspector
