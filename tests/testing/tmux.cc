#include "tests/testing/tmux.h"

#include <utility>

#include "absl/time/time.h"
#include "tests/testing/wait_until.h"

namespace inspector::testing {

Tmux::Tmux(std::string socket, std::string session)
    : socket_(std::move(socket)), session_(std::move(session)) {}

Tmux::~Tmux() { Run({"kill-server"}); }

ProcessResult Tmux::Run(std::vector<std::string> args) {
  args.insert(args.begin(), {"tmux", "-u", "-S", socket_});
  return RunProcess(args, {{"LC_ALL", "C.UTF-8"}});
}

bool Tmux::Start(const std::string& command) {
  ProcessResult started = Run(
      {"new-session", "-d", "-s", session_, "-x", "80", "-y", "24", command});
  if (started.exit_code != 0) ADD_FAILURE() << started.err;
  return started.exit_code == 0;
}

std::string Tmux::Screen() {
  return Run({"capture-pane", "-p", "-t", session_}).out;
}

void Tmux::Keys(const std::vector<std::string>& keys) {
  std::vector<std::string> args = {"send-keys", "-t", session_};
  args.insert(args.end(), keys.begin(), keys.end());
  ProcessResult sent = Run(args);
  EXPECT_EQ(sent.exit_code, 0) << sent.err;
}

::testing::AssertionResult Tmux::WaitForScreen(
    const std::string& what,
    const std::function<bool(const std::string&)>& done) {
  std::string screen;
  ::testing::AssertionResult shown = WaitUntil(
      [&] {
        screen = Screen();
        return done(screen);
      },
      absl::Seconds(60), "the screen shows " + what);
  if (!shown) shown << ":\n" << screen;
  return shown;
}

::testing::AssertionResult Tmux::WaitFor(
    const std::vector<std::string>& texts) {
  return WaitForScreen(::testing::PrintToString(texts),
                       [&](const std::string& screen) {
                         for (const std::string& text : texts) {
                           if (screen.find(text) == std::string::npos) {
                             return false;
                           }
                         }
                         return true;
                       });
}

::testing::AssertionResult Tmux::WaitSessionGone() {
  ::testing::AssertionResult gone = WaitUntil(
      [&] {
        return Run({"has-session", "-t", session_}).exit_code != 0;
      },
      absl::Seconds(30), "the tmux session " + session_ + " has ended");
  if (!gone) gone << ":\n" << Screen();
  return gone;
}

}  // namespace inspector::testing
