// The floor under inspectord's Forward: a relay that does nothing but pass
// lines. It serves McpService.Forward on 127.0.0.1, writes each request's body
// as one line to an MCP server it spawned over stdio, and answers the call with
// the line that carries the same JSON-RPC id. It prints "floor_relay listening
// on 127.0.0.1:PORT" once serving. No token, no parsing beyond the id, no
// history, no timers. A Forward whose server_id is "bare" is answered at once
// with its own body: a bare gRPC round trip of the same process.
//
//   floor_relay --api callback|async|sync|async-inline|async-inline-beside
//       -- COMMAND ARGS...
//
// callback and async hand each answer to its call from a reader thread;
// sync serves one call at a time, its handler thread writing the request
// and reading the answer itself, so no other thread is woken on the way.
// async-inline serves one call at a time on the asynchronous API, the
// queue's thread writing the request, reading the answer and finishing the
// call: the process's only poller does everything. async-inline-beside is
// the same with a service on the callback API registered beside it (its
// methods never called), as in inspectord, where every other service is on
// that API: gRPC then runs two threads of its own that poll too.
//
// forward_bench runs it beside inspectord in the same turns (when built
// with -DINSPECTOR_PERF_TOOLS=ON, or given --floor-relay PATH), so the
// daemon's figures can be read against what gRPC and the stdio hop cost on
// their own on this machine. Runs until its stdin closes or SIGTERM (or
// SIGINT) comes, then stops its server and removes its temporary directory.
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "inspector/v1/system.grpc.pb.h"
#include "tools/bench/direct_stdio.h"

namespace {

using inspector::bench::DirectStdio;
using inspector::bench::IdOf;

// Calls waiting for the server's answer, by JSON-RPC id; `finish` sends
// the answer line back on the caller's call.
class Waiting {
 public:
  using Finish = std::function<void(std::string answer)>;

  void Add(int64_t id, Finish finish) {
    absl::MutexLock lock(&mu_);
    waiting_[id] = std::move(finish);
  }
  void Answer(std::string line) {
    Finish finish;
    {
      absl::MutexLock lock(&mu_);
      auto it = waiting_.find(IdOf(line));
      if (it == waiting_.end()) return;  // a notification, or a log line
      finish = std::move(it->second);
      waiting_.erase(it);
    }
    finish(std::move(line));
  }

 private:
  absl::Mutex mu_;
  std::unordered_map<int64_t, Finish> waiting_ ABSL_GUARDED_BY(mu_);
};

// gRPC's callback API, as inspectord serves its other methods.
class CallbackRelay final
    : public inspector::v1::McpService::WithCallbackMethod_Forward<
          inspector::v1::McpService::Service> {
 public:
  CallbackRelay(DirectStdio* server, Waiting* waiting)
      : server_(server), waiting_(waiting) {}

  grpc::ServerUnaryReactor* Forward(
      grpc::CallbackServerContext* context,
      const inspector::v1::ForwardRequest* request,
      google::api::HttpBody* response) override {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    if (request->server_id() == "bare") {
      response->set_data(request->body().data());
      reactor->Finish(grpc::Status::OK);
      return reactor;
    }
    waiting_->Add(IdOf(request->body().data()),
                  [reactor, response](std::string answer) {
                    response->set_data(std::move(answer));
                    reactor->Finish(grpc::Status::OK);
                  });
    if (!server_->Post(request->body().data()).ok()) {
      reactor->Finish(grpc::Status(grpc::UNAVAILABLE, "server gone"));
    }
    return reactor;
  }

 private:
  DirectStdio* const server_;
  Waiting* const waiting_;
};

// gRPC's asynchronous API: one thread drains the queue; answers are
// finished on the stdio reader's thread, or, with `inline_read`, read and
// finished by the queue's thread itself.
struct AsyncCall {
  grpc::ServerContext context;
  inspector::v1::ForwardRequest request;
  google::api::HttpBody response;
  grpc::ServerAsyncResponseWriter<google::api::HttpBody> writer{&context};
  bool finishing = false;
};

void ServeAsync(inspector::v1::McpService::AsyncService* service,
                grpc::ServerCompletionQueue* queue, DirectStdio* server,
                Waiting* waiting, bool inline_read) {
  auto await = [&] {
    auto* call = new AsyncCall;
    service->RequestForward(&call->context, &call->request, &call->writer,
                            queue, queue, call);
  };
  for (int i = 0; i < 4; ++i) await();
  void* tag = nullptr;
  bool ok = false;
  while (queue->Next(&tag, &ok)) {
    auto* call = static_cast<AsyncCall*>(tag);
    if (call->finishing || !ok) {
      delete call;
      continue;
    }
    await();
    call->finishing = true;
    if (call->request.server_id() == "bare") {
      call->response.set_data(call->request.body().data());
      call->writer.Finish(call->response, grpc::Status::OK, call);
      continue;
    }
    if (inline_read) {
      const std::string& body = call->request.body().data();
      absl::StatusOr<std::string> answer =
          server->Call(body, IdOf(body), absl::Seconds(30));
      if (!answer.ok()) {
        call->writer.FinishWithError(
            grpc::Status(grpc::UNAVAILABLE, "server gone"), call);
        continue;
      }
      call->response.set_data(std::move(*answer));
      call->writer.Finish(call->response, grpc::Status::OK, call);
      continue;
    }
    waiting->Add(IdOf(call->request.body().data()), [call](std::string answer) {
      call->response.set_data(std::move(answer));
      call->writer.Finish(call->response, grpc::Status::OK, call);
    });
    if (!server->Post(call->request.body().data()).ok()) {
      call->writer.FinishWithError(
          grpc::Status(grpc::UNAVAILABLE, "server gone"), call);
    }
  }
}

// gRPC's synchronous API: the handler thread writes the request and reads
// its own answer from the server's stdout, with no other thread between.
class SyncRelay final : public inspector::v1::McpService::Service {
 public:
  explicit SyncRelay(DirectStdio* server) : server_(server) {}

  grpc::Status Forward(grpc::ServerContext* context,
                       const inspector::v1::ForwardRequest* request,
                       google::api::HttpBody* response) override {
    if (request->server_id() == "bare") {
      response->set_data(request->body().data());
      return grpc::Status::OK;
    }
    absl::MutexLock lock(&mu_);
    absl::StatusOr<std::string> answer =
        server_->Call(request->body().data(), IdOf(request->body().data()),
                      absl::Seconds(30));
    if (!answer.ok()) return grpc::Status(grpc::UNAVAILABLE, "server gone");
    response->set_data(std::move(*answer));
    return grpc::Status::OK;
  }

 private:
  DirectStdio* const server_;
  absl::Mutex mu_;
};

int Usage() {
  std::fprintf(
      stderr,
      "usage: floor_relay --api "
      "callback|async|sync|async-inline|async-inline-beside -- COMMAND "
      "ARGS...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string api;
  std::vector<std::string> command;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--api" && i + 1 < argc) {
      api = argv[++i];
    } else if (arg == "--") {
      command.assign(argv + i + 1, argv + argc);
      break;
    } else {
      return Usage();
    }
  }
  const bool inline_read =
      api == "async-inline" || api == "async-inline-beside";
  if ((api != "callback" && api != "async" && api != "sync" && !inline_read) ||
      command.empty()) {
    return Usage();
  }
  inspector::testing::TempDir dir;
  auto server = DirectStdio::Start(command, dir, "floor_relay");
  if (!server.ok()) {
    std::fprintf(stderr, "floor_relay: %s\n",
                 server.status().ToString().c_str());
    return 1;
  }
  // SIGTERM and SIGINT are read from a descriptor below, so every thread
  // started from here on has them blocked and the process ends through
  // the same stop as when stdin closes. After the server's spawn, which
  // would pass the blocked signals on.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const int stop_fd = signalfd(-1, &stop_signals, SFD_CLOEXEC);
  if (stop_fd < 0) {
    std::perror("floor_relay: signalfd");
    return 1;
  }
  Waiting waiting;
  if (api == "callback" || api == "async") {
    (*server)->Relay(
        [&waiting](std::string line) { waiting.Answer(std::move(line)); });
  }

  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  CallbackRelay callback_relay(server->get(), &waiting);
  inspector::v1::McpService::AsyncService async_relay;
  std::unique_ptr<grpc::ServerCompletionQueue> queue;
  SyncRelay sync_relay(server->get());
  // Never called: its presence alone makes gRPC start the callback API's
  // threads.
  inspector::v1::SystemService::CallbackService beside;
  if (api == "callback") {
    builder.RegisterService(&callback_relay);
  } else if (api == "sync") {
    builder.RegisterService(&sync_relay);
    // Pollers that stay: a thread that has run a call goes back to
    // polling rather than ending while another is started, so no thread
    // is created per call (which would cost CPU of its own and hide the
    // threads from the per-thread counts).
    builder.SetSyncServerOption(
        grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
    builder.SetSyncServerOption(
        grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 4);
  } else {
    builder.RegisterService(&async_relay);
    if (api == "async-inline-beside") builder.RegisterService(&beside);
    queue = builder.AddCompletionQueue();
  }
  std::unique_ptr<grpc::Server> grpc_server = builder.BuildAndStart();
  if (grpc_server == nullptr || port == 0) {
    std::fprintf(stderr, "floor_relay: cannot listen\n");
    return 1;
  }
  std::printf("floor_relay listening on 127.0.0.1:%d\n", port);
  std::fflush(stdout);
  std::thread async_thread;
  if (queue != nullptr) {
    async_thread = std::thread([&] {
      ServeAsync(&async_relay, queue.get(), server->get(), &waiting,
                 inline_read);
    });
  }
  // Serves until stdin closes (the bench ends, or dies) or a stop signal
  // comes.
  while (true) {
    pollfd fds[2] = {{0, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0) break;
    char byte;
    if (fds[0].revents != 0 && ::read(0, &byte, 1) <= 0) break;
  }
  grpc_server->Shutdown(std::chrono::system_clock::now());
  if (queue != nullptr) {
    queue->Shutdown();
    async_thread.join();
  }
  (*server)->Stop();
  return 0;
}
