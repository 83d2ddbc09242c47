#include "storage/history_reader.h"

#include <google/protobuf/struct.pb.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <variant>

#include "absl/functional/function_ref.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
    " input_round, first_round_id";

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
  Where where;
  if (!request.method().empty()) where.Add("method = ?", request.method());
  if (!request.server_id().empty()) {
    where.Add("server_id = ?", request.server_id());
  }
  if (!request.session_id().empty()) {
    where.Add("session_id = ?", request.session_id());
  }
  if (request.since() > 0) where.Add("ts >= ?", request.since());
  if (const char* direction = DirectionText(request.direction())) {
    where.Add("direction = ?", std::string(direction));
  }
  // Without a text filter the count needs no join: each request is one row
  // of the view.
  std::string count_sql = absl::StrCat(
      "SELECT count(*) FROM messages WHERE kind = 'request'", where.AndSql());
  if (!request.text().empty()) {
    where.Add(
        "(instr(request_raw, ?) > 0 OR instr(coalesce(response_raw, ''), ?) "
        "> 0)",
        request.text());
    where.AddParam(request.text());
    count_sql = absl::StrCat("SELECT count(*) FROM requests", where.Sql());
  }
  const std::string sql = absl::StrCat(
      "SELECT id, ts, server_id, session_id, direction, jsonrpc_id, method,"
      " target, request_raw, response_raw, duration_ms, success, era,"
      " input_round, first_round_id FROM requests",
      where.Sql(),
      NewestFirst(!request.session_id().empty() && request.method().empty() &&
                  request.server_id().empty()),
      " LIMIT ? OFFSET ?");

  v1::QueryHistoryResponse response;
  response.set_limit(limit);
  response.set_offset(request.offset());
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      uint32_t total,
      ReadPage(*db_, count_sql, sql, where, limit, request.offset(),
               [&response](Statement& statement) {
                 ReadHistoryEntry(statement, response.add_entries());
               }));
  response.set_total(total);
  return response;
}

absl::StatusOr<v1::ListMessagesResponse> HistoryReader::ListMessages(
    const v1::ListMessagesRequest& request) {
  const uint32_t limit = EffectiveLimit(request.limit());
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
  if (!request.text().empty()) where.Add("instr(raw, ?) > 0", request.text());
  if (request.message_id() != 0) where.Add("id = ?", request.message_id());
  const std::string count_sql =
      absl::StrCat("SELECT count(*) FROM messages", where.Sql());
  const std::string sql = absl::StrCat(
      "SELECT ", kMessageColumns, " FROM messages", where.Sql(),
      NewestFirst(!request.session_id().empty() && request.method().empty() &&
                  request.server_id().empty()),
      " LIMIT ? OFFSET ?");

  v1::ListMessagesResponse response;
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(uint32_t total, ReadPage(*db_, count_sql, sql, where, limit,
                                            request.offset(),
                                            [&response](Statement& statement) {
                                              *response.add_messages() =
                                                  ReadMessage(statement);
                                            }));
  response.set_total(total);
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
