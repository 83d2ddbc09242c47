#include "storage/history_reader.h"

#include <google/protobuf/struct.pb.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <optional>
#include <string_view>
#include <utility>
#include <variant>

#include "absl/functional/function_ref.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "nlohmann/json.hpp"
#include "storage/database.h"

namespace inspector::storage {
namespace {

using Json = nlohmann::json;

constexpr uint32_t kDefaultLimit = 100;
constexpr uint32_t kMaxLimit = 1000;
constexpr int kMaxLatest = 10000;
constexpr int kMaxJsonDepth = 100;

uint32_t EffectiveLimit(uint32_t limit) {
  if (limit == 0) return kDefaultLimit;
  return std::min(limit, kMaxLimit);
}

// ---------------------------------------------------------------------------
// UTF-8

// ---------------------------------------------------------------------------
// JSON

Json ParseJson(std::string_view text) {
  return Json::parse(text.begin(), text.end(), nullptr,
                     /*allow_exceptions=*/false);
}

bool ToValue(const Json& json, google::protobuf::Value* out, int depth);

bool ToStruct(const Json& json, google::protobuf::Struct* out, int depth) {
  if (depth > kMaxJsonDepth) return false;
  auto& fields = *out->mutable_fields();
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (!ToValue(it.value(), &fields[it.key()], depth + 1)) return false;
  }
  return true;
}

bool ToValue(const Json& json, google::protobuf::Value* out, int depth) {
  if (depth > kMaxJsonDepth) return false;
  switch (json.type()) {
    case Json::value_t::null:
      out->set_null_value(google::protobuf::NULL_VALUE);
      return true;
    case Json::value_t::boolean:
      out->set_bool_value(json.get<bool>());
      return true;
    case Json::value_t::number_integer:
      out->set_number_value(static_cast<double>(json.get<int64_t>()));
      return true;
    case Json::value_t::number_unsigned:
      out->set_number_value(static_cast<double>(json.get<uint64_t>()));
      return true;
    case Json::value_t::number_float:
      out->set_number_value(json.get<double>());
      return true;
    case Json::value_t::string:
      out->set_string_value(json.get_ref<const std::string&>());
      return true;
    case Json::value_t::array: {
      google::protobuf::ListValue* list = out->mutable_list_value();
      for (const Json& element : json) {
        if (!ToValue(element, list->add_values(), depth + 1)) return false;
      }
      return true;
    }
    case Json::value_t::object:
      return ToStruct(json, out->mutable_struct_value(), depth);
    default:
      return false;
  }
}

// Member `key` of the JSON object `message` as a Value, if present and
// convertible.
std::optional<google::protobuf::Value> Member(const Json& message,
                                              const char* key) {
  if (!message.is_object()) return std::nullopt;
  auto it = message.find(key);
  if (it == message.end()) return std::nullopt;
  google::protobuf::Value value;
  if (!ToValue(*it, &value, 0)) return std::nullopt;
  return value;
}

// The JSON-RPC id as a caller wants to read it: a JSON string without its
// quotes, anything else as stored.
std::string DisplayId(const std::string& jsonrpc_id) {
  if (jsonrpc_id.empty() || jsonrpc_id.front() != '"') return jsonrpc_id;
  Json parsed = ParseJson(jsonrpc_id);
  if (parsed.is_string()) return parsed.get<std::string>();
  return jsonrpc_id;
}

// ---------------------------------------------------------------------------
// SQL building

using Param = std::variant<int64_t, double, std::string>;

// A WHERE clause with its parameters, in order.
class Where {
 public:
  void Add(std::string condition) {
    conditions_.push_back(std::move(condition));
  }
  void Add(std::string condition, Param param) {
    conditions_.push_back(std::move(condition));
    params_.push_back(std::move(param));
  }
  void AddParam(Param param) { params_.push_back(std::move(param)); }

  // " WHERE a AND b" or "".
  std::string Sql() const {
    if (conditions_.empty()) return "";
    return absl::StrCat(" WHERE ", absl::StrJoin(conditions_, " AND "));
  }
  // " AND a AND b" or "".
  std::string AndSql() const {
    if (conditions_.empty()) return "";
    return absl::StrCat(" AND ", absl::StrJoin(conditions_, " AND "));
  }
  const std::vector<Param>& params() const { return params_; }

 private:
  std::vector<std::string> conditions_;
  std::vector<Param> params_;
};

absl::Status BindAll(Statement& statement, const std::vector<Param>& params) {
  int index = 1;
  for (const Param& param : params) {
    absl::Status status = std::visit(
        [&](const auto& value) -> absl::Status {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::string>) {
            return statement.Bind(index, std::string_view(value));
          } else {
            return statement.Bind(index, value);
          }
        },
        param);
    RETURN_IF_ERROR(status);
    ++index;
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Count(Database& db, const std::string& sql,
                              const std::vector<Param>& params) {
  ASSIGN_OR_RETURN(Statement statement, db.Prepare(sql));
  RETURN_IF_ERROR(BindAll(statement, params));
  ASSIGN_OR_RETURN(bool has_row, statement.Step());
  return has_row ? statement.ColumnInt64(0) : 0;
}

// The ORDER BY of QueryHistory and ListMessages: newest first by timestamp,
// ties broken by id. The (method, ts), (server_id, ts) and (ts) indexes
// deliver rows in exactly that order, so a LIMIT stops early. The
// (session_id) index holds each session's rows in id order instead, so a
// query whose only indexed filter is the session orders by id: the same
// order unless the clock went backwards while recording.
const char* NewestFirst(bool session_only) {
  return session_only ? " ORDER BY id DESC" : " ORDER BY ts DESC, id DESC";
}

uint32_t ClampTotal(int64_t total) {
  return static_cast<uint32_t>(
      std::clamp<int64_t>(total, 0, static_cast<int64_t>(UINT32_MAX)));
}

// Reads one page of a filtered query: calls `read_row` with the statement
// on each of the page's rows and returns the number of matching rows
// (ignoring paging). `sql` ends with "LIMIT ? OFFSET ?"; both texts use
// `where`'s parameters.
absl::StatusOr<uint32_t> ReadPage(
    Database& db, const std::string& count_sql, const std::string& sql,
    const Where& where, int64_t limit, int64_t offset,
    absl::FunctionRef<void(Statement&)> read_row) {
  ASSIGN_OR_RETURN(int64_t total, Count(db, count_sql, where.params()));
  ASSIGN_OR_RETURN(Statement statement, db.Prepare(sql));
  std::vector<Param> params = where.params();
  params.push_back(limit);
  params.push_back(offset);
  RETURN_IF_ERROR(BindAll(statement, params));
  while (true) {
    ASSIGN_OR_RETURN(bool has_row, statement.Step());
    if (!has_row) break;
    read_row(statement);
  }
  return ClampTotal(total);
}

// ---------------------------------------------------------------------------
// Paging and counting

// Totals are exact up to this many matches; beyond, total_is_estimate.
constexpr int64_t kCountCap = 1000;
// A text search's count looks at this many candidates at most (each costs
// a row read); if more remain, total_is_estimate.
constexpr int64_t kTextCountScan = 5000;
// ... and, narrowed to a server or session, among the index's newest
// this many hits at most: a filter that lets one hit in 50 through (a
// server) would otherwise read 50,000 hits to count to kCountCap (170 ms
// at 10 M messages). Counting stops at the hit this far down; the total
// is then an estimate.
constexpr int64_t kTextCountHits = 5000;

// A page_token: the (ts, id) of the last row of the previous page.
struct PageToken {
  int64_t ts = 0;
  int64_t id = 0;
};

std::string FormatPageToken(const PageToken& token) {
  return absl::StrCat(token.ts, ":", token.id);
}

absl::StatusOr<std::optional<PageToken>> ParsePageToken(
    const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  PageToken token;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &token.ts) ||
      !absl::SimpleAtoi(parts[1], &token.id) || token.id <= 0) {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat("page_token \"", text,
                              "\" is not a next_page_token of this history"),
                 {{"field", "page_token"}});
  }
  return token;
}

// Restricts `where` to the rows after `token` in the page order.
void AddKeyset(const std::optional<PageToken>& token, bool id_order,
               Where* where) {
  if (!token) return;
  if (id_order) {
    where->Add("id < ?", token->id);
  } else {
    where->Add("(ts, id) < (?, ?)", token->ts);
    where->AddParam(token->id);
  }
}

// One page being read, and then the count of every match: skips `skip`
// rows, takes `limit`, and notes whether one more follows (the next page's
// token is then the last row taken).
class Page {
 public:
  Page(uint32_t limit, uint32_t skip) : limit_(limit), skip_(skip) {}

  uint32_t limit() const { return limit_; }

  // The rows to skip, for a query that skips them itself (OFFSET).
  uint32_t TakeSkip() { return std::exchange(skip_, 0); }

  // A matching row with `id` and `ts`: runs `read` if the row belongs to
  // the page. Returns false once the page is full and another row was seen.
  template <typename Read>
  bool Take(int64_t id, int64_t ts, Read read) {
    if (skip_ > 0) {
      --skip_;
      ++skipped_;
      return true;
    }
    if (taken_ == limit_) {
      has_more_ = true;
      return false;
    }
    read();
    ++taken_;
    last_ = PageToken{ts, id};
    return true;
  }

  // Counting: StartCount, then Count for each candidate examined until it
  // returns false; or SetCount.
  void StartCount() {
    count_ = 0;
    examined_ = 0;
    estimate_ = false;
  }
  bool Count(bool matches) {
    if (++examined_ > kTextCountScan) {
      estimate_ = true;
      return false;
    }
    if (matches && ++count_ > kCountCap) {
      count_ = kCountCap;
      estimate_ = true;
      return false;
    }
    return true;
  }
  // The count stopped short of the last candidate (kTextCountHits).
  void MarkEstimate() { estimate_ = true; }
  // `count` matches were counted with a limit of kCountCap + 1.
  void SetCount(int64_t count) {
    estimate_ = count > kCountCap;
    count_ = std::min(count, kCountCap);
  }

  template <typename Response>
  void Finish(Response* response) const {
    if (has_more_) response->set_next_page_token(FormatPageToken(last_));
    // A count that stopped early (kTextCountHits) may have seen fewer
    // matches than the pages up to this one hold.
    response->set_total(ClampTotal(
        std::max<int64_t>(count_, int64_t{skipped_} + taken_)));
    response->set_total_is_estimate(estimate_);
  }

 private:
  const uint32_t limit_;
  uint32_t skip_;
  uint32_t skipped_ = 0;  // rows Take skipped (not those of TakeSkip)
  uint32_t taken_ = 0;
  bool has_more_ = false;
  PageToken last_;
  int64_t count_ = 0;
  int64_t examined_ = 0;
  bool estimate_ = false;
};

// Runs `sql` (ending with "LIMIT ? OFFSET ?", with `where`'s parameters
// before) for one more row than the page holds, giving each row to
// `take` until it returns false.
absl::Status ReadKeysetPage(Database& db, const std::string& sql,
                            const Where& where, Page* page,
                            absl::FunctionRef<bool(Statement&)> take) {
  ASSIGN_OR_RETURN(Statement statement, db.Prepare(sql));
  std::vector<Param> params = where.params();
  params.push_back(static_cast<int64_t>(page->limit()) + 1);
  params.push_back(static_cast<int64_t>(page->TakeSkip()));
  RETURN_IF_ERROR(BindAll(statement, params));
  while (true) {
    ASSIGN_OR_RETURN(bool has_row, statement.Step());
    if (!has_row || !take(statement)) return absl::OkStatus();
  }
}

// Runs `count_sql` (a count of a subquery ending with "LIMIT ?") with
// `where`'s parameters and a limit one above kCountCap.
absl::Status CountCapped(Database& db, const std::string& count_sql,
                         const Where& where, Page& page) {
  std::vector<Param> params = where.params();
  params.push_back(kCountCap + 1);
  ASSIGN_OR_RETURN(int64_t count, Count(db, count_sql, params));
  page.SetCount(count);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Text search

// A request answered with an error (view `requests`).
constexpr char kHistoryErrorCondition[] = "success = 0";

// What QueryHistory's text matches: the request's raw or its answer's.
constexpr char kHistoryTextCondition[] =
    "(instr(request_raw, ?) > 0 OR instr(coalesce(response_raw, ''), ?) > 0)";

// True if `text` has 3 characters in a row other than LIKE's wildcards, so
// that the trigram index can find it.
bool UsesTextIndex(const std::string& text) {
  int run = 0;
  for (const char c : text) {
    if (c == '%' || c == '_') {
      run = 0;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80 && ++run >= 3) {
      return true;
    }
  }
  return false;
}

// The LIKE pattern the index answers for `text`: a superset of the rows
// containing it (LIKE ignores ASCII case, and the wildcards in `text` match
// any character), narrowed with instr() afterwards.
std::string LikePattern(const std::string& text) {
  std::string pattern = "%";
  for (const char c : text) pattern += (c == '%' || c == '_') ? '_' : c;
  pattern += '%';
  return pattern;
}

struct TextHit {
  int64_t id = 0;
  std::string kind;
  int64_t correlated_id = 0;
};

TextHit ReadTextHit(const Statement& row) {
  return TextHit{row.ColumnInt64(0), row.ColumnText(1), row.ColumnInt64(2)};
}

// The server and session a text hit must have (empty: any). A request's
// answers have its server and session, so QueryHistory may narrow its hits
// by them too. Checked before the raw text is read: with a selective
// filter most hits then cost no read of their text and no check by the
// caller.
struct HitFilter {
  std::string server_id;
  std::string session_id;

  bool empty() const { return server_id.empty() && session_id.empty(); }

  // " AND m.server_id = ? ..." for the hits' messages `m`.
  std::string Sql() const {
    std::string sql;
    if (!server_id.empty()) absl::StrAppend(&sql, " AND m.server_id = ?");
    if (!session_id.empty()) absl::StrAppend(&sql, " AND m.session_id = ?");
    return sql;
  }
  // Binds Sql()'s parameters from `*index` on.
  absl::Status Bind(Statement& statement, int* index) const {
    if (!server_id.empty()) {
      RETURN_IF_ERROR(statement.Bind((*index)++, std::string_view(server_id)));
    }
    if (!session_id.empty()) {
      RETURN_IF_ERROR(statement.Bind((*index)++, std::string_view(session_id)));
    }
    return absl::OkStatus();
  }
};

// Where a count of `text`'s matches narrowed by `filter` stops
// (kTextCountHits): the id of the index's kTextCountHits-th newest hit for
// it, whatever the filter; 0 if it has fewer, or if there is no filter
// (every hit is then a candidate, and kTextCountScan bounds the count).
absl::StatusOr<int64_t> TextCountFloor(Database& db, const std::string& text,
                                       const HitFilter& filter) {
  if (filter.empty()) return 0;
  ASSIGN_OR_RETURN(Statement statement,
                   db.PrepareCached("SELECT rowid FROM messages_fts WHERE raw"
                                    " LIKE ? ORDER BY rowid DESC LIMIT 1"
                                    " OFFSET ?"));
  RETURN_IF_ERROR(statement.Bind(1, LikePattern(text)));
  RETURN_IF_ERROR(statement.Bind(2, kTextCountHits - 1));
  ASSIGN_OR_RETURN(bool has_row, statement.Step());
  return has_row ? statement.ColumnInt64(0) : 0;
}

// Calls `visit` with each message whose raw contains `text` and that
// `filter` lets through, highest id first, below `before_id` (0: no
// bound) and, among the indexed ones, above `floor_id` (0: none), until it
// returns false: the indexed messages from messages_fts, merged with the
// ones still queued for the indexer (scanned).
absl::Status ForEachTextHit(
    Database& db, const std::string& text, int64_t before_id,
    int64_t floor_id, const HitFilter& filter,
    absl::FunctionRef<absl::StatusOr<bool>(const TextHit&)> visit) {
  const int64_t bound =
      before_id > 0 ? before_id : std::numeric_limits<int64_t>::max();
  std::vector<TextHit> queued;
  {
    ASSIGN_OR_RETURN(
        Statement statement,
        db.PrepareCached(absl::StrCat(
            "SELECT m.id, m.kind, m.correlated_id FROM messages_fts_pending"
            " AS p CROSS JOIN messages AS m ON m.id = p.id WHERE p.id < ?",
            filter.Sql(), " AND instr(m.raw, ?) > 0 ORDER BY p.id DESC")));
    int index = 1;
    RETURN_IF_ERROR(statement.Bind(index++, bound));
    RETURN_IF_ERROR(filter.Bind(statement, &index));
    RETURN_IF_ERROR(statement.Bind(index, std::string_view(text)));
    while (true) {
      ASSIGN_OR_RETURN(bool has_row, statement.Step());
      if (!has_row) break;
      queued.push_back(ReadTextHit(statement));
    }
  }
  ASSIGN_OR_RETURN(
      Statement indexed,
      db.PrepareCached(absl::StrCat(
          "SELECT m.id, m.kind, m.correlated_id FROM messages_fts AS f"
          " CROSS JOIN messages AS m ON m.id = f.rowid WHERE f.raw LIKE ?"
          " AND f.rowid < ? AND f.rowid > ?",
          filter.Sql(), " AND instr(m.raw, ?) > 0 ORDER BY f.rowid DESC")));
  {
    int index = 1;
    RETURN_IF_ERROR(indexed.Bind(index++, LikePattern(text)));
    RETURN_IF_ERROR(indexed.Bind(index++, bound));
    RETURN_IF_ERROR(indexed.Bind(index++, floor_id));
    RETURN_IF_ERROR(filter.Bind(indexed, &index));
    RETURN_IF_ERROR(indexed.Bind(index, std::string_view(text)));
  }
  std::optional<TextHit> head;
  bool indexed_done = false;
  size_t next_queued = 0;
  while (true) {
    if (!head && !indexed_done) {
      ASSIGN_OR_RETURN(bool has_row, indexed.Step());
      if (has_row) {
        head = ReadTextHit(indexed);
      } else {
        indexed_done = true;
      }
    }
    TextHit next;
    if (next_queued < queued.size() &&
        (!head || queued[next_queued].id >= head->id)) {
      next = std::move(queued[next_queued++]);
      // Indexed between the two reads: the same message twice.
      if (head && head->id == next.id) head.reset();
    } else if (head) {
      next = *std::move(head);
      head.reset();
    } else {
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(bool more, visit(next));
    if (!more) return absl::OkStatus();
  }
}

// A session with at most this many messages is always searched by
// scanning its messages (through the session index) rather than through
// the text index, whose hits for a common word are many more.
constexpr int64_t kSmallSession = 1000;
// A session with at most this many messages is scanned too when the text
// index has at least kScanRatio hits per message of the session: a
// session's few matches of a common word would otherwise come from
// reading every hit of the whole history (800 ms at 10 M messages for a
// session of 2,000).
constexpr int64_t kScannedSession = 10000;
constexpr int64_t kScanRatio = 3;

// Whether a search for `text` within session `session_id` scans the
// session's rows (see kSmallSession, kScannedSession). False for no
// session.
absl::StatusOr<bool> ScansSession(Database& db, const std::string& session_id,
                                  const std::string& text) {
  if (session_id.empty()) return false;
  ASSIGN_OR_RETURN(Statement size,
                   db.PrepareCached(
                       "SELECT count(*) FROM (SELECT 1 FROM messages"
                       " WHERE session_id = ? LIMIT ?)"));
  RETURN_IF_ERROR(size.Bind(1, std::string_view(session_id)));
  RETURN_IF_ERROR(size.Bind(2, kScannedSession + 1));
  ASSIGN_OR_RETURN(bool has_row, size.Step());
  const int64_t messages = has_row ? size.ColumnInt64(0) : 0;
  if (messages <= kSmallSession) return true;
  if (messages > kScannedSession) return false;
  // Counting the index's hits stops as soon as they outnumber the
  // session's messages kScanRatio to one.
  ASSIGN_OR_RETURN(Statement hits,
                   db.PrepareCached(
                       "SELECT count(*) FROM (SELECT 1 FROM messages_fts"
                       " WHERE raw LIKE ? LIMIT ?)"));
  RETURN_IF_ERROR(hits.Bind(1, LikePattern(text)));
  RETURN_IF_ERROR(hits.Bind(2, messages * kScanRatio));
  ASSIGN_OR_RETURN(has_row, hits.Step());
  return has_row && hits.ColumnInt64(0) >= messages * kScanRatio;
}

// How far past a page's last request its answers are looked for: a request
// found only through an answer recorded more than this many messages after
// the previous page's last request is not on the next page.
constexpr int64_t kAnswerLookahead = 10000;

// Calls `visit` with the id of each request whose own raw or an answer's
// contains `text` (candidates: the caller checks them), highest id first,
// below `before_id` (0: no bound), until it returns false. Answers come
// after their requests, so once the matches have been read down to id F,
// every request above F is known.
absl::Status ForEachTextRequest(
    Database& db, const std::string& text, int64_t before_id,
    int64_t floor_id, const HitFilter& filter,
    absl::FunctionRef<absl::StatusOr<bool>(int64_t)> visit) {
  std::set<int64_t, std::greater<int64_t>> candidates;
  bool stopped = false;
  auto emit_down_to = [&](int64_t floor) -> absl::Status {
    while (!stopped && !candidates.empty() && *candidates.begin() > floor) {
      const int64_t id = *candidates.begin();
      candidates.erase(candidates.begin());
      ASSIGN_OR_RETURN(bool more, visit(id));
      stopped = !more;
    }
    return absl::OkStatus();
  };
  const int64_t hits_before =
      before_id > 0 ? before_id + kAnswerLookahead : 0;
  RETURN_IF_ERROR(ForEachTextHit(
      db, text, hits_before, floor_id, filter,
      [&](const TextHit& hit) -> absl::StatusOr<bool> {
        RETURN_IF_ERROR(emit_down_to(hit.id));
        if (stopped) return false;
        int64_t request_id = 0;
        if (hit.kind == "request") {
          request_id = hit.id;
        } else if (hit.kind == "response" || hit.kind == "error") {
          request_id = hit.correlated_id;
        }
        if (request_id > 0 && (before_id == 0 || request_id < before_id)) {
          candidates.insert(request_id);
        }
        return true;
      }));
  return emit_down_to(std::numeric_limits<int64_t>::min());
}

// The columns ReadHistoryEntry reads, from the view `requests`.
constexpr char kHistoryColumns[] =
    "id, ts, server_id, session_id, direction, jsonrpc_id, method, target,"
    " request_raw, response_raw, duration_ms, success, era, input_round,"
    " first_round_id,"
    " (SELECT trace_id FROM messages AS traced WHERE traced.id = requests.id),"
    " response_id";
// Where response_id is in kHistoryColumns (ReadHistoryEntry stops before).
constexpr int kHistoryResponseIdColumn = 16;

const char* DirectionText(v1::Direction direction) {
  switch (direction) {
    case v1::CLIENT_TO_SERVER:
      return "client_to_server";
    case v1::SERVER_TO_CLIENT:
      return "server_to_client";
    default:
      return nullptr;
  }
}

v1::Direction DirectionFromText(const std::string& text) {
  if (text == "client_to_server") return v1::CLIENT_TO_SERVER;
  if (text == "server_to_client") return v1::SERVER_TO_CLIENT;
  return v1::DIRECTION_UNSPECIFIED;
}

// ---------------------------------------------------------------------------
// messages rows

constexpr char kMessageColumns[] =
    "id, ts, server_id, session_id, direction, kind, jsonrpc_id, method,"
    " target, raw, correlated_id, duration_ms, success, error_code,"
    " truncated, raw_size, modified, original_raw, intercept_action, era,"
    " input_round, first_round_id, trace_id";

// A JSON object of header values (message_http) into `out`.
void ReadHeaders(std::string_view text,
                 google::protobuf::Map<std::string, std::string>* out) {
  const Json headers = ParseJson(text);
  if (!headers.is_object()) return;
  for (const auto& [name, value] : headers.items()) {
    if (value.is_string()) {
      (*out)[ValidUtf8(name)] = ValidUtf8(value.get<std::string>());
    }
  }
}

// Fills each (message id, exchange) pair's exchange from its row of
// message_http; pairs without a row are left as they are (an id <= 0 has
// none).
absl::Status ReadHttp(
    Database& db,
    const std::vector<std::pair<int64_t, v1::MessageHttpExchange*>>& wanted) {
  if (wanted.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(Statement statement,
                   db.Prepare("SELECT method, path, status, request_headers,"
                              " response_headers FROM message_http"
                              " WHERE message_id = ?"));
  for (const auto& [id, out] : wanted) {
    if (id <= 0) continue;
    statement.Reset();
    RETURN_IF_ERROR(statement.Bind(1, id));
    ASSIGN_OR_RETURN(bool has_row, statement.Step());
    if (!has_row) continue;
    out->set_method(ValidUtf8(statement.ColumnText(0)));
    out->set_path(ValidUtf8(statement.ColumnText(1)));
    out->set_status(static_cast<int32_t>(statement.ColumnInt64(2)));
    ReadHeaders(statement.ColumnText(3), out->mutable_request_headers());
    ReadHeaders(statement.ColumnText(4), out->mutable_response_headers());
  }
  statement.Reset();
  return absl::OkStatus();
}

// Sets the http of each of `messages` that has a row in message_http.
absl::Status AttachHttp(
    Database& db,
    google::protobuf::RepeatedPtrField<v1::McpMessage>* messages) {
  std::vector<std::pair<int64_t, v1::MessageHttpExchange*>> wanted;
  wanted.reserve(messages->size());
  for (v1::McpMessage& message : *messages) {
    wanted.emplace_back(message.id(), message.mutable_http());
  }
  RETURN_IF_ERROR(ReadHttp(db, wanted));
  for (v1::McpMessage& message : *messages) {
    if (message.http().method().empty()) message.clear_http();
  }
  return absl::OkStatus();
}

// Sets the request_http and response_http of `response`'s entries (the
// i-th answered by message response_ids[i], 0 for none) that have rows in
// message_http.
absl::Status AttachHistoryHttp(Database& db,
                               const std::vector<int64_t>& response_ids,
                               v1::QueryHistoryResponse* response) {
  std::vector<std::pair<int64_t, v1::MessageHttpExchange*>> wanted;
  for (int i = 0; i < response->entries_size(); ++i) {
    v1::HistoryEntry* entry = response->mutable_entries(i);
    wanted.emplace_back(entry->message_id(), entry->mutable_request_http());
    if (static_cast<size_t>(i) < response_ids.size()) {
      wanted.emplace_back(response_ids[static_cast<size_t>(i)],
                          entry->mutable_response_http());
    }
  }
  RETURN_IF_ERROR(ReadHttp(db, wanted));
  for (v1::HistoryEntry& entry : *response->mutable_entries()) {
    if (entry.request_http().method().empty()) entry.clear_request_http();
    if (entry.response_http().method().empty()) entry.clear_response_http();
  }
  return absl::OkStatus();
}

v1::McpMessage ReadMessage(const Statement& row) {
  v1::McpMessage message;
  message.set_id(row.ColumnInt64(0));
  message.set_timestamp(row.ColumnDouble(1));
  message.set_server_id(ValidUtf8(row.ColumnText(2)));
  message.set_session_id(ValidUtf8(row.ColumnText(3)));
  message.set_direction(DirectionFromText(row.ColumnText(4)));
  message.set_kind(ValidUtf8(row.ColumnText(5)));
  message.set_jsonrpc_id(ValidUtf8(row.ColumnText(6)));
  message.set_method(ValidUtf8(row.ColumnText(7)));
  message.set_target(ValidUtf8(row.ColumnText(8)));
  message.set_raw(ValidUtf8(row.ColumnText(9)));
  message.set_correlated_id(row.ColumnInt64(10));
  if (!row.ColumnIsNull(11)) message.set_duration_ms(row.ColumnDouble(11));
  if (!row.ColumnIsNull(12)) message.set_success(row.ColumnInt64(12) != 0);
  message.set_error_code(ValidUtf8(row.ColumnText(13)));
  message.set_truncated(row.ColumnInt64(14) != 0);
  message.set_raw_size(
      static_cast<uint64_t>(std::max<int64_t>(0, row.ColumnInt64(15))));
  message.set_modified(row.ColumnInt64(16) != 0);
  message.set_original_raw(ValidUtf8(row.ColumnText(17)));
  message.set_intercept_action(ValidUtf8(row.ColumnText(18)));
  message.set_era(ValidUtf8(row.ColumnText(19)));
  if (!row.ColumnIsNull(20)) {
    message.set_input_round(
        static_cast<uint32_t>(std::max<int64_t>(0, row.ColumnInt64(20))));
  }
  message.set_first_round_id(row.ColumnInt64(21));
  message.set_trace_id(ValidUtf8(row.ColumnText(22)));
  return message;
}

// Log levels in increasing order of severity.
constexpr const char* kLevels[] = {"debug", "info", "warn", "error"};

// Index of `level` in kLevels (case-insensitive, "warning" = "warn"), or -1.
int LevelIndex(const std::string& level) {
  std::string lower = absl::AsciiStrToLower(level);
  if (lower == "warning") lower = "warn";
  for (int i = 0; i < 4; ++i) {
    if (lower == kLevels[i]) return i;
  }
  return -1;
}

// Fills `entry` from the current row of QueryHistory's query.
void ReadHistoryEntry(Statement& statement, v1::HistoryEntry* entry) {
  entry->set_message_id(statement.ColumnInt64(0));
  entry->set_timestamp(statement.ColumnDouble(1));
  entry->set_server_id(ValidUtf8(statement.ColumnText(2)));
  entry->set_session_id(ValidUtf8(statement.ColumnText(3)));
  entry->set_direction(DirectionFromText(statement.ColumnText(4)));
  entry->set_id(ValidUtf8(DisplayId(statement.ColumnText(5))));
  entry->set_method(ValidUtf8(statement.ColumnText(6)));
  entry->set_target(ValidUtf8(statement.ColumnText(7)));
  if (auto request_params =
          Member(ParseJson(statement.ColumnText(8)), "params")) {
    *entry->mutable_params() = std::move(*request_params);
  }
  if (!statement.ColumnIsNull(9)) {
    const Json answer = ParseJson(statement.ColumnText(9));
    if (auto result = Member(answer, "result")) {
      *entry->mutable_result() = std::move(*result);
    }
    if (auto error = Member(answer, "error")) {
      *entry->mutable_error() = std::move(*error);
    }
  }
  if (!statement.ColumnIsNull(10)) {
    entry->set_duration(statement.ColumnDouble(10));
  }
  if (!statement.ColumnIsNull(11)) {
    entry->set_success(statement.ColumnInt64(11) != 0);
  }
  entry->set_era(ValidUtf8(statement.ColumnText(12)));
  entry->set_input_round(
      static_cast<uint32_t>(std::max<int64_t>(0, statement.ColumnInt64(13))));
  entry->set_first_round_id(statement.ColumnInt64(14));
  entry->set_trace_id(ValidUtf8(statement.ColumnText(15)));
}

// Fills `entry` from the current row of QueryLogs's query.
void ReadLogEntry(Statement& statement, v1::LogEntry* entry) {
  entry->set_timestamp(statement.ColumnDouble(0));
  entry->set_level(ValidUtf8(statement.ColumnText(1)));
  entry->set_message(ValidUtf8(statement.ColumnText(2)));
  if (!statement.ColumnIsNull(3)) {
    const Json data = ParseJson(statement.ColumnText(3));
    if (data.is_object()) {
      google::protobuf::Struct fields;
      if (ToStruct(data, &fields, 0))
        *entry->mutable_data() = std::move(fields);
    }
  }
  entry->set_server_id(ValidUtf8(statement.ColumnText(4)));
  entry->set_source(ValidUtf8(statement.ColumnText(5)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<HistoryReader>> HistoryReader::Open(
    const std::string& path) {
  DatabaseOptions options;
  options.create_if_missing = false;
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path, options));
  return std::make_unique<HistoryReader>(std::move(db));
}

HistoryReader::HistoryReader(std::unique_ptr<Database> db)
    : db_(std::move(db)) {}

HistoryReader::~HistoryReader() = default;

absl::StatusOr<v1::QueryHistoryResponse> HistoryReader::QueryHistory(
    const v1::QueryHistoryRequest& request) {
  const uint32_t limit = EffectiveLimit(request.limit());
  ASSIGN_OR_RETURN(std::optional<PageToken> token,
                   ParsePageToken(request.page_token()));
  Where where;
  if (!request.method().empty()) where.Add("method = ?", request.method());
  if (!request.server_id().empty()) {
    where.Add("server_id = ?", request.server_id());
  }
  if (!request.session_id().empty()) {
    where.Add("session_id = ?", request.session_id());
  }
  if (request.since() > 0) where.Add("ts >= ?", request.since());
  if (request.until() > 0) where.Add("ts < ?", request.until());
  if (!request.target().empty()) where.Add("target = ?", request.target());
  if (!request.trace_id().empty()) {
    // Through the trace index: the view has no trace_id column.
    where.Add("id IN (SELECT id FROM messages WHERE trace_id = ?)",
              request.trace_id());
  }
  if (const char* direction = DirectionText(request.direction())) {
    where.Add("direction = ?", std::string(direction));
  }
  v1::QueryHistoryResponse response;
  response.set_limit(limit);
  response.set_offset(request.offset());
  Page page(limit, request.offset());
  absl::MutexLock lock(&mu_);
  bool indexed_text = UsesTextIndex(request.text());
  if (indexed_text) {
    ASSIGN_OR_RETURN(bool scanned,
                     ScansSession(*db_, request.session_id(), request.text()));
    indexed_text = !scanned;
  }
  if (indexed_text) {
    // Each request matched (by its own text or an answer's) is checked
    // once more against every filter, from the view.
    Where checked = where;
    if (request.errors_only()) checked.Add(kHistoryErrorCondition);
    checked.Add(kHistoryTextCondition, request.text());
    checked.AddParam(request.text());
    const std::string fetch_sql = absl::StrCat(
        "SELECT ", kHistoryColumns, " FROM requests WHERE id = ?",
        checked.AndSql());
    ASSIGN_OR_RETURN(Statement fetch, db_->Prepare(fetch_sql));
    std::vector<int64_t> response_ids;
    auto read = [&](int64_t id, bool count_only) -> absl::StatusOr<bool> {
      std::vector<Param> params = {id};
      params.insert(params.end(), checked.params().begin(),
                    checked.params().end());
      fetch.Reset();
      RETURN_IF_ERROR(BindAll(fetch, params));
      ASSIGN_OR_RETURN(bool has_row, fetch.Step());
      if (count_only) return page.Count(has_row);
      if (!has_row) return true;
      return page.Take(id, fetch.ColumnInt64(1), [&] {
        ReadHistoryEntry(fetch, response.add_entries());
        response_ids.push_back(fetch.ColumnInt64(kHistoryResponseIdColumn));
      });
    };
    const int64_t before = token ? token->id : 0;
    const HitFilter filter{request.server_id(), request.session_id()};
    RETURN_IF_ERROR(ForEachTextRequest(
        *db_, request.text(), before, 0, filter,
        [&](int64_t id) { return read(id, /*count_only=*/false); }));
    page.StartCount();
    ASSIGN_OR_RETURN(const int64_t floor, TextCountFloor(*db_, request.text(), filter));
    RETURN_IF_ERROR(ForEachTextRequest(
        *db_, request.text(), 0, floor, filter,
        [&](int64_t id) { return read(id, /*count_only=*/true); }));
    if (floor > 0) page.MarkEstimate();
    page.Finish(&response);
    RETURN_IF_ERROR(AttachHistoryHttp(*db_, response_ids, &response));
    return response;
  }
  // Without a text filter the count needs no join: each request is one row
  // of the view.
  std::string count_sql = absl::StrCat(
      "SELECT count(*) FROM (SELECT 1 FROM messages WHERE kind = 'request'",
      where.AndSql(), " LIMIT ?)");
  if (request.errors_only()) {
    // The answer's outcome is in the view only.
    where.Add(kHistoryErrorCondition);
    count_sql = absl::StrCat("SELECT count(*) FROM (SELECT 1 FROM requests",
                             where.Sql(), " LIMIT ?)");
  }
  if (!request.text().empty()) {
    // Too short for the index: a scan of the raw texts.
    where.Add(kHistoryTextCondition, request.text());
    where.AddParam(request.text());
    count_sql = absl::StrCat("SELECT count(*) FROM (SELECT 1 FROM requests",
                             where.Sql(), " LIMIT ?)");
  }
  const bool id_order = !request.session_id().empty() &&
                        request.method().empty() &&
                        request.server_id().empty();
  Where paged = where;
  AddKeyset(token, id_order, &paged);
  const std::string sql =
      absl::StrCat("SELECT ", kHistoryColumns, " FROM requests", paged.Sql(),
                   NewestFirst(id_order), " LIMIT ? OFFSET ?");
  std::vector<int64_t> response_ids;
  RETURN_IF_ERROR(ReadKeysetPage(*db_, sql, paged, &page, [&](Statement& statement) {
    return page.Take(statement.ColumnInt64(0), statement.ColumnInt64(1), [&] {
      ReadHistoryEntry(statement, response.add_entries());
      response_ids.push_back(statement.ColumnInt64(kHistoryResponseIdColumn));
    });
  }));
  RETURN_IF_ERROR(CountCapped(*db_, count_sql, where, page));
  page.Finish(&response);
  RETURN_IF_ERROR(AttachHistoryHttp(*db_, response_ids, &response));
  return response;
}

absl::StatusOr<v1::ListMessagesResponse> HistoryReader::ListMessages(
    const v1::ListMessagesRequest& request) {
  const uint32_t limit = EffectiveLimit(request.limit());
  ASSIGN_OR_RETURN(std::optional<PageToken> token,
                   ParsePageToken(request.page_token()));
  Where where;
  if (!request.server_id().empty()) {
    where.Add("server_id = ?", request.server_id());
  }
  if (!request.session_id().empty()) {
    where.Add("session_id = ?", request.session_id());
  }
  if (!request.method().empty()) where.Add("method = ?", request.method());
  if (const char* direction = DirectionText(request.direction())) {
    where.Add("direction = ?", std::string(direction));
  }
  if (request.since() > 0) where.Add("ts >= ?", request.since());
  if (request.message_id() != 0) where.Add("id = ?", request.message_id());
  if (!request.trace_id().empty()) {
    where.Add("trace_id = ?", request.trace_id());
  }

  v1::ListMessagesResponse response;
  Page page(limit, request.offset());
  absl::MutexLock lock(&mu_);
  bool indexed_text =
      UsesTextIndex(request.text()) && request.message_id() == 0;
  if (indexed_text) {
    ASSIGN_OR_RETURN(bool scanned,
                     ScansSession(*db_, request.session_id(), request.text()));
    indexed_text = !scanned;
  }
  if (indexed_text) {
    // The text index yields the matches newest first; each is checked
    // against the other filters.
    const std::string fetch_sql =
        absl::StrCat("SELECT ", kMessageColumns, " FROM messages WHERE id = ?",
                     where.AndSql());
    ASSIGN_OR_RETURN(Statement fetch, db_->Prepare(fetch_sql));
    auto read = [&](const TextHit& hit,
                    bool count_only) -> absl::StatusOr<bool> {
      std::vector<Param> params = {hit.id};
      params.insert(params.end(), where.params().begin(),
                    where.params().end());
      fetch.Reset();
      RETURN_IF_ERROR(BindAll(fetch, params));
      ASSIGN_OR_RETURN(bool has_row, fetch.Step());
      if (count_only) return page.Count(has_row);
      if (!has_row) return true;
      return page.Take(hit.id, fetch.ColumnInt64(1), [&] {
        *response.add_messages() = ReadMessage(fetch);
      });
    };
    const HitFilter filter{request.server_id(), request.session_id()};
    RETURN_IF_ERROR(ForEachTextHit(
        *db_, request.text(), token ? token->id : 0, 0, filter,
        [&](const TextHit& hit) { return read(hit, /*count_only=*/false); }));
    page.StartCount();
    ASSIGN_OR_RETURN(const int64_t floor, TextCountFloor(*db_, request.text(), filter));
    RETURN_IF_ERROR(ForEachTextHit(
        *db_, request.text(), 0, floor, filter,
        [&](const TextHit& hit) { return read(hit, /*count_only=*/true); }));
    if (floor > 0) page.MarkEstimate();
    page.Finish(&response);
    RETURN_IF_ERROR(AttachHttp(*db_, response.mutable_messages()));
    return response;
  }
  if (!request.text().empty()) {
    where.Add("instr(raw, ?) > 0", request.text());
  }
  const std::string count_sql = absl::StrCat(
      "SELECT count(*) FROM (SELECT 1 FROM messages", where.Sql(), " LIMIT ?)");
  const bool id_order = !request.session_id().empty() &&
                        request.method().empty() &&
                        request.server_id().empty();
  Where paged = where;
  AddKeyset(token, id_order, &paged);
  const std::string sql =
      absl::StrCat("SELECT ", kMessageColumns, " FROM messages", paged.Sql(),
                   NewestFirst(id_order), " LIMIT ? OFFSET ?");
  RETURN_IF_ERROR(ReadKeysetPage(*db_, sql, paged, &page, [&](Statement& statement) {
    return page.Take(statement.ColumnInt64(0), statement.ColumnInt64(1), [&] {
      *response.add_messages() = ReadMessage(statement);
    });
  }));
  RETURN_IF_ERROR(CountCapped(*db_, count_sql, where, page));
  page.Finish(&response);
  RETURN_IF_ERROR(AttachHttp(*db_, response.mutable_messages()));
  return response;
}

absl::StatusOr<v1::QueryLogsResponse> HistoryReader::QueryLogs(
    const v1::QueryLogsRequest& request) {
  const uint32_t limit = EffectiveLimit(request.limit());
  Where where;
  if (!request.level().empty()) {
    const int min_level = LevelIndex(request.level());
    if (min_level < 0) {
      return Error(v1::INVALID_REQUEST,
                   absl::StrCat("unknown log level '", request.level(),
                                "'; use debug, info, warn or error"),
                   {{"field", "level"}});
    }
    if (min_level > 0) {
      std::vector<std::string> levels;
      for (int i = min_level; i < 4; ++i) {
        levels.push_back(absl::StrCat("'", kLevels[i], "'"));
      }
      where.Add(absl::StrCat("level IN (", absl::StrJoin(levels, ", "), ")"));
    }
  }
  if (request.since() > 0) where.Add("ts >= ?", request.since());
  if (!request.server_id().empty()) {
    where.Add("server_id = ?", request.server_id());
  }
  const std::string count_sql =
      absl::StrCat("SELECT count(*) FROM logs", where.Sql());
  const std::string sql = absl::StrCat(
      "SELECT ts, level, message, data_json, server_id, source FROM logs",
      where.Sql(), " ORDER BY ts DESC, id DESC LIMIT ? OFFSET ?");

  v1::QueryLogsResponse response;
  response.set_limit(limit);
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      uint32_t total,
      ReadPage(*db_, count_sql, sql, where, limit, request.offset(),
               [&response](Statement& statement) {
                 ReadLogEntry(statement, response.add_entries());
               }));
  response.set_total(total);
  return response;
}

absl::StatusOr<std::vector<v1::McpMessage>> HistoryReader::LatestMessages(
    int n) {
  std::vector<v1::McpMessage> messages;
  if (n <= 0) return messages;
  n = std::min(n, kMaxLatest);
  absl::MutexLock lock(&mu_);
  static const std::string* const kLatest = new std::string(absl::StrCat(
      "SELECT ", kMessageColumns, " FROM messages ORDER BY id DESC LIMIT ?"));
  ASSIGN_OR_RETURN(Statement statement, db_->PrepareCached(*kLatest));
  RETURN_IF_ERROR(statement.Bind(1, n));
  while (true) {
    ASSIGN_OR_RETURN(bool has_row, statement.Step());
    if (!has_row) break;
    messages.push_back(ReadMessage(statement));
  }
  std::reverse(messages.begin(), messages.end());
  return messages;
}

}  // namespace inspector::storage
