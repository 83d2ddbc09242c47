#include "storage/history_export.h"

#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/http/http1.h"
#include "common/json_text.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "common/version.h"
#include "storage/database.h"

namespace inspector::storage {
namespace {

// Rows one query reads at most (a piece may need several queries when the
// filters skip most rows).
constexpr int64_t kRowsPerQuery = 1000;

std::string IsoTime(int64_t unix_ms) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

// `url`'s scheme and authority with `path` (a recorded request's path and
// query); `url` itself when it is not absolute or `path` is empty.
std::string WithPath(std::string_view url, std::string_view path) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos || path.empty()) return std::string(url);
  const size_t slash = url.find('/', scheme + 3);
  std::string out(url.substr(0, slash));
  out.append(path);
  return out;
}

std::string_view DirectionName(v1::Direction direction) {
  return direction == v1::CLIENT_TO_SERVER ? "client_to_server"
                                           : "server_to_client";
}

// The WHERE conditions of the request's filters on the messages row `m`
// (a request's own columns for HAR), with named parameters bound by Bind.
std::vector<std::string> FilterConditions(
    const v1::ExportMessagesRequest& request, bool requests_only) {
  std::vector<std::string> where = {"m.id > :cursor"};
  if (requests_only) where.push_back("m.kind = 'request'");
  if (!request.server_id().empty()) where.push_back("m.server_id = :server");
  if (!request.session_id().empty()) {
    where.push_back("m.session_id = :session");
  }
  if (!request.method().empty()) {
    where.push_back(
        requests_only
            ? "m.method = :method"
            : "(m.method = :method OR (m.correlated_id IS NOT NULL AND"
              " EXISTS (SELECT 1 FROM messages AS q WHERE"
              " q.id = m.correlated_id AND q.method = :method)))");
  }
  if (request.direction() != v1::DIRECTION_UNSPECIFIED) {
    // An answer travels the other way from its request.
    where.push_back(requests_only
                        ? "m.direction = :direction"
                        : "(CASE WHEN m.kind IN ('response', 'error') THEN"
                          " (CASE m.direction WHEN 'client_to_server' THEN"
                          " 'server_to_client' ELSE 'client_to_server' END)"
                          " ELSE m.direction END) = :direction");
  }
  if (request.since() > 0) where.push_back("m.ts >= :since");
  if (request.until() > 0) where.push_back("m.ts < :until");
  if (!request.text().empty()) {
    where.push_back(requests_only ? "(instr(m.raw, :text) > 0 OR"
                                    " instr(coalesce(r.raw, ''), :text) > 0)"
                                  : "instr(m.raw, :text) > 0");
  }
  return where;
}

absl::Status BindIfPresent(Statement& statement, std::string_view name,
                           const std::string& value) {
  if (value.empty()) return absl::OkStatus();
  return statement.Bind(name, std::string_view(value));
}

absl::Status BindFilters(Statement& statement,
                         const v1::ExportMessagesRequest& request) {
  RETURN_IF_ERROR(BindIfPresent(statement, ":server", request.server_id()));
  RETURN_IF_ERROR(BindIfPresent(statement, ":session", request.session_id()));
  RETURN_IF_ERROR(BindIfPresent(statement, ":method", request.method()));
  RETURN_IF_ERROR(BindIfPresent(statement, ":text", request.text()));
  if (request.direction() != v1::DIRECTION_UNSPECIFIED) {
    RETURN_IF_ERROR(
        statement.Bind(":direction", DirectionName(request.direction())));
  }
  if (request.since() > 0) {
    RETURN_IF_ERROR(
        statement.Bind(":since", static_cast<int64_t>(request.since())));
  }
  if (request.until() > 0) {
    RETURN_IF_ERROR(
        statement.Bind(":until", static_cast<int64_t>(request.until())));
  }
  return statement.Bind(":limit", kRowsPerQuery);
}

// The columns of `messages` in table order, for jsonl and csv.
constexpr const char* kMessageColumns[] = {"id",
                                           "ts",
                                           "server_id",
                                           "session_id",
                                           "direction",
                                           "kind",
                                           "jsonrpc_id",
                                           "method",
                                           "target",
                                           "raw",
                                           "raw_size",
                                           "truncated",
                                           "correlated_id",
                                           "duration_ms",
                                           "success",
                                           "error_code",
                                           "modified",
                                           "original_raw",
                                           "intercept_action",
                                           "era",
                                           "input_round",
                                           "first_round_id",
                                           "trace_id"};
constexpr int kMessageColumnCount =
    sizeof(kMessageColumns) / sizeof(kMessageColumns[0]);

// Columns that hold numbers (INTEGER, except duration_ms: REAL).
bool IsNumberColumn(std::string_view name) {
  return name == "id" || name == "ts" || name == "raw_size" ||
         name == "truncated" || name == "correlated_id" ||
         name == "duration_ms" || name == "success" || name == "modified" ||
         name == "input_round" || name == "first_round_id";
}

void AppendNumber(std::string* out, const Statement& row, int column) {
  if (row.ColumnIsNull(column)) {
    out->append("null");
  } else if (std::string_view(kMessageColumns[column]) == "duration_ms") {
    absl::StrAppend(out, row.ColumnDouble(column));
  } else {
    absl::StrAppend(out, row.ColumnInt64(column));
  }
}

void AppendCsvField(std::string* out, std::string_view value) {
  if (value.find_first_of(",\"\r\n") == std::string_view::npos) {
    out->append(value.data(), value.size());
    return;
  }
  out->push_back('"');
  for (char c : value) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

std::string MessagesSql(const v1::ExportMessagesRequest& request) {
  return absl::StrCat("SELECT ", absl::StrJoin(kMessageColumns, ", "),
                      " FROM messages AS m WHERE ",
                      absl::StrJoin(FilterConditions(request, false), " AND "),
                      " ORDER BY m.id LIMIT :limit");
}

}  // namespace

// How one format writes the rows of its query.
class MessageExportFormat {
 public:
  virtual ~MessageExportFormat() = default;
  virtual std::string Sql(const v1::ExportMessagesRequest& request) const = 0;
  virtual std::string Header() const { return ""; }
  // Appends the current row of `row`.
  virtual void AppendRow(const Statement& row, std::string* out) = 0;
  virtual std::string Trailer() const { return ""; }
};

namespace {

class JsonLines final : public MessageExportFormat {
 public:
  std::string Sql(const v1::ExportMessagesRequest& request) const override {
    return MessagesSql(request);
  }
  void AppendRow(const Statement& row, std::string* out) override {
    out->push_back('{');
    for (int i = 0; i < kMessageColumnCount; ++i) {
      if (i > 0) out->push_back(',');
      AppendJsonString(out, kMessageColumns[i]);
      out->push_back(':');
      if (IsNumberColumn(kMessageColumns[i])) {
        AppendNumber(out, row, i);
      } else if (row.ColumnIsNull(i)) {
        out->append("null");
      } else {
        AppendJsonString(out, row.ColumnText(i));
      }
    }
    out->append("}\n");
  }
};

class Csv final : public MessageExportFormat {
 public:
  std::string Sql(const v1::ExportMessagesRequest& request) const override {
    return MessagesSql(request);
  }
  std::string Header() const override {
    return "id,time,ts,server_id,session_id,direction,kind,jsonrpc_id,"
           "method,target,duration_ms,success,error_code,raw_size,truncated,"
           "correlated_id,raw\r\n";
  }
  void AppendRow(const Statement& row, std::string* out) override {
    // Indexes in kMessageColumns.
    static constexpr int kFields[] = {0, -1, 1,  2,  3,  4,  5,  6, 7,
                                      8, 13, 14, 15, 10, 11, 12, 9};
    bool first = true;
    for (int column : kFields) {
      if (!first) out->push_back(',');
      first = false;
      if (column == -1) {
        out->append(IsoTime(row.ColumnInt64(1)));
      } else if (row.ColumnIsNull(column)) {
        // Empty field.
      } else if (IsNumberColumn(kMessageColumns[column])) {
        AppendNumber(out, row, column);
      } else {
        AppendCsvField(out, ValidUtf8(row.ColumnText(column)));
      }
    }
    out->append("\r\n");
  }
};

class Har final : public MessageExportFormat {
 public:
  std::string Sql(const v1::ExportMessagesRequest& request) const override {
    return absl::StrCat(
        "SELECT m.id, m.ts, m.server_id, m.session_id, m.method, m.target,"
        " m.raw, m.jsonrpc_id, m.direction, r.id, r.ts, r.raw,"
        " r.duration_ms, r.success, r.error_code, sv.name, sv.url,"
        // The HTTP exchange (message_http): the upstream's answer to the
        // request (recorded with the response), else the client's request
        // to a front door (recorded with the request). Headers as HAR's
        // [{name, value}], in recorded order.
        " CASE WHEN h.message_id IS NULL THEN NULL"
        " WHEN h.message_id = m.id THEN 'front door' ELSE 'upstream' END,"
        " h.method, h.path, h.status,"
        " (SELECT json_group_array(json_object('name', key, 'value', value))"
        " FROM json_each(h.request_headers)),"
        " (SELECT json_group_array(json_object('name', key, 'value', value))"
        " FROM json_each(h.response_headers))"
        " FROM messages AS m"
        " LEFT JOIN messages AS r ON r.id = (SELECT min(a.id) FROM messages"
        " AS a WHERE a.correlated_id = m.id"
        " AND a.kind IN ('response', 'error'))"
        " LEFT JOIN message_http AS h ON h.message_id ="
        " coalesce((SELECT x.message_id FROM message_http AS x"
        " WHERE x.message_id = r.id), m.id)"
        " LEFT JOIN servers AS sv ON sv.id = m.server_id WHERE ",
        absl::StrJoin(FilterConditions(request, true), " AND "),
        " ORDER BY m.id LIMIT :limit");
  }
  std::string Header() const override {
    return absl::StrCat(
        "{\"log\":{\"version\":\"1.2\",\"creator\":{\"name\":\"inspectord\","
        "\"version\":",
        JsonString(Version()),
        "},\"comment\":\"MCP requests and their responses as recorded by "
        "inspectord; HTTP status and headers where the exchange was "
        "recorded (HTTP upstreams, front doors), secrets masked\","
        "\"pages\":[],\"entries\":[");
  }
  void AppendRow(const Statement& row, std::string* out) override {
    if (entries_++ > 0) out->push_back(',');
    const std::string request_raw = row.ColumnText(6);
    const bool answered = !row.ColumnIsNull(9);
    const std::string response_raw = answered ? row.ColumnText(11) : "";
    const double duration = row.ColumnIsNull(12) ? 0 : row.ColumnDouble(12);
    std::string url = row.ColumnText(16);
    if (url.empty()) {
      url = absl::StrCat(
          "mcp+stdio://",
          row.ColumnIsNull(15) ? row.ColumnText(2) : row.ColumnText(15), "/");
    }
    // The recorded exchange, when there is one: its method, status and
    // headers replace what an entry without one assumes (POST, 200 once
    // answered, the JSON content type). An upstream's path is the URL's.
    const bool exchange = !row.ColumnIsNull(17);
    const std::string side = exchange ? row.ColumnText(17) : "";
    const std::string http_method = exchange ? row.ColumnText(18) : "POST";
    const std::string http_path = exchange ? row.ColumnText(19) : "";
    int status = answered ? 200 : 0;
    if (exchange) {
      status = row.ColumnIsNull(20) ? 0 : static_cast<int>(row.ColumnInt64(20));
    }
    if (side == "upstream") url = WithPath(url, http_path);
    const std::string request_headers =
        exchange ? row.ColumnText(21)
                 : R"([{"name":"Content-Type","value":"application/json"}])";
    const std::string response_headers = exchange ? row.ColumnText(22) : "[]";
    absl::StrAppend(out, "{\"startedDateTime\":\"", IsoTime(row.ColumnInt64(1)),
                    "\",\"time\":", duration, ",\"request\":{");
    out->append("\"method\":");
    AppendJsonString(out, http_method);
    absl::StrAppend(out, ",\"url\":", JsonString(url),
                    ",\"httpVersion\":\"HTTP/1.1\",\"cookies\":[],"
                    "\"headers\":",
                    request_headers.empty() ? "[]" : request_headers,
                    ",\"queryString\":[],"
                    "\"postData\":{\"mimeType\":\"application/json\","
                    "\"params\":[],\"text\":");
    AppendJsonString(out, request_raw);
    absl::StrAppend(out, "},\"headersSize\":-1,\"bodySize\":",
                    request_raw.size(), "},\"response\":{\"status\":", status,
                    ",\"statusText\":");
    AppendJsonString(out, status == 0 ? std::string_view()
                                      : http::ReasonPhrase(status));
    absl::StrAppend(
        out,
        ",\"httpVersion\":\"HTTP/1.1\",\"cookies\":[],"
        "\"headers\":",
        response_headers.empty() ? "[]" : response_headers,
        ",\"content\":{\"size\":", response_raw.size(),
        ",\"mimeType\":\"application/json\",\"text\":");
    AppendJsonString(out, response_raw);
    absl::StrAppend(
        out, "},\"redirectURL\":\"\",\"headersSize\":-1,\"bodySize\":",
        answered ? static_cast<int64_t>(response_raw.size()) : -1,
        "},\"cache\":{},\"timings\":{\"send\":0,\"wait\":", duration,
        ",\"receive\":0},\"_mcp\":{\"messageId\":", row.ColumnInt64(0),
        ",\"serverId\":");
    AppendJsonString(out, row.ColumnText(2));
    if (exchange) {
      // Which HTTP request the entry's HTTP side is: the daemon's to the
      // server, or a client's to a front door (its path is the daemon's).
      out->append(",\"http\":{\"side\":");
      AppendJsonString(out, side);
      out->append(",\"path\":");
      AppendJsonString(out, http_path);
      out->push_back('}');
    }
    out->append(",\"sessionId\":");
    AppendJsonString(out, row.ColumnText(3));
    out->append(",\"method\":");
    AppendJsonString(out, row.ColumnText(4));
    out->append(",\"target\":");
    AppendJsonString(out, row.ColumnText(5));
    out->append(",\"jsonrpcId\":");
    AppendJsonString(out, row.ColumnText(7));
    out->append(",\"direction\":");
    AppendJsonString(out, row.ColumnText(8));
    absl::StrAppend(
        out, ",\"responseId\":",
        answered ? absl::StrCat(row.ColumnInt64(9)) : "null", ",\"success\":",
        row.ColumnIsNull(13) ? "null"
                             : (row.ColumnInt64(13) != 0 ? "true" : "false"),
        ",\"errorCode\":");
    AppendJsonString(out, row.ColumnText(14));
    out->append("}}");
  }
  std::string Trailer() const override { return "]}}\n"; }

 private:
  int64_t entries_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MessageExport>> MessageExport::Open(
    const std::string& path, const v1::ExportMessagesRequest& request,
    size_t piece_bytes) {
  std::unique_ptr<MessageExportFormat> format;
  switch (request.format()) {
    case v1::EXPORT_FORMAT_UNSPECIFIED:
    case v1::EXPORT_FORMAT_JSONL:
      format = std::make_unique<JsonLines>();
      break;
    case v1::EXPORT_FORMAT_CSV:
      format = std::make_unique<Csv>();
      break;
    case v1::EXPORT_FORMAT_HAR:
      format = std::make_unique<Har>();
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown export format ", request.format()));
  }
  DatabaseOptions options;
  options.create_if_missing = false;
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path, options));
  ASSIGN_OR_RETURN(Statement query, db->Prepare(format->Sql(request)));
  RETURN_IF_ERROR(BindFilters(query, request));
  auto exporter = std::unique_ptr<MessageExport>(
      new MessageExport(std::move(db), std::move(format), piece_bytes));
  exporter->query_ = std::make_unique<Statement>(std::move(query));
  return exporter;
}

MessageExport::MessageExport(std::unique_ptr<Database> db,
                             std::unique_ptr<MessageExportFormat> format,
                             size_t piece_bytes)
    : db_(std::move(db)),
      format_(std::move(format)),
      piece_bytes_(piece_bytes == 0 ? 1 : piece_bytes) {}

MessageExport::~MessageExport() {
  query_.reset();  // before its connection
}

absl::StatusOr<std::optional<std::string>> MessageExport::Next() {
  if (finished_) return std::nullopt;
  std::string piece;
  if (!started_) {
    started_ = true;
    piece = format_->Header();
  }
  Statement& query = *query_;
  while (piece.size() < piece_bytes_) {
    RETURN_IF_ERROR(query.Bind(":cursor", cursor_));
    int64_t read = 0;
    bool more = true;
    while (piece.size() < piece_bytes_) {
      absl::StatusOr<bool> row = query.Step();
      if (!row.ok()) {
        query.Reset();
        return row.status();
      }
      if (!*row) {
        more = false;
        break;
      }
      ++read;
      ++rows_;
      cursor_ = query.ColumnInt64(0);
      format_->AppendRow(query, &piece);
    }
    query.Reset();
    // The query ended before its limit: nothing after the cursor matches.
    if (!more && read < kRowsPerQuery) {
      piece += format_->Trailer();
      finished_ = true;
      break;
    }
  }
  return piece;
}

const char* MessageExport::ContentType(v1::ExportFormat format) {
  switch (format) {
    case v1::EXPORT_FORMAT_CSV:
      return "text/csv; charset=utf-8";
    case v1::EXPORT_FORMAT_HAR:
      return "application/json";
    default:
      return "application/jsonl";
  }
}

}  // namespace inspector::storage
