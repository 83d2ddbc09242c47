#include "server/sessions/session_file.h"

#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/rfc3339.h"
#include "common/secrets.h"
#include "nlohmann/json.hpp"

namespace inspector::sessions {
namespace {

using nlohmann::json;

// The metadata keys the file format defines; the others of an imported
// file are kept in sessions.metadata_json.
const std::set<std::string>& ReservedMetadata() {
  static const auto* const kKeys = new std::set<std::string>{
      "kind", "name", "notes", "server", "protocol_version", "end_reason",
      "replay_of"};
  return *kKeys;
}

std::string Dump(const json& value, int indent = -1) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

json ParseOrDiscarded(std::string_view text) {
  return json::parse(text.begin(), text.end(), nullptr, false);
}

std::string Timestamp(int64_t ms) {
  int64_t seconds = ms / 1000;
  int64_t rest = ms % 1000;
  if (rest < 0) {
    rest += 1000;
    --seconds;
  }
  std::string out;
  if (!AppendRfc3339Timestamp(seconds, static_cast<int32_t>(rest * 1000000),
                              &out)) {
    return "1970-01-01T00:00:00Z";
  }
  return out;
}

bool LooksLikeUrl(const std::string& s) {
  return absl::StartsWithIgnoreCase(s, "http://") ||
         absl::StartsWithIgnoreCase(s, "https://");
}

// Masks, in place, scalar values under secret keys and secrets in URLs.
void MaskJson(json& value, uint32_t* masked) {
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      json& child = it.value();
      if (IsSecretName(it.key()) && !child.is_null() && !child.is_object() &&
          !child.is_array()) {
        if (child != json(kRedacted)) {
          child = std::string(kRedacted);
          ++*masked;
        }
        continue;
      }
      MaskJson(child, masked);
    }
  } else if (value.is_array()) {
    for (json& child : value) MaskJson(child, masked);
  } else if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (LooksLikeUrl(s)) {
      std::string url = MaskSecretsInUrl(s);
      if (url != s) {
        value = std::move(url);
        ++*masked;
      }
    }
  }
}

bool IsPlainShellWord(std::string_view arg) {
  if (arg.empty()) return false;
  for (char c : arg) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') ||
                    std::string_view("_@%+=:,./-").find(c) !=
                        std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

std::string ShellQuote(std::string_view arg) {
  if (IsPlainShellWord(arg)) return std::string(arg);
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

json ParseObject(const std::string& text) {
  if (text.empty()) return json::object();
  json parsed = ParseOrDiscarded(text);
  return parsed.is_object() ? parsed : json::object();
}

// The server object of the metadata, masked unless include_secrets.
json ServerObject(const std::string& server_json, bool include_secrets,
                  uint32_t* masked) {
  json server = ParseObject(server_json);
  if (include_secrets) return server;
  for (const char* key : {"env", "headers"}) {
    auto it = server.find(key);
    if (it == server.end() || !it->is_object()) continue;
    for (auto& [name, value] : it->items()) {
      if (value != json(kRedacted)) {
        value = std::string(kRedacted);
        ++*masked;
      }
    }
  }
  auto args = server.find("args");
  if (args != server.end() && args->is_array()) {
    std::string previous;
    for (json& arg : *args) {
      if (!arg.is_string()) continue;
      std::string text = arg.get<std::string>();
      std::string masked_arg = MaskSecretArg(previous, text);
      if (masked_arg != text) {
        arg = masked_arg;
        ++*masked;
      }
      previous = std::move(text);
    }
  }
  auto url = server.find("url");
  if (url != server.end() && url->is_string()) {
    std::string text = url->get<std::string>();
    std::string masked_url = MaskSecretsInUrl(text);
    if (masked_url != text) {
      *url = masked_url;
      ++*masked;
    }
  }
  return server;
}

std::string CommandLineOf(const json& server) {
  auto command = server.find("command");
  if (command != server.end() && command->is_string() &&
      !command->get_ref<const std::string&>().empty()) {
    std::string line = ShellQuote(command->get_ref<const std::string&>());
    auto args = server.find("args");
    if (args != server.end() && args->is_array()) {
      for (const json& arg : *args) {
        if (arg.is_string()) {
          absl::StrAppend(&line, " ",
                          ShellQuote(arg.get_ref<const std::string&>()));
        }
      }
    }
    return line;
  }
  // A file from elsewhere may give the command line only.
  auto line = server.find("command_line");
  if (line != server.end() && line->is_string()) return line->get<std::string>();
  return "";
}

std::string UrlOf(const json& server) {
  auto url = server.find("url");
  if (url != server.end() && url->is_string()) return url->get<std::string>();
  return "";
}

// A JSON-RPC message's text as the file's "raw" value: parsed JSON, or the
// text itself when it is not JSON (or stored cut).
json RawValue(const std::string& text, bool truncated, bool include_secrets,
              uint32_t* masked, bool* as_text) {
  *as_text = false;
  if (!truncated) {
    json parsed = ParseOrDiscarded(text);
    if (!parsed.is_discarded()) {
      if (!include_secrets) MaskJson(parsed, masked);
      return parsed;
    }
  }
  *as_text = true;
  return text;
}

absl::Status Bad(const std::string& pointer, const std::string& what) {
  return Error(v1::INVALID_REQUEST,
               absl::StrCat("not a session file: ",
                            pointer.empty() ? std::string("the document")
                                            : pointer,
                            " ",
                            what),
               {{"field", pointer}});
}

// Reads member `key` of `object` at `pointer`: absent and null give
// nullptr; a present value of another type than `type` fails.
absl::StatusOr<const json*> Member(const json& object,
                                   const std::string& pointer,
                                   const char* key, json::value_t type,
                                   bool required) {
  const std::string at = absl::StrCat(pointer, "/", key);
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    if (required) return Bad(at, "is missing");
    return nullptr;
  }
  const bool number_ok = type == json::value_t::number_integer &&
                         (it->is_number_integer() || it->is_number_unsigned());
  if (it->type() != type && !number_ok) {
    const char* name = type == json::value_t::string    ? "a string"
                       : type == json::value_t::boolean ? "true or false"
                       : type == json::value_t::object  ? "an object"
                       : type == json::value_t::array   ? "an array"
                                                        : "an integer";
    return Bad(at, absl::StrCat("must be ", name));
  }
  return &*it;
}

absl::StatusOr<int64_t> ParseTime(const json& value, const std::string& at) {
  int64_t seconds = 0;
  int32_t nanos = 0;
  if (!ParseRfc3339Timestamp(value.get_ref<const std::string&>(), &seconds,
                             &nanos)) {
    return Bad(at, "must be an RFC 3339 date-time (2026-01-02T03:04:05.678Z)");
  }
  return seconds * 1000 + nanos / 1000000;
}

std::string KindOf(const json& raw) {
  if (!raw.is_object()) return "invalid";
  const bool has_id = raw.contains("id") && !raw["id"].is_null();
  if (raw.contains("method")) return has_id ? "request" : "notification";
  if (raw.contains("error")) return "error";
  if (raw.contains("result")) return "response";
  return "invalid";
}

}  // namespace

std::string FileTransport(std::string_view stored) {
  if (stored == "stdio") return "stdio";
  if (stored == "streamableHttp") return "streamable_http";
  if (stored == "sse") return "sse";
  return "";
}

std::string StoredTransport(std::string_view file) {
  if (file == "stdio") return "stdio";
  if (file == "streamable_http") return "streamableHttp";
  if (file == "sse") return "sse";
  return "";
}

std::string ServerCommandLine(const std::string& server_json,
                              bool include_secrets) {
  uint32_t masked = 0;
  return CommandLineOf(ServerObject(server_json, include_secrets, &masked));
}

std::string ServerUrl(const std::string& server_json, bool include_secrets) {
  uint32_t masked = 0;
  return UrlOf(ServerObject(server_json, include_secrets, &masked));
}

v1::Session SessionForApi(const storage::StoredSession& stored) {
  v1::Session session = stored.session;
  session.set_server_command(ServerCommandLine(stored.server_json, false));
  session.set_server_url(ServerUrl(stored.server_json, false));
  return session;
}

ExportedFile ExportSessionFile(
    const storage::StoredSession& stored,
    const std::vector<storage::SessionMessage>& messages,
    bool include_secrets) {
  ExportedFile out;
  const v1::Session& s = stored.session;
  json file = json::object();
  file["format"] = kSessionFileFormat;
  file["id"] = s.id();
  file["started_at"] = Timestamp(static_cast<int64_t>(s.started_at()));
  file["ended_at"] = s.ended_at() > 0
                         ? json(Timestamp(static_cast<int64_t>(s.ended_at())))
                         : json(nullptr);
  const std::string transport = FileTransport(s.transport());
  file["transport"] = transport.empty() ? json(nullptr) : json(transport);
  json server = ServerObject(stored.server_json, include_secrets, &out.masked);
  const std::string command = CommandLineOf(server);
  const std::string url = UrlOf(server);
  file["server_command"] = command.empty() ? json(nullptr) : json(command);
  file["server_url"] = url.empty() ? json(nullptr) : json(url);

  json metadata = ParseObject(stored.metadata_json);
  for (const std::string& key : ReservedMetadata()) metadata.erase(key);
  metadata["kind"] = s.kind();
  metadata["name"] = s.name();
  metadata["notes"] = s.notes();
  if (!server.empty()) {
    if (!server.contains("name") && !s.server_name().empty()) {
      server["name"] = s.server_name();
    }
    metadata["server"] = std::move(server);
  } else if (!s.server_name().empty()) {
    metadata["server"] = json{{"name", s.server_name()}};
  }
  if (!s.protocol_version().empty()) {
    metadata["protocol_version"] = s.protocol_version();
  }
  if (!s.end_reason().empty()) metadata["end_reason"] = s.end_reason();
  if (!s.replay_of().empty()) metadata["replay_of"] = s.replay_of();
  file["metadata"] = std::move(metadata);

  // Message ids in the file: the id from an imported file, else the row id.
  std::map<int64_t, std::string> file_ids;
  for (const auto& m : messages) {
    file_ids[m.message.id()] = m.file_id.empty()
                                   ? absl::StrCat(m.message.id())
                                   : m.file_id;
  }
  json list = json::array();
  for (const auto& entry : messages) {
    const v1::McpMessage& m = entry.message;
    json message = json::object();
    message["id"] = file_ids[m.id()];
    message["sequence"] = m.sequence();
    message["timestamp"] = Timestamp(static_cast<int64_t>(m.timestamp()));
    message["direction"] = m.direction() == v1::SERVER_TO_CLIENT
                               ? "server_to_client"
                               : "client_to_server";
    message["transport"] = transport.empty() ? json(nullptr) : json(transport);
    bool as_text = false;
    message["raw"] =
        RawValue(m.raw(), m.truncated(), include_secrets, &out.masked,
                 &as_text);
    if (as_text) message["raw_is_text"] = true;
    if (m.jsonrpc_id().empty()) {
      message["jsonrpc_id"] = nullptr;
    } else {
      json id = ParseOrDiscarded(m.jsonrpc_id());
      message["jsonrpc_id"] = id.is_discarded() ? json(m.jsonrpc_id()) : id;
    }
    message["method"] = m.method().empty() ? json(nullptr) : json(m.method());
    auto correlated = file_ids.find(m.correlated_id());
    message["correlated_id"] =
        m.correlated_id() != 0 && correlated != file_ids.end()
            ? json(correlated->second)
            : json(nullptr);
    message["modified"] = m.modified();
    if (m.original_raw().empty()) {
      message["original_raw"] = nullptr;
    } else {
      bool original_as_text = false;
      message["original_raw"] =
          RawValue(m.original_raw(), m.truncated(), include_secrets,
                   &out.masked, &original_as_text);
      if (original_as_text) message["original_raw_is_text"] = true;
    }
    message["kind"] = m.kind();
    if (!m.target().empty()) message["target"] = m.target();
    if (m.has_duration_ms()) message["duration_ms"] = m.duration_ms();
    if (m.has_success()) message["success"] = m.success();
    if (!m.error_code().empty()) message["error_code"] = m.error_code();
    if (m.truncated()) {
      message["truncated"] = true;
      message["raw_size"] = m.raw_size();
    }
    list.push_back(std::move(message));
  }
  file["messages"] = std::move(list);
  out.json = Dump(file, 2);
  out.json += "\n";
  return out;
}

absl::StatusOr<ParsedFile> ParseSessionFile(std::string_view text) {
  json file = ParseOrDiscarded(text);
  if (file.is_discarded()) {
    // Parse again with exceptions off but a position: nlohmann reports it
    // only through its exception, so find it with a SAX-less parse.
    std::string where;
    try {
      json ignored = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
      where = absl::StrCat(" (byte ", e.byte, ")");
    }
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat("not a session file: the text is not JSON",
                              where),
                 {{"field", ""}});
  }
  if (!file.is_object()) return Bad("", "must be a JSON object");
  ParsedFile parsed;
  v1::Session& s = parsed.session.session;
  using T = json::value_t;

  auto format = Member(file, "", "format", T::string, false);
  if (!format.ok()) return format.status();
  if (*format != nullptr && (*format)->get<std::string>() != kSessionFileFormat) {
    return Bad("/format", absl::StrCat("is \"", (*format)->get<std::string>(),
                                       "\"; this build reads \"",
                                       std::string(kSessionFileFormat),
                                       "\""));
  }
  auto id = Member(file, "", "id", T::string, true);
  if (!id.ok()) return id.status();
  s.set_id((*id)->get<std::string>());
  if (s.id().empty() || s.id().size() > 200) {
    return Bad("/id", "must be 1 to 200 characters");
  }
  auto started = Member(file, "", "started_at", T::string, true);
  if (!started.ok()) return started.status();
  auto started_ms = ParseTime(**started, "/started_at");
  if (!started_ms.ok()) return started_ms.status();
  s.set_started_at(static_cast<double>(*started_ms));
  auto ended = Member(file, "", "ended_at", T::string, false);
  if (!ended.ok()) return ended.status();
  if (*ended != nullptr) {
    auto ended_ms = ParseTime(**ended, "/ended_at");
    if (!ended_ms.ok()) return ended_ms.status();
    s.set_ended_at(static_cast<double>(*ended_ms));
  }
  auto transport = Member(file, "", "transport", T::string, false);
  if (!transport.ok()) return transport.status();
  std::string file_transport;
  if (*transport != nullptr) {
    file_transport = (*transport)->get<std::string>();
    s.set_transport(StoredTransport(file_transport));
    if (s.transport().empty()) {
      return Bad("/transport",
                 "must be \"stdio\", \"streamable_http\" or \"sse\"");
    }
  }
  auto metadata = Member(file, "", "metadata", T::object, false);
  if (!metadata.ok()) return metadata.status();
  json server = json::object();
  s.set_kind("proxy");
  if (*metadata != nullptr) {
    const json& md = **metadata;
    auto kind = Member(md, "/metadata", "kind", T::string, false);
    if (!kind.ok()) return kind.status();
    if (*kind != nullptr) {
      s.set_kind((*kind)->get<std::string>());
      if (s.kind() != "daemon" && s.kind() != "bridge" &&
          s.kind() != "proxy" && s.kind() != "replay") {
        return Bad("/metadata/kind",
                   "must be \"daemon\", \"bridge\", \"proxy\" or \"replay\"");
      }
    }
    struct {
      const char* key;
      std::string* out;
    } strings[] = {{"name", s.mutable_name()},
                   {"notes", s.mutable_notes()},
                   {"protocol_version", s.mutable_protocol_version()},
                   {"end_reason", s.mutable_end_reason()},
                   {"replay_of", s.mutable_replay_of()}};
    for (auto& field : strings) {
      auto value = Member(md, "/metadata", field.key, T::string, false);
      if (!value.ok()) return value.status();
      if (*value != nullptr) *field.out = (*value)->get<std::string>();
    }
    auto server_md = Member(md, "/metadata", "server", T::object, false);
    if (!server_md.ok()) return server_md.status();
    if (*server_md != nullptr) server = **server_md;
    json extra = json::object();
    for (auto& [key, value] : md.items()) {
      if (ReservedMetadata().count(key) == 0) extra[key] = value;
    }
    if (!extra.empty()) parsed.session.metadata_json = Dump(extra);
  }
  // A file from elsewhere may name its server only by command line or URL.
  for (const char* key : {"server_command", "server_url"}) {
    auto value = Member(file, "", key, T::string, false);
    if (!value.ok()) return value.status();
    if (*value == nullptr) continue;
    const std::string text = (*value)->get<std::string>();
    if (std::string_view(key) == "server_command") {
      if (CommandLineOf(server) != text) server["command_line"] = text;
    } else if (UrlOf(server) != text) {
      server["url"] = text;
    }
  }
  if (server.contains("name") && server["name"].is_string()) {
    s.set_server_name(server["name"].get<std::string>());
  }
  if (!server.empty()) parsed.session.server_json = Dump(server);

  auto messages = Member(file, "", "messages", T::array, true);
  if (!messages.ok()) return messages.status();
  std::map<std::string, int> index_of;
  uint64_t last_sequence = 0;
  int i = 0;
  for (const json& item : **messages) {
    const std::string at = absl::StrCat("/messages/", i);
    if (!item.is_object()) return Bad(at, "must be an object");
    storage::SessionMessage entry;
    v1::McpMessage& m = entry.message;
    auto mid = Member(item, at, "id", T::string, true);
    if (!mid.ok()) return mid.status();
    entry.file_id = (*mid)->get<std::string>();
    if (entry.file_id.empty()) return Bad(at + "/id", "must not be empty");
    if (!index_of.emplace(entry.file_id, i).second) {
      return Bad(at + "/id",
                 absl::StrCat("\"", entry.file_id, "\" is used twice"));
    }
    auto sequence = Member(item, at, "sequence", T::number_integer, false);
    if (!sequence.ok()) return sequence.status();
    if (*sequence != nullptr) {
      if ((*sequence)->is_number_integer() &&
          (*sequence)->get<int64_t>() < 1) {
        return Bad(at + "/sequence", "must be 1 or more");
      }
      const uint64_t value = (*sequence)->get<uint64_t>();
      if (value <= last_sequence) {
        return Bad(at + "/sequence",
                   "must be greater than the previous message's (messages "
                   "are listed in order)");
      }
      last_sequence = value;
    }
    auto ts = Member(item, at, "timestamp", T::string, true);
    if (!ts.ok()) return ts.status();
    auto ts_ms = ParseTime(**ts, at + "/timestamp");
    if (!ts_ms.ok()) return ts_ms.status();
    m.set_timestamp(static_cast<double>(*ts_ms));
    auto direction = Member(item, at, "direction", T::string, true);
    if (!direction.ok()) return direction.status();
    const std::string dir = (*direction)->get<std::string>();
    if (dir == "client_to_server") {
      m.set_direction(v1::CLIENT_TO_SERVER);
    } else if (dir == "server_to_client") {
      m.set_direction(v1::SERVER_TO_CLIENT);
    } else {
      return Bad(at + "/direction",
                 "must be \"client_to_server\" or \"server_to_client\"");
    }
    auto raw_is_text = Member(item, at, "raw_is_text", T::boolean, false);
    if (!raw_is_text.ok()) return raw_is_text.status();
    auto raw = item.find("raw");
    if (raw == item.end()) return Bad(at + "/raw", "is missing");
    json raw_json;
    if (*raw_is_text != nullptr && (*raw_is_text)->get<bool>()) {
      if (!raw->is_string()) {
        return Bad(at + "/raw", "must be a string (raw_is_text is true)");
      }
      m.set_raw(raw->get<std::string>());
      raw_json = ParseOrDiscarded(m.raw());
    } else {
      raw_json = *raw;
      m.set_raw(Dump(raw_json));
    }
    auto original_is_text =
        Member(item, at, "original_raw_is_text", T::boolean, false);
    if (!original_is_text.ok()) return original_is_text.status();
    auto original = item.find("original_raw");
    if (original != item.end() && !original->is_null()) {
      if (*original_is_text != nullptr && (*original_is_text)->get<bool>()) {
        if (!original->is_string()) {
          return Bad(at + "/original_raw",
                     "must be a string (original_raw_is_text is true)");
        }
        m.set_original_raw(original->get<std::string>());
      } else {
        m.set_original_raw(Dump(*original));
      }
    }
    auto jsonrpc_id = item.find("jsonrpc_id");
    if (jsonrpc_id != item.end() && !jsonrpc_id->is_null()) {
      if (!jsonrpc_id->is_string() && !jsonrpc_id->is_number()) {
        return Bad(at + "/jsonrpc_id", "must be a string, a number or null");
      }
      m.set_jsonrpc_id(Dump(*jsonrpc_id));
    }
    auto method = Member(item, at, "method", T::string, false);
    if (!method.ok()) return method.status();
    if (*method != nullptr) m.set_method((*method)->get<std::string>());
    auto kind = Member(item, at, "kind", T::string, false);
    if (!kind.ok()) return kind.status();
    m.set_kind(*kind != nullptr ? (*kind)->get<std::string>()
                                : KindOf(raw_json));
    if (m.kind() != "request" && m.kind() != "response" &&
        m.kind() != "error" && m.kind() != "notification" &&
        m.kind() != "invalid") {
      return Bad(at + "/kind",
                 "must be \"request\", \"response\", \"error\", "
                 "\"notification\" or \"invalid\"");
    }
    auto correlated = Member(item, at, "correlated_id", T::string, false);
    if (!correlated.ok()) return correlated.status();
    if (*correlated != nullptr) {
      auto it = index_of.find((*correlated)->get<std::string>());
      if (it == index_of.end() || it->second == i) {
        return Bad(at + "/correlated_id",
                   absl::StrCat("\"", (*correlated)->get<std::string>(),
                                "\" names no earlier message of the file"));
      }
      entry.correlated_index = it->second;
    }
    auto modified = Member(item, at, "modified", T::boolean, false);
    if (!modified.ok()) return modified.status();
    if (*modified != nullptr) m.set_modified((*modified)->get<bool>());
    auto target = Member(item, at, "target", T::string, false);
    if (!target.ok()) return target.status();
    if (*target != nullptr) m.set_target((*target)->get<std::string>());
    auto duration = item.find("duration_ms");
    if (duration != item.end() && !duration->is_null()) {
      if (!duration->is_number()) {
        return Bad(at + "/duration_ms", "must be a number");
      }
      m.set_duration_ms(duration->get<double>());
    }
    auto success = Member(item, at, "success", T::boolean, false);
    if (!success.ok()) return success.status();
    if (*success != nullptr) m.set_success((*success)->get<bool>());
    auto error_code = Member(item, at, "error_code", T::string, false);
    if (!error_code.ok()) return error_code.status();
    if (*error_code != nullptr) {
      m.set_error_code((*error_code)->get<std::string>());
    }
    auto truncated = Member(item, at, "truncated", T::boolean, false);
    if (!truncated.ok()) return truncated.status();
    if (*truncated != nullptr && (*truncated)->get<bool>()) {
      m.set_truncated(true);
      auto size = Member(item, at, "raw_size", T::number_integer, false);
      if (!size.ok()) return size.status();
      if (*size != nullptr) m.set_raw_size((*size)->get<uint64_t>());
    }
    if (m.raw_size() == 0) m.set_raw_size(m.raw().size());
    m.set_sequence(static_cast<uint64_t>(i) + 1);
    parsed.messages.push_back(std::move(entry));
    ++i;
  }
  s.set_messages(static_cast<uint32_t>(parsed.messages.size()));
  (void)file_transport;
  return parsed;
}

}  // namespace inspector::sessions
