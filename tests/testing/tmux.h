// A terminal for tests of the TUI: a tmux server of the test's own (its
// socket in the test's directory), running one detached session whose
// screen the test reads and types into, as a user at an 80x24 terminal
// would. Needs Debian's tmux (tools/setup.sh --for-tests).
//
// One object per test; call it from the test's thread.
#ifndef INSPECTOR_TESTS_TESTING_TMUX_H_
#define INSPECTOR_TESTS_TESTING_TMUX_H_

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace inspector::testing {

class Tmux {
 public:
  // A server on `socket`; its session will be named `session`.
  explicit Tmux(std::string socket, std::string session = "tui");
  // Kills the server and what runs in it.
  ~Tmux();
  Tmux(const Tmux&) = delete;
  Tmux& operator=(const Tmux&) = delete;

  // tmux ARGS against this server (in a UTF-8 locale).
  ProcessResult Run(std::vector<std::string> args);
  // Starts `command` (a shell command line) in the detached 80x24 session;
  // false (with a test failure) if tmux refuses.
  bool Start(const std::string& command);
  // What the session shows now.
  std::string Screen();
  // Types `keys` (tmux send-keys names: "Enter", "F5", "q").
  void Keys(const std::vector<std::string>& keys);

  // Until the screen satisfies `done`, up to 60 s; a failure names `what`
  // and shows the last screen.
  ::testing::AssertionResult WaitForScreen(
      const std::string& what,
      const std::function<bool(const std::string&)>& done);
  // Until the screen shows every one of `texts`.
  ::testing::AssertionResult WaitFor(const std::vector<std::string>& texts);
  // Until the session has ended (its program exited), up to 30 s.
  ::testing::AssertionResult WaitSessionGone();

 private:
  std::string socket_;
  std::string session_;
};

}  // namespace inspector::testing

#endif  // INSPECTOR_TESTS_TESTING_TMUX_H_
