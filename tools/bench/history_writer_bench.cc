// Throughput of storage::HistoryWriter: appends N small, realistic MCP
// messages (about 200 bytes of raw JSON, requests and their responses
// alternating, responses correlated to their request) from 1 thread and
// then from 4 threads, each run into a fresh database file, and measures
// from the first Append until Flush returns. Requests are about 190 bytes,
// responses about 200. Also times a few history queries over the 4-thread
// file.
//
// The appending threads outrun the writer, so the queue limit is lifted
// (max_queued_bytes = 0) and the figure is the writer's sustained rate.
// Because the machine may be shared, each run also prints the CPU time the
// writer thread used (process CPU minus the appending threads' CPU): the
// messages per writer CPU second are what the writer sustains with a core
// of its own.
//
//   history_writer_bench [--messages N] [--dir DIR] [--keep]
//
// N defaults to 500000 per run (split between the threads). The files go
// to a new directory under DIR (default $TMPDIR or /tmp), removed at the end
// unless --keep. Prints one line per run, then the summary line
//   history_writer: 1 thread X msg/s; 4 threads Y msg/s (bar: >= 100,000)
// Exits 0 when the runs complete (whatever the figures), 1 on an error.
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "storage/history_reader.h"
#include "storage/history_writer.h"

namespace {

using inspector::storage::HistoryReader;
using inspector::storage::HistoryWriter;
using inspector::storage::MessageRecord;

constexpr double kBar = 100000;

// 1234567 -> "1,234,567".
std::string Grouped(double value) {
  std::string digits = absl::StrCat(static_cast<int64_t>(value + 0.5));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// CPU time (user + system) of the whole process so far, in seconds.
double ProcessCpuSeconds() {
  struct rusage usage;
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) /
             1e6;
}

int64_t FileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

// CPU time of the calling thread, in seconds.
double ThreadCpuSeconds() {
  struct timespec ts;
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Appends `count` messages (count/2 request/response pairs) for thread
// `thread`; adds the thread's CPU time to *cpu_seconds.
void Produce(HistoryWriter* writer, int thread, int64_t count,
             double* cpu_seconds) {
  const double cpu_start = ThreadCpuSeconds();
  static const char* const kMethods[] = {"tools/call", "resources/read",
                                         "prompts/get", "tools/list"};
  const std::string server_id =
      "5b0f2c1e-8d4a-4c6b-9e2f-00000000000" + std::to_string(thread % 10);
  const std::string session_id =
      "9c1d7e2a-3b4f-4a5c-8d6e-00000000000" + std::to_string(thread % 10);
  for (int64_t i = 0; i < count; i += 2) {
    const int64_t now = absl::ToUnixMillis(absl::Now());
    const char* method = kMethods[i / 2 % 4];
    const std::string rpc_id = std::to_string(i / 2 + 1);
    // What a request and its response have alike.
    auto message = [&](bool client_to_server) {
      MessageRecord record;
      record.id = writer->NextMessageId();
      record.ts_ms = now;
      record.server_id = server_id;
      record.session_id = session_id;
      record.client_to_server = client_to_server;
      record.kind = client_to_server ? "request" : "response";
      record.jsonrpc_id = rpc_id;
      return record;
    };
    MessageRecord request = message(/*client_to_server=*/true);
    request.method = method;
    request.target = "echo";
    request.raw = absl::StrCat(
        R"({"jsonrpc":"2.0","id":)", rpc_id, R"(,"method":")", method,
        R"(","params":{"name":"echo","arguments":{"message":"hello from )",
        "thread ", thread, " message ", i,
        R"( lorem ipsum dolor sit amet consectetur adipiscing"}}})");
    const int64_t request_id = request.id;
    writer->Append(std::move(request));
    if (i + 1 >= count) break;

    MessageRecord response = message(/*client_to_server=*/false);
    response.raw = absl::StrCat(
        R"({"jsonrpc":"2.0","id":)", rpc_id,
        R"(,"result":{"content":[{"type":"text","text":"hello from thread )",
        thread, " message ", i,
        R"( lorem ipsum dolor sit amet consectetur adipiscing elit sed do )"
        R"(eiusmod tempor"}]}})");
    response.correlated_id = request_id;
    response.duration_ms = 1.5;
    response.success = true;
    writer->Append(std::move(response));
  }
  *cpu_seconds = ThreadCpuSeconds() - cpu_start;
}

struct RunResult {
  bool ok = false;
  double messages_per_second = 0;
  double append_seconds = 0;
  double total_seconds = 0;
  double cpu_seconds = 0;           // of the whole process, all threads
  double producer_cpu_seconds = 0;  // of the appending threads
  int64_t db_bytes = 0;
  HistoryWriter::Stats stats;
};

RunResult RunOnce(const std::string& path, int threads, int64_t messages) {
  RunResult result;
  inspector::storage::HistoryWriterOptions options;
  options.retention_rows = 0;
  // The producers outrun the writer; keep every message queued so that the
  // figure is the writer's sustained rate, not a count of drops.
  options.max_queued_bytes = 0;
  auto writer = HistoryWriter::Start(path, options);
  if (!writer.ok()) {
    std::fprintf(stderr, "cannot start the writer: %s\n",
                 writer.status().ToString().c_str());
    return result;
  }
  const double cpu_start = ProcessCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> producers;
  std::vector<double> producer_cpu(threads);
  for (int t = 0; t < threads; ++t) {
    const int64_t share = messages / threads + (t < messages % threads);
    producers.emplace_back(Produce, writer->get(), t, share, &producer_cpu[t]);
  }
  for (std::thread& producer : producers) producer.join();
  for (double cpu : producer_cpu) result.producer_cpu_seconds += cpu;
  const auto appended = std::chrono::steady_clock::now();
  absl::Status flushed = (*writer)->Flush();
  const auto end = std::chrono::steady_clock::now();
  result.cpu_seconds = ProcessCpuSeconds() - cpu_start;
  if (!flushed.ok()) {
    std::fprintf(stderr, "flush failed: %s\n", flushed.ToString().c_str());
    return result;
  }
  result.stats = (*writer)->stats();
  writer->reset();
  result.append_seconds =
      std::chrono::duration<double>(appended - start).count();
  result.total_seconds = std::chrono::duration<double>(end - start).count();
  result.messages_per_second =
      static_cast<double>(result.stats.written_messages) / result.total_seconds;
  result.db_bytes = FileSize(path) + FileSize(path + "-wal");
  result.ok = result.stats.written_messages == static_cast<uint64_t>(messages);
  if (!result.ok) {
    std::fprintf(stderr, "expected %lld messages, wrote %llu (dropped %llu)\n",
                 static_cast<long long>(messages),
                 static_cast<unsigned long long>(result.stats.written_messages),
                 static_cast<unsigned long long>(result.stats.dropped));
  }
  return result;
}

void PrintRun(int threads, int64_t messages, const RunResult& run) {
  std::printf(
      "  %d thread%s: %s messages in %.3f s (appends done after %.3f s): %s "
      "msg/s; CPU %.2f s (appending threads %.2f s, so the writer thread "
      "about %.2f s: %s msg per writer CPU second); %llu batches, %llu "
      "dropped, file %.1f MiB\n",
      threads, threads == 1 ? "" : "s", Grouped(messages).c_str(),
      run.total_seconds, run.append_seconds,
      Grouped(run.messages_per_second).c_str(), run.cpu_seconds,
      run.producer_cpu_seconds, run.cpu_seconds - run.producer_cpu_seconds,
      Grouped(static_cast<double>(messages) /
              (run.cpu_seconds - run.producer_cpu_seconds))
          .c_str(),
      static_cast<unsigned long long>(run.stats.batches),
      static_cast<unsigned long long>(run.stats.dropped),
      static_cast<double>(run.db_bytes) / (1 << 20));
}

// Times a few QueryHistory / ListMessages calls over `path`.
bool TimeQueries(const std::string& path) {
  auto reader = HistoryReader::Open(path);
  if (!reader.ok()) {
    std::fprintf(stderr, "cannot open the reader: %s\n",
                 reader.status().ToString().c_str());
    return false;
  }
  struct Case {
    const char* name;
    inspector::v1::QueryHistoryRequest request;
  };
  std::vector<Case> cases(4);
  cases[0].name = "history, no filter";
  cases[1].name = "history, method";
  cases[1].request.set_method("tools/call");
  cases[2].name = "history, server";
  cases[2].request.set_server_id("5b0f2c1e-8d4a-4c6b-9e2f-000000000001");
  cases[3].name = "history, text";
  cases[3].request.set_text("message 4242 ");
  for (const Case& c : cases) {
    const auto start = std::chrono::steady_clock::now();
    auto response = (*reader)->QueryHistory(c.request);
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    if (!response.ok()) {
      std::fprintf(stderr, "%s failed: %s\n", c.name,
                   response.status().ToString().c_str());
      return false;
    }
    std::printf("  query %-20s %8.1f ms (%d entries, total %u)\n", c.name, ms,
                response->entries_size(), response->total());
  }
  inspector::v1::ListMessagesRequest list;
  const auto start = std::chrono::steady_clock::now();
  auto messages = (*reader)->ListMessages(list);
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  if (!messages.ok()) return false;
  std::printf("  query %-20s %8.1f ms (%d messages, total %u)\n",
              "messages, no filter", ms, messages->messages_size(),
              messages->total());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t messages = 500000;
  std::string base;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--messages") == 0 && i + 1 < argc) {
      messages = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
      base = argv[++i];
    } else if (std::strcmp(argv[i], "--keep") == 0) {
      keep = true;
    } else {
      std::fprintf(stderr, "usage: %s [--messages N] [--dir DIR] [--keep]\n",
                   argv[0]);
      return 1;
    }
  }
  if (messages <= 0) messages = 500000;
  if (base.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string pattern = base + "/history-writer-bench-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "cannot create a directory under %s\n", base.c_str());
    return 1;
  }
  const std::string dir = pattern;

  std::printf("history_writer_bench: %s messages per run, files in %s\n",
              Grouped(messages).c_str(), dir.c_str());
  const RunResult one = RunOnce(dir + "/one.db", 1, messages);
  if (one.ok) PrintRun(1, messages, one);
  const RunResult four = RunOnce(dir + "/four.db", 4, messages);
  if (four.ok) PrintRun(4, messages, four);
  const bool queries_ok = one.ok && four.ok && TimeQueries(dir + "/four.db");

  if (one.ok && four.ok) {
    std::printf(
        "history_writer: 1 thread %s msg/s; 4 threads %s msg/s (bar: >= "
        "%s); final DB %.1f MiB\n",
        Grouped(one.messages_per_second).c_str(),
        Grouped(four.messages_per_second).c_str(), Grouped(kBar).c_str(),
        static_cast<double>(four.db_bytes) / (1 << 20));
  }
  if (!keep) {
    std::error_code error;
    std::filesystem::remove_all(dir, error);
  }
  return one.ok && four.ok && queries_ok ? 0 : 1;
}
