// What waiting for the commit costs at the history writer alone, without
// the daemon, gRPC or a server around it: C callers each "answer a call"
// in a loop, appending a request row and its response row (about 200 bytes
// of raw JSON each), and then either
//   async     go on at once (the rows are committed later), or
//   answered  wait until WhenWritten says both rows are committed, as an
//             answer does under --history-sync answered;
// each into a fresh database file, with the two modes interleaved in R
// rounds so that the machine's drift falls on both alike. Prints per mode
// and caller count: calls/s, the p50 and p99 of one call (append, append,
// and for answered the wait), the writer's commits per call and the CPU
// time of the whole process per call (the writer thread included).
//
//   history_sync_bench [--calls N] [--rounds R] [--dir DIR]
//
// N (default 20,000) calls per mode and caller count, split over the
// rounds. Files go to a new directory under DIR (default $TMPDIR or /tmp),
// removed at the end. Exits 0 when the runs complete, 1 on an error.
#include <stdlib.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "storage/history_writer.h"

namespace {

using inspector::storage::HistoryWriter;
using inspector::storage::MessageRecord;

double ProcessCpuSeconds() {
  struct rusage usage;
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) /
             1e6;
}

struct Totals {
  std::vector<double> latencies_us;
  double wall_seconds = 0;
  double cpu_seconds = 0;
  uint64_t batches = 0;
  int64_t calls = 0;
};

MessageRecord Row(HistoryWriter& writer, int caller, int64_t call,
                  bool request) {
  MessageRecord record;
  record.id = writer.NextMessageId();
  record.ts_ms = absl::ToUnixMillis(absl::Now());
  record.server_id = "5b0f2c1e-8d4a-4c6b-9e2f-000000000001";
  record.session_id = absl::StrCat("9c1d7e2a-3b4f-4a5c-8d6e-00000000000",
                                   caller % 10);
  record.client_to_server = request;
  record.kind = request ? "request" : "response";
  record.jsonrpc_id = absl::StrCat(call);
  if (request) {
    record.method = "tools/call";
    record.target = "echo";
    record.raw = absl::StrCat(
        R"({"jsonrpc":"2.0","id":)", call,
        R"(,"method":"tools/call","params":{"name":"echo","arguments":)",
        R"({"message":"hello from caller )", caller,
        R"( lorem ipsum dolor sit amet consectetur adipiscing"}}})");
  } else {
    record.raw = absl::StrCat(
        R"({"jsonrpc":"2.0","id":)", call,
        R"(,"result":{"content":[{"type":"text","text":"hello from caller )",
        caller, R"( lorem ipsum dolor sit amet consectetur adipiscing elit"}]}})");
    record.duration_ms = 0.4;
    record.success = true;
  }
  return record;
}

// One turn: `callers` threads, `calls` calls in all, on `writer`.
void Turn(HistoryWriter& writer, bool answered, int callers, int64_t calls,
          Totals* totals) {
  std::vector<std::vector<double>> latencies(callers);
  const HistoryWriter::Stats before = writer.stats();
  const double cpu_start = ProcessCpuSeconds();
  const absl::Time start = absl::Now();
  std::vector<std::thread> threads;
  for (int c = 0; c < callers; ++c) {
    threads.emplace_back([&, c] {
      const int64_t mine = calls / callers + (c < calls % callers ? 1 : 0);
      latencies[c].reserve(mine);
      for (int64_t i = 0; i < mine; ++i) {
        MessageRecord request = Row(writer, c, i, true);
        MessageRecord response = Row(writer, c, i, false);
        response.correlated_id = request.id;
        const absl::Time t0 = absl::Now();
        writer.Append(std::move(request));
        writer.Append(std::move(response));
        if (answered) {
          absl::Notification written;
          writer.WhenWritten([&written] { written.Notify(); });
          written.WaitForNotification();
        }
        latencies[c].push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
      }
    });
  }
  for (auto& t : threads) t.join();
  totals->wall_seconds += absl::ToDoubleSeconds(absl::Now() - start);
  // The async rows are committed after the turn: their commit is part of
  // their cost.
  (void)writer.Flush();
  totals->cpu_seconds += ProcessCpuSeconds() - cpu_start;
  totals->batches += writer.stats().batches - before.batches;
  totals->calls += calls;
  for (auto& l : latencies) {
    totals->latencies_us.insert(totals->latencies_us.end(), l.begin(),
                                l.end());
  }
}

double Percentile(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(p * static_cast<double>(values.size()));
  return values[std::min(index, values.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  int64_t calls = 20000;
  int rounds = 10;
  std::string dir = getenv("TMPDIR") != nullptr ? getenv("TMPDIR") : "/tmp";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
      calls = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
      dir = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: history_sync_bench [--calls N] [--rounds R] "
                   "[--dir DIR]\n");
      return 1;
    }
  }
  if (calls < 1 || rounds < 1) return 1;
  char pattern[] = "history_sync_bench.XXXXXX";
  std::string root = absl::StrCat(dir, "/", pattern);
  if (::mkdtemp(root.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  std::printf("history_sync_bench: %lld calls (2 rows each) per mode, %d "
              "interleaved rounds; load average at start: ",
              static_cast<long long>(calls), rounds);
  std::fflush(stdout);
  std::system("cut -d' ' -f1-3 /proc/loadavg");
  std::printf("%-9s %8s %10s %9s %9s %13s %13s\n", "mode", "callers",
              "calls/s", "p50 us", "p99 us", "commits/call", "cpu us/call");
  int status = 0;
  for (int callers : {1, 8}) {
    std::unique_ptr<HistoryWriter> writers[2];
    Totals totals[2];
    for (int mode = 0; mode < 2; ++mode) {
      auto writer = HistoryWriter::Start(
          absl::StrCat(root, "/", callers, mode == 0 ? "-async" : "-answered",
                       ".db"));
      if (!writer.ok()) {
        std::fprintf(stderr, "%s\n", writer.status().ToString().c_str());
        return 1;
      }
      writers[mode] = std::move(*writer);
      Turn(*writers[mode], mode == 1, callers, 500, &totals[mode]);  // warm
      totals[mode] = Totals();
    }
    for (int round = 0; round < rounds; ++round) {
      for (int mode = 0; mode < 2; ++mode) {
        Turn(*writers[mode], mode == 1, callers, calls / rounds,
             &totals[mode]);
      }
    }
    for (int mode = 0; mode < 2; ++mode) {
      Totals& t = totals[mode];
      std::printf("%-9s %8d %10.0f %9.1f %9.1f %13.3f %13.1f\n",
                  mode == 0 ? "async" : "answered", callers,
                  static_cast<double>(t.calls) / t.wall_seconds,
                  Percentile(t.latencies_us, 0.5),
                  Percentile(t.latencies_us, 0.99),
                  static_cast<double>(t.batches) /
                      static_cast<double>(t.calls),
                  1e6 * t.cpu_seconds / static_cast<double>(t.calls));
      if (!writers[mode]->Flush().ok()) status = 1;
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(root, ignored);
  return status;
}
