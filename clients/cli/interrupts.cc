#include "clients/cli/interrupts.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <mutex>
#include <thread>

namespace inspector::cli {
namespace {

// Never destroyed: the waiting thread may use it while the process exits.
struct InterruptState {
  std::mutex mu;
  grpc::ClientContext* call = nullptr;
  int received = 0;
  bool exit_zero = false;
};

InterruptState& State() {
  static InterruptState* state = new InterruptState;
  return *state;
}

sigset_t HandledSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

void WaitForSignals() {
  const sigset_t set = HandledSignals();
  InterruptState& state = State();
  while (true) {
    int signal_number = 0;
    if (sigwait(&set, &signal_number) != 0) continue;
    bool exit_zero = false;
    {
      std::lock_guard<std::mutex> lock(state.mu);
      if (state.call != nullptr && state.received == 0) {
        state.received = signal_number;
        state.call->TryCancel();
        continue;
      }
      exit_zero = state.exit_zero && state.received == 0;
    }
    if (exit_zero) _exit(0);
    DieOfSignal(signal_number, /*flush=*/false);
  }
}

}  // namespace

void InstallInterruptHandling() {
  const sigset_t set = HandledSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  State();
  std::thread(WaitForSignals).detach();
}

CancelOnInterrupt::CancelOnInterrupt(grpc::ClientContext* call) {
  InterruptState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  state.call = call;
}

CancelOnInterrupt::~CancelOnInterrupt() {
  InterruptState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  state.call = nullptr;
}

int InterruptSignal() {
  InterruptState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  return state.received;
}

void ExitZeroOnInterrupt() {
  InterruptState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  state.exit_zero = true;
}

void DieOfSignal(int signal_number, bool flush) {
  if (flush) {
    std::cout.flush();
    std::cerr.flush();
  }
  std::signal(signal_number, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal_number);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  raise(signal_number);
  _exit(128 + signal_number);
}

}  // namespace inspector::cli
