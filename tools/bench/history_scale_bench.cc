// The history at scale: builds a history of N messages with a realistic
// mix through the real storage::HistoryWriter, with the daemon's full-text
// indexer (storage::HistoryIndexer) running beside it, then times every
// query shape that the API, CLI and UI offer (HistoryReader::QueryHistory
// and ListMessages; first pages, a deep keyset page, the old deep offset
// page for comparison) p50 and p99 over many runs while the writer keeps
// appending. Prints bytes per message on disk against the payload bytes,
// the write rates, and each target with PASS or MISS.
//
// The mix: 50 servers, 5,000 sessions; request/response pairs (5% errors),
// 10% notifications, 1% server-initiated requests; tools/call, resources/
// read, prompts/get, tools/list, ...; request payloads 100 B to 2 KB,
// results 100 B to 100 KB with a long tail (median about 130 B, mean about
// 3.5 KB) and one 5 MB result in 250,000 messages (stored cut to the
// writer's 1 MiB). Text is made of a vocabulary of 4,000 words; one call in
// 10,000 carries the rare word "zebracorn", one in 20 the word "weather".
//
//   history_scale_bench [--messages N] [--dir DIR] [--keep] [--runs R]
//                       [--append-rate M] [--history FILE]
//                       [--no-comparisons]
//
// N defaults to 200,000 (a quick run); the targets are for 10,000,000. The
// file goes to a new directory under DIR (default $TMPDIR or /tmp), removed
// at the end unless --keep. R (default 30) runs per query shape. M
// (default 200: ten times a busy week's average) messages per second
// appended while the queries run. --history FILE times the queries on a
// history an earlier run kept (--keep) instead of building one: the file
// is appended to and indexed, never removed; "now" is its newest message.
// --no-comparisons leaves out the shapes timed for comparison only (the
// deep offset page and the 2-character scan, minutes at 10 M).
// Also measures the writer's rate with small (200-byte) messages with the
// index on and, in turns in the same run, without it (the baseline the
// index's cost is judged against). Exits 0 when every
// step ran (whatever the figures), 1 on an error.
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/clock/timer_queue.h"
#include "storage/database.h"
#include "storage/history_index.h"
#include "storage/history_reader.h"
#include "storage/history_writer.h"
#include "tools/bench/report.h"

namespace {

using inspector::storage::Database;
using inspector::storage::HistoryIndexer;
using inspector::storage::HistoryReader;
using inspector::storage::HistoryWriter;
using inspector::storage::MessageRecord;
namespace v1 = inspector::v1;

constexpr int kServers = 50;
constexpr int kSessions = 5000;

std::string Grouped(double value) {
  std::string digits = absl::StrCat(static_cast<int64_t>(value + 0.5));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

int64_t FileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

std::string ServerId(int n) {
  char id[40];
  std::snprintf(id, sizeof(id), "5b0f2c1e-8d4a-4c6b-9e2f-%012d", n);
  return id;
}

std::string SessionId(int n) {
  char id[40];
  std::snprintf(id, sizeof(id), "9c1d7e2a-3b4f-4a5c-8d6e-%012d", n);
  return id;
}

// Makes the realistic traffic, deterministically.
class Traffic {
 public:
  explicit Traffic(uint64_t seed) : rng_(seed) {
    static const char* const kSyllables[] = {
        "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa",
        "qu", "ri", "do", "fe", "gu", "ha", "ji", "ko", "lu", "ma",
        "no", "pe", "si", "ta", "ul", "ve", "wi", "xo", "ya", "zu"};
    std::uniform_int_distribution<int> syllable(0, 29);
    std::uniform_int_distribution<int> length(1, 4);
    for (int i = 0; i < 4000; ++i) {
      std::string word;
      for (int n = length(rng_); n > 0; --n) word += kSyllables[syllable(rng_)];
      words_.push_back(word);
    }
  }

  // Appends one step of traffic at `ts` (a call and its answer, a
  // notification, or a server's request and the client's answer); returns
  // the number of messages.
  int Step(HistoryWriter& writer, int64_t ts) {
    const int session = Uniform(0, kSessions - 1);
    const int server = session % kServers;
    const int kind = Uniform(0, 99);
    if (kind < 10) {
      MessageRecord note =
          Base(writer, ts, server, session, false, "notification");
      note.method =
          kind < 5 ? "notifications/progress" : "notifications/message";
      note.raw = absl::StrCat(R"({"jsonrpc":"2.0","method":")", note.method,
                              R"(","params":{"data":")", Text(Size(80, 600)),
                              R"("}})");
      writer.Append(std::move(note));
      return 1;
    }
    const bool from_server = kind == 10;
    static const char* const kMethods[] = {
        "tools/call", "tools/call",  "tools/call",     "tools/call",
        "tools/call", "tools/call",  "resources/read", "resources/read",
        "tools/list", "prompts/get", "resources/list", "ping"};
    const char* method =
        from_server ? (Uniform(0, 1) ? "sampling/createMessage" : "roots/list")
                    : kMethods[Uniform(0, 11)];
    MessageRecord request =
        Base(writer, ts, server, session, !from_server, "request");
    request.method = method;
    const std::string rpc_id = absl::StrCat(request.id);
    request.jsonrpc_id = rpc_id;
    std::string words =
        Text(static_cast<size_t>(100 * std::pow(20.0, Real() * Real())));
    if (Uniform(0, 9999) == 0) words += " zebracorn";
    if (Uniform(0, 19) == 0) words += " weather";
    if (std::strcmp(method, "tools/call") == 0) {
      request.target = absl::StrCat("tool_", words_[Uniform(0, 199)]);
    } else if (std::strcmp(method, "resources/read") == 0) {
      request.target = absl::StrCat("file:///data/", words_[Uniform(0, 999)]);
    } else if (std::strcmp(method, "prompts/get") == 0) {
      request.target = absl::StrCat("prompt_", words_[Uniform(0, 49)]);
    }
    request.raw =
        absl::StrCat(R"({"jsonrpc":"2.0","id":)", rpc_id, R"(,"method":")",
                     method, R"(","params":{"name":")", request.target,
                     R"(","arguments":{"text":")", words, R"("}}})");
    const int64_t request_id = request.id;
    writer.Append(std::move(request));

    const bool error = Uniform(0, 19) == 0;
    MessageRecord answer = Base(writer, ts + Uniform(1, 300), server, session,
                                from_server, error ? "error" : "response");
    answer.jsonrpc_id = rpc_id;
    answer.correlated_id = request_id;
    answer.duration_ms = Uniform(1, 300);
    answer.success = !error;
    if (error) {
      answer.error_code = "-32603";
      answer.raw = absl::StrCat(R"({"jsonrpc":"2.0","id":)", rpc_id,
                                R"(,"error":{"code":-32603,"message":")",
                                Text(Size(40, 300)), R"("}})");
    } else {
      size_t size =
          static_cast<size_t>(100 * std::pow(1000.0, std::pow(Real(), 5)));
      if (Uniform(0, 124999) == 0) size = 5 << 20;
      answer.raw =
          absl::StrCat(R"({"jsonrpc":"2.0","id":)", rpc_id,
                       R"(,"result":{"content":[{"type":"text","text":")",
                       Text(size), R"("}]}})");
    }
    writer.Append(std::move(answer));
    return 2;
  }

 private:
  MessageRecord Base(HistoryWriter& writer, int64_t ts, int server, int session,
                     bool client_to_server, const char* kind) {
    MessageRecord record;
    record.id = writer.NextMessageId();
    record.ts_ms = ts;
    record.server_id = ServerId(server);
    record.session_id = SessionId(session);
    record.client_to_server = client_to_server;
    record.kind = kind;
    return record;
  }
  int Uniform(int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(rng_);
  }
  double Real() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  size_t Size(int low, int high) {
    return static_cast<size_t>(Uniform(low, high));
  }
  // About `bytes` of words.
  std::string Text(size_t bytes) {
    std::string text;
    text.reserve(bytes + 16);
    std::uniform_int_distribution<int> word(0, 3999);
    while (text.size() < bytes) {
      // Zipf-like: low word numbers are much more frequent.
      const int n = word(rng_);
      text += words_[(n * n) / 4000];
      text += ' ';
    }
    return text;
  }

  std::mt19937_64 rng_;
  std::vector<std::string> words_;
};

struct Figures {
  double p50 = 0;
  double p99 = 0;
};

Figures Time(int runs, const std::function<bool()>& query) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (!query()) return Figures{-1, -1};
    ms.push_back(Seconds(start) * 1000);
  }
  std::sort(ms.begin(), ms.end());
  Figures figures;
  figures.p50 = ms[ms.size() / 2];
  figures.p99 = ms[std::min(ms.size() - 1, (ms.size() * 99) / 100)];
  return figures;
}

const char* Mark(bool met) { return met ? "PASS" : "MISS"; }

struct Shape {
  std::string name;
  bool history = true;  // QueryHistory, else ListMessages
  v1::QueryHistoryRequest query;
  v1::ListMessagesRequest list;
  // kCompare: timed for comparison only, no target applies.
  enum Kind { kFirst, kDeep, kText, kDeepOffset, kCompare } kind = kFirst;
};

// The writer's rate with small messages (the history_writer_bench load,
// one thread) into a new file at `path`: with the text indexer running
// beside it as in the daemon, or, if !with_index, with no indexer and the
// full-text triggers dropped (no index at all).
double SmallMessageRate(const std::string& path, inspector::Clock* clock,
                        int64_t messages, bool with_index) {
  std::error_code error;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::remove(path + suffix, error);
  }
  if (!with_index) {
    // A migrated file without the triggers that keep the index
    // (storage/schema.cc, migration 13): inserts pay nothing for it.
    auto db = Database::Open(path);
    if (!db.ok()) return -1;
    for (const char* trigger :
         {"messages_fts_queue", "messages_fts_delete", "messages_fts_update"}) {
      if (!(*db)->Exec(absl::StrCat("DROP TRIGGER IF EXISTS ", trigger)).ok()) {
        return -1;
      }
    }
  }
  std::unique_ptr<HistoryIndexer> indexer;
  inspector::storage::HistoryWriterOptions options;
  options.retention_rows = 0;
  options.retention_age = absl::ZeroDuration();
  options.max_queued_bytes = 0;
  if (with_index) {
    auto started = HistoryIndexer::Start(path, clock);
    if (!started.ok()) return -1;
    indexer = *std::move(started);
    options.on_messages_written = [raw = indexer.get()] { raw->Notify(); };
  }
  auto writer = HistoryWriter::Start(path, options);
  if (!writer.ok()) return -1;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < messages; i += 2) {
    MessageRecord request;
    request.id = (*writer)->NextMessageId();
    request.ts_ms = 1700000000000 + i;
    request.server_id = ServerId(static_cast<int>(i % 10));
    request.session_id = SessionId(static_cast<int>(i % 10));
    request.kind = "request";
    request.jsonrpc_id = absl::StrCat(i);
    request.method = "tools/call";
    request.target = "echo";
    request.raw = absl::StrCat(
        R"({"jsonrpc":"2.0","id":)", i,
        R"(,"method":"tools/call","params":{"name":"echo","arguments":)",
        R"({"message":"hello from message )", i,
        R"( lorem ipsum dolor sit amet consectetur adipiscing"}}})");
    MessageRecord response = request;
    response.id = (*writer)->NextMessageId();
    response.client_to_server = false;
    response.kind = "response";
    response.method.clear();
    response.target.clear();
    response.correlated_id = request.id;
    response.success = true;
    response.raw = absl::StrCat(
        R"({"jsonrpc":"2.0","id":)", i,
        R"(,"result":{"content":[{"type":"text","text":"hello from message )",
        i,
        R"( lorem ipsum dolor sit amet consectetur adipiscing elit sed"}]}})");
    (*writer)->Append(std::move(request));
    (*writer)->Append(std::move(response));
  }
  if (!(*writer)->Flush().ok()) return -1;
  const double rate = static_cast<double>(messages) / Seconds(start);
  if (!with_index) {
    std::printf("  small messages: %s msg/s written with no text index\n",
                Grouped(rate).c_str());
    return rate;
  }
  const auto catch_up = std::chrono::steady_clock::now();
  auto indexed = indexer->IndexPending();
  std::printf(
      "  small messages: %s msg/s written with the indexer running; the "
      "indexer caught up %.1f s after the last commit (%lld left then)\n",
      Grouped(rate).c_str(), Seconds(catch_up),
      static_cast<long long>(indexed.ok() ? *indexed : -1));
  return rate;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t messages = 200000;
  std::string base;
  bool keep = false;
  int runs = 30;
  int append_rate = 200;
  std::string history;
  bool comparisons = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--messages") == 0 && i + 1 < argc) {
      messages = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
      base = argv[++i];
    } else if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--append-rate") == 0 && i + 1 < argc) {
      append_rate = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--history") == 0 && i + 1 < argc) {
      history = argv[++i];
    } else if (std::strcmp(argv[i], "--no-comparisons") == 0) {
      comparisons = false;
    } else if (std::strcmp(argv[i], "--keep") == 0) {
      keep = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--messages N] [--dir DIR] [--keep] [--runs R] "
                   "[--append-rate M] [--history FILE] [--no-comparisons]\n",
                   argv[0]);
      return 1;
    }
  }
  if (base.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string pattern = base + "/history-scale-bench-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "cannot create a directory under %s\n", base.c_str());
    return 1;
  }
  const std::string dir = pattern;
  const std::string path = history.empty() ? dir + "/history.db" : history;
  inspector::TimerQueue clock;
  if (!history.empty()) {
    auto db = Database::Open(path);
    if (!db.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(),
                   db.status().ToString().c_str());
      return 1;
    }
    auto count = (*db)->Prepare("SELECT count(*) FROM messages");
    if (!count.ok() || !count->Step().value_or(false)) return 1;
    messages = count->ColumnInt64(0);
  }
  std::printf("history_scale_bench: %s messages %s %s (CPU %s, load %s)\n",
              Grouped(messages).c_str(), history.empty() ? "into" : "in",
              path.c_str(), inspector::bench::CpuModel().c_str(),
              inspector::bench::LoadAverage().c_str());
  bool ok = true;
  auto finish = [&](int code) {
    if (!keep) {
      std::error_code error;
      std::filesystem::remove_all(dir, error);
    }
    return code;
  };

  // 1. Build.
  inspector::storage::HistoryWriterOptions options;
  options.retention_rows = 0;
  options.retention_age = absl::ZeroDuration();
  options.max_queued_bytes = 0;
  auto indexer = HistoryIndexer::Start(path, &clock);
  if (!indexer.ok()) {
    std::fprintf(stderr, "indexer: %s\n", indexer.status().ToString().c_str());
    return finish(1);
  }
  // As in the daemon: the writer's commits wake the indexer.
  options.on_messages_written = [raw = indexer->get()] { raw->Notify(); };
  auto writer = HistoryWriter::Start(path, options);
  if (!writer.ok()) {
    std::fprintf(stderr, "writer: %s\n", writer.status().ToString().c_str());
    return finish(1);
  }
  Traffic traffic(42);
  // A week of traffic, ending now (or at the given history's last message).
  int64_t now_ms = absl::ToUnixMillis(absl::Now());
  if (!history.empty()) {
    auto db = Database::Open(path);
    if (!db.ok()) return finish(1);
    auto newest = (*db)->Prepare("SELECT max(ts) FROM messages");
    if (!newest.ok() || !newest->Step().value_or(false)) return finish(1);
    now_ms = newest->ColumnInt64(0);
  }
  const int64_t first_ts = now_ms - 7 * 24 * 3600 * 1000LL;
  const double step_ms = 7.0 * 24 * 3600 * 1000 / static_cast<double>(messages);
  const auto build_start = std::chrono::steady_clock::now();
  int64_t written = history.empty() ? 0 : messages;
  int64_t next_flush = 20000;
  while (written < messages) {
    written += traffic.Step(**writer,
                            first_ts + static_cast<int64_t>(written * step_ms));
    if (written >= next_flush) {
      // Bounds the queue's memory: the producer outruns the writer.
      if (!(*writer)->Flush().ok()) ok = false;
      next_flush += 20000;
      if (written % 1000000 < 20000 && written >= 1000000) {
        std::printf("  ... %s messages, %.0f s\n", Grouped(written).c_str(),
                    Seconds(build_start));
        std::fflush(stdout);
      }
    }
  }
  if (!(*writer)->Flush().ok()) ok = false;
  const double build_seconds = Seconds(build_start);
  const auto catch_up_start = std::chrono::steady_clock::now();
  auto left = (*indexer)->IndexPending();
  const double catch_up_seconds = Seconds(catch_up_start);
  if (!left.ok()) {
    std::fprintf(stderr, "index: %s\n", left.status().ToString().c_str());
    return finish(1);
  }
  int64_t payload = 0;
  int64_t stored = 0;
  int64_t disk_bytes = 0;
  {
    auto db = Database::Open(path);
    if (!db.ok()) return finish(1);
    auto sums = (*db)->Prepare(
        "SELECT sum(raw_size), sum(length(CAST(raw AS BLOB))) FROM messages");
    if (!sums.ok() || !sums->Step().value_or(false)) return finish(1);
    payload = sums->ColumnInt64(0);
    stored = sums->ColumnInt64(1);
    // The file's pages in use (the WAL, which the busy writer and indexer
    // may keep from being truncated, is reported apart).
    auto pages = (*db)->Prepare(
        "SELECT (p.page_count - f.freelist_count) * s.page_size FROM"
        " pragma_page_count() AS p, pragma_freelist_count() AS f,"
        " pragma_page_size() AS s");
    if (pages.ok() && pages->Step().value_or(false)) {
      disk_bytes = pages->ColumnInt64(0);
    }
  }
  const int64_t disk = disk_bytes;
  if (!history.empty()) {
    std::printf("  indexed the %s messages left to index in %.1f s\n",
                Grouped(static_cast<double>(*left)).c_str(), catch_up_seconds);
  } else {
    std::printf(
        "  built %s messages in %.1f s: %s msg/s, %.1f MB/s of payload, with "
        "the indexer running; it had %s messages left to index at the end, "
        "done %.1f s later\n",
        Grouped(written).c_str(), build_seconds,
        Grouped(written / build_seconds).c_str(),
        static_cast<double>(stored) / build_seconds / 1e6,
        Grouped(static_cast<double>(*left)).c_str(), catch_up_seconds);
  }
  std::printf(
      "  disk %.1f MiB in use (WAL %.1f MiB apart): %s bytes per message; "
      "payload %.1f MiB as sent (%.1f MiB stored after the 1 MiB cut): "
      "%.2fx the stored payload\n",
      disk / 1048576.0, FileSize(path + "-wal") / 1048576.0,
      Grouped(static_cast<double>(disk) / written).c_str(), payload / 1048576.0,
      stored / 1048576.0,
      static_cast<double>(disk) / static_cast<double>(stored));

  // 2. Queries, while the writer keeps appending.
  std::atomic<bool> stop{false};
  std::atomic<int64_t> appended{0};
  std::thread appender([&] {
    Traffic more(7);
    const auto start = std::chrono::steady_clock::now();
    while (!stop.load()) {
      appended += more.Step(**writer, absl::ToUnixMillis(absl::Now()));
      // Holds the pace: sleeps while ahead of append_rate.
      const double due = static_cast<double>(appended.load()) / append_rate;
      const double ahead = due - Seconds(start);
      if (ahead > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(ahead));
      }
    }
  });
  const auto query_start = std::chrono::steady_clock::now();
  auto reader = HistoryReader::Open(path);
  if (!reader.ok()) return finish(1);

  std::vector<Shape> shapes;
  auto add = [&](const std::string& name, Shape::Kind kind,
                 const std::function<void(v1::QueryHistoryRequest*)>& set) {
    Shape shape;
    shape.name = name;
    shape.kind = kind;
    set(&shape.query);
    if (shape.query.limit() == 0) shape.query.set_limit(50);
    shapes.push_back(shape);
  };
  auto add_list =
      [&](const std::string& name, Shape::Kind kind,
          const std::function<void(v1::ListMessagesRequest*)>& set) {
        Shape shape;
        shape.name = name;
        shape.kind = kind;
        shape.history = false;
        set(&shape.list);
        if (shape.list.limit() == 0) shape.list.set_limit(50);
        shapes.push_back(shape);
      };
  const std::string server = ServerId(7);
  const std::string session = SessionId(1207);
  const double since = static_cast<double>(now_ms - 6 * 3600 * 1000LL);
  using Q = v1::QueryHistoryRequest;
  using L = v1::ListMessagesRequest;
  add("history: no filter", Shape::kFirst, [](Q*) {});
  add("history: server", Shape::kFirst,
      [&](Q* q) { q->set_server_id(server); });
  add("history: method", Shape::kFirst,
      [](Q* q) { q->set_method("resources/read"); });
  add("history: session", Shape::kFirst,
      [&](Q* q) { q->set_session_id(session); });
  add("history: direction (client)", Shape::kFirst,
      [](Q* q) { q->set_direction(v1::CLIENT_TO_SERVER); });
  add("history: direction (server)", Shape::kFirst,
      [](Q* q) { q->set_direction(v1::SERVER_TO_CLIENT); });
  add("history: time range (6 h)", Shape::kFirst,
      [&](Q* q) { q->set_since(since); });
  add("history: server + method", Shape::kFirst, [&](Q* q) {
    q->set_server_id(server);
    q->set_method("prompts/get");
  });
  add("history: session + time range", Shape::kFirst, [&](Q* q) {
    q->set_session_id(session);
    q->set_since(since);
  });
  add("history: server + direction + time", Shape::kFirst, [&](Q* q) {
    q->set_server_id(server);
    q->set_direction(v1::SERVER_TO_CLIENT);
    q->set_since(since);
  });
  add("history: text, common word", Shape::kText,
      [](Q* q) { q->set_text("weather"); });
  add("history: text, rare word", Shape::kText,
      [](Q* q) { q->set_text("zebracorn"); });
  add("history: text, substring", Shape::kText,
      [](Q* q) { q->set_text("ebraco"); });
  add("history: text + server", Shape::kText, [&](Q* q) {
    q->set_text("weather");
    q->set_server_id(server);
  });
  add("history: text + method + server", Shape::kText, [&](Q* q) {
    q->set_text("zebracorn");
    q->set_method("tools/call");
    q->set_server_id(server);
  });
  // The targets are for 3 or more characters (what the trigram index
  // finds); a shorter text scans the raw texts.
  add("history: text, 2 characters (scan)", Shape::kCompare,
      [](Q* q) { q->set_text("qx"); });
  add_list("messages: no filter", Shape::kFirst, [](L*) {});
  add_list("messages: server", Shape::kFirst,
           [&](L* l) { l->set_server_id(server); });
  add_list("messages: method", Shape::kFirst,
           [](L* l) { l->set_method("notifications/progress"); });
  add_list("messages: session", Shape::kFirst,
           [&](L* l) { l->set_session_id(session); });
  add_list("messages: direction", Shape::kFirst,
           [](L* l) { l->set_direction(v1::SERVER_TO_CLIENT); });
  add_list("messages: time range", Shape::kFirst,
           [&](L* l) { l->set_since(since); });
  add_list("messages: text", Shape::kText,
           [](L* l) { l->set_text("zebracorn"); });
  add_list("messages: text + session", Shape::kText, [&](L* l) {
    l->set_text("weather");
    l->set_session_id(session);
  });

  // Deep pages: the page 100,000 requests in (or half way for a smaller
  // history), by keyset and, for comparison, by offset.
  {
    auto db = Database::Open(path);
    if (!db.ok()) return finish(1);
    const int64_t depth = std::min<int64_t>(100000, messages / 4);
    auto key = (*db)->Prepare(absl::StrCat(
        "SELECT ts, id FROM messages WHERE kind = 'request' ORDER BY ts DESC,"
        " id DESC LIMIT 1 OFFSET ",
        depth));
    if (key.ok() && key->Step().value_or(false)) {
      const std::string token =
          absl::StrCat(key->ColumnInt64(0), ":", key->ColumnInt64(1));
      add(absl::StrCat("history: deep keyset (", Grouped(depth), " in)"),
          Shape::kDeep, [&](Q* q) { q->set_page_token(token); });
      add(absl::StrCat("history: deep keyset, text (", Grouped(depth), " in)"),
          Shape::kDeep, [&](Q* q) {
            q->set_page_token(token);
            q->set_text("weather");
          });
      add_list(absl::StrCat("messages: deep keyset (", Grouped(depth), " in)"),
               Shape::kDeep, [&](L* l) { l->set_page_token(token); });
      add(absl::StrCat("history: deep offset (", Grouped(depth), ")"),
          Shape::kDeepOffset,
          [&](Q* q) { q->set_offset(static_cast<uint32_t>(depth)); });
    }
  }

  bool first_pages_met = true;
  bool deep_met = true;
  bool text_met = true;
  std::printf("  %-42s %9s %9s %9s\n", "query (50 per page)", "p50 ms",
              "p99 ms", "total");
  for (const Shape& shape : shapes) {
    if (!comparisons &&
        (shape.kind == Shape::kDeepOffset || shape.kind == Shape::kCompare)) {
      continue;
    }
    std::string total;
    const int shape_runs =
        shape.kind == Shape::kDeepOffset || shape.kind == Shape::kCompare
            ? std::max(3, runs / 10)
            : runs;
    const Figures figures = Time(shape_runs, [&] {
      if (shape.history) {
        auto response = (*reader)->QueryHistory(shape.query);
        if (!response.ok()) {
          std::fprintf(stderr, "%s: %s\n", shape.name.c_str(),
                       response.status().ToString().c_str());
          return false;
        }
        total = absl::StrCat(response->total_is_estimate() ? ">" : "",
                             response->total());
      } else {
        auto response = (*reader)->ListMessages(shape.list);
        if (!response.ok()) {
          std::fprintf(stderr, "%s: %s\n", shape.name.c_str(),
                       response.status().ToString().c_str());
          return false;
        }
        total = absl::StrCat(response->total_is_estimate() ? ">" : "",
                             response->total());
      }
      return true;
    });
    if (figures.p50 < 0) {
      ok = false;
      continue;
    }
    const char* verdict = "";
    switch (shape.kind) {
      case Shape::kFirst: {
        const bool met = figures.p50 <= 20 && figures.p99 <= 100;
        first_pages_met = first_pages_met && met;
        verdict = Mark(met);
        break;
      }
      case Shape::kDeep: {
        const bool met = figures.p50 <= 50;
        deep_met = deep_met && met;
        verdict = Mark(met);
        break;
      }
      case Shape::kText: {
        const bool met = figures.p50 <= 100;
        text_met = text_met && met;
        verdict = Mark(met);
        break;
      }
      case Shape::kDeepOffset:
      case Shape::kCompare:
        verdict = "(for comparison)";
        break;
    }
    std::printf("  %-42s %9.2f %9.2f %9s %s\n", shape.name.c_str(), figures.p50,
                figures.p99, total.c_str(), verdict);
    std::fflush(stdout);
  }
  stop = true;
  appender.join();
  const double query_seconds = Seconds(query_start);
  if (!(*writer)->Flush().ok()) ok = false;
  std::printf(
      "  appended %s messages during the queries (%s msg/s asked for, %s "
      "msg/s written)\n",
      Grouped(appended.load()).c_str(), Grouped(append_rate).c_str(),
      Grouped(appended.load() / query_seconds).c_str());
  {
    auto db = Database::Open(path);
    if (db.ok()) {
      auto lag = (*db)->Prepare("SELECT count(*) FROM messages_fts_pending");
      if (lag.ok() && lag->Step().value_or(false)) {
        std::printf("  the indexer had %s messages left to index then\n",
                    Grouped(static_cast<double>(lag->ColumnInt64(0))).c_str());
      }
    }
  }
  reader->reset();
  writer->reset();  // before the indexer it notifies
  indexer->reset();

  // The writer's rate with the index on against a baseline without it,
  // taken in turns in this run (same machine state): the best of three
  // each.
  const int64_t small_messages = std::min<int64_t>(messages, 500000);
  double small_rate = 0;
  double bare_rate = 0;
  for (int round = 0; round < 3; ++round) {
    small_rate = std::max(
        small_rate, SmallMessageRate(dir + "/small.db", &clock, small_messages,
                                     /*with_index=*/true));
    bare_rate = std::max(
        bare_rate, SmallMessageRate(dir + "/small.db", &clock, small_messages,
                                    /*with_index=*/false));
  }
  const double ratio = static_cast<double>(disk) / static_cast<double>(stored);
  std::printf("targets (for 10,000,000 messages; this run: %s):\n",
              Grouped(messages).c_str());
  std::printf("  first pages p50 <= 20 ms, p99 <= 100 ms   %s\n",
              Mark(first_pages_met));
  std::printf("  deep keyset page <= 50 ms                  %s\n",
              Mark(deep_met));
  std::printf("  text search p50 <= 100 ms                  %s\n",
              Mark(text_met));
  std::printf(
      "  writer >= 100,000 msg/s with the index on  %s (%s msg/s; %s msg/s "
      "without the index in this run: %.0f%%)\n",
      Mark(small_rate >= 100000), Grouped(small_rate).c_str(),
      Grouped(bare_rate).c_str(),
      bare_rate > 0 ? 100.0 * small_rate / bare_rate : 0.0);
  std::printf("  disk <= 1.5x the payload                   %s (%.2fx)\n",
              Mark(ratio <= 1.5), ratio);
  return finish(ok ? 0 : 1);
}
