#include "clients/cli/client_config.h"

#include "absl/strings/str_cat.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/context.h"
#include "common/jsonc.h"

namespace inspector::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kStateVersion = 1;
// The keys of an entry that say how to launch or reach the server; the
// rewritten entry sets its own and drops the others.
constexpr const char* kLaunchKeys[] = {"command", "args",    "env",
                                       "cwd",     "url",     "headers",
                                       "type",    "envFile", "transport"};

absl::StatusOr<Json> ParseFile(std::string_view text, const char* subject) {
  if (IsBlankJsonc(text)) return Json::object();
  JsoncOptions options;
  options.subject = subject;
  absl::StatusOr<Json> parsed = ParseJsonc(text, options);
  if (!parsed.ok()) {
    return LocalError(v1::INVALID_REQUEST,
                      absl::StrCat(subject, ": ", parsed.status().message()));
  }
  if (!parsed->is_object()) {
    return LocalError(v1::INVALID_REQUEST,
                      absl::StrCat(subject, " is not a JSON object"));
  }
  return parsed;
}

// The servers object of `document`, created when absent.
absl::StatusOr<Json*> Servers(Json& document, DesktopClient client) {
  Json& servers = document[ServersKey(client)];
  if (servers.is_null()) servers = Json::object();
  if (!servers.is_object()) {
    return LocalError(v1::INVALID_REQUEST,
                      absl::StrCat("\"", ServersKey(client),
                                   "\" in the client's file is not an object"));
  }
  return &servers;
}

std::string Dump(const Json& json) {
  return json.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

absl::StatusOr<Json> ParseState(std::string_view state_text,
                                DesktopClient client) {
  if (state_text.empty()) {
    return Json{{"version", kStateVersion},
                {"client", DesktopClientName(client)},
                {"servers", Json::object()}};
  }
  absl::StatusOr<Json> state = ParseFile(state_text, "the proxy state file");
  if (!state.ok()) return state.status();
  if (!(*state)["servers"].is_object()) (*state)["servers"] = Json::object();
  const Json& owner = (*state)["client"];
  if (owner.is_string() && owner.get<std::string>() != DesktopClientName(client)) {
    return LocalError(
        v1::INVALID_REQUEST,
        absl::StrCat("this file's proxy entries were installed for --client ",
                     owner.get<std::string>(), ", not ",
                     DesktopClientName(client)));
  }
  return state;
}

}  // namespace

absl::StatusOr<DesktopClient> ParseDesktopClient(std::string_view name) {
  if (name == "claude" || name == "claude-desktop") return DesktopClient::kClaude;
  if (name == "cursor") return DesktopClient::kCursor;
  if (name == "vscode" || name == "code") return DesktopClient::kVsCode;
  return UsageError(absl::StrCat("unknown --client \"", std::string(name), "\""),
                    "use --client claude, cursor or vscode");
}

const char* DesktopClientName(DesktopClient client) {
  switch (client) {
    case DesktopClient::kClaude:
      return "claude";
    case DesktopClient::kCursor:
      return "cursor";
    case DesktopClient::kVsCode:
      return "vscode";
  }
  return "";
}

const char* DesktopClientTitle(DesktopClient client) {
  switch (client) {
    case DesktopClient::kClaude:
      return "Claude Desktop";
    case DesktopClient::kCursor:
      return "Cursor";
    case DesktopClient::kVsCode:
      return "VS Code";
  }
  return "";
}

const char* ServersKey(DesktopClient client) {
  return client == DesktopClient::kVsCode ? "servers" : "mcpServers";
}

std::string DefaultClientConfigPath(DesktopClient client,
                                    const std::string& home,
                                    const std::string& cwd) {
  switch (client) {
    case DesktopClient::kClaude:
      return absl::StrCat(home, "/.config/Claude/claude_desktop_config.json");
    case DesktopClient::kCursor:
      return absl::StrCat(home, "/.cursor/mcp.json");
    case DesktopClient::kVsCode:
      return absl::StrCat(cwd, "/.vscode/mcp.json");
  }
  return "";
}

std::string StatePath(const std::string& config_path) {
  return config_path + ".inspectord-proxy.json";
}

std::string BackupPath(const std::string& config_path) {
  return config_path + ".inspectord-backup";
}

std::vector<std::string> ProxyArgs(const std::string& name,
                                   const std::string& addr,
                                   const std::string& token_file) {
  std::vector<std::string> args = {"proxy", name};
  if (!addr.empty() && addr != kDefaultAddress) {
    args.push_back("--addr");
    args.push_back(addr);
  }
  if (!token_file.empty()) {
    args.push_back("--token-file");
    args.push_back(token_file);
  }
  return args;
}

absl::StatusOr<std::optional<Json>> FindClientEntry(
    std::string_view config_text, DesktopClient client,
    const std::string& name) {
  absl::StatusOr<Json> document = ParseFile(config_text, "the client's file");
  if (!document.ok()) return document.status();
  absl::StatusOr<Json*> servers = Servers(*document, client);
  if (!servers.ok()) return servers.status();
  auto it = (*servers)->find(name);
  if (it == (*servers)->end()) return std::optional<Json>();
  if (!it->is_object()) {
    return LocalError(v1::INVALID_REQUEST,
                      absl::StrCat("the client's entry \"", name,
                                   "\" is not a JSON object"));
  }
  return std::optional<Json>(*it);
}

absl::StatusOr<std::optional<Json>> InstalledOriginal(
    std::string_view state_text, const std::string& name) {
  if (state_text.empty()) return std::optional<Json>();
  absl::StatusOr<Json> state = ParseFile(state_text, "the proxy state file");
  if (!state.ok()) return state.status();
  const Json& servers = (*state)["servers"];
  if (!servers.is_object() || !servers.contains(name)) {
    return std::optional<Json>();
  }
  const Json& record = servers[name];
  if (!record.is_object() || !record.contains("original") ||
      !record["original"].is_object()) {
    return std::optional<Json>();
  }
  return std::optional<Json>(record["original"]);
}

std::string SingleEntryDocument(DesktopClient client, const std::string& name,
                                const Json& entry) {
  Json document = Json::object();
  document[ServersKey(client)][name] = entry;
  return Dump(document);
}

absl::StatusOr<RewriteResult> InstallProxyEntry(std::string_view config_text,
                                                std::string_view state_text,
                                                DesktopClient client,
                                                const std::string& name,
                                                const ProxyLaunch& launch) {
  absl::StatusOr<Json> document = ParseFile(config_text, "the client's file");
  if (!document.ok()) return document.status();
  absl::StatusOr<Json> state = ParseState(state_text, client);
  if (!state.ok()) return state.status();
  absl::StatusOr<Json*> servers = Servers(*document, client);
  if (!servers.ok()) return servers.status();

  RewriteResult result;
  Json& kept = (*state)["servers"];
  result.already_installed = kept.contains(name);
  Json entry = Json::object();
  auto it = (*servers)->find(name);
  if (it != (*servers)->end()) {
    if (!it->is_object()) {
      return LocalError(v1::INVALID_REQUEST,
                        absl::StrCat("the client's entry \"", name,
                                     "\" is not a JSON object"));
    }
    result.had_entry = true;
    entry = *it;
  }
  if (!result.already_installed) {
    kept[name] = {{"original", result.had_entry ? entry : Json(nullptr)}};
  }
  // The launch keys first, in the client's usual order, then the client's
  // own keys as they were.
  Json rewritten = Json::object();
  if (client == DesktopClient::kVsCode) rewritten["type"] = "stdio";
  rewritten["command"] = launch.program;
  rewritten["args"] = launch.args;
  for (auto field = entry.begin(); field != entry.end(); ++field) {
    bool launch_key = false;
    for (const char* key : kLaunchKeys) launch_key |= field.key() == key;
    if (!launch_key) rewritten[field.key()] = field.value();
  }
  kept[name]["installed"] = rewritten;
  (**servers)[name] = std::move(rewritten);
  result.config_text = Dump(*document);
  result.state_text = Dump(*state);
  return result;
}

absl::StatusOr<RewriteResult> UninstallProxyEntry(std::string_view config_text,
                                                  std::string_view state_text,
                                                  DesktopClient client,
                                                  const std::string& name,
                                                  bool force) {
  const std::string not_installed = absl::StrCat(
      "\"", name, "\" was not installed in this ", DesktopClientTitle(client),
      " file by `inspectorctl proxy --install`");
  if (state_text.empty()) return LocalError(v1::NOT_FOUND, not_installed);
  absl::StatusOr<Json> state = ParseState(state_text, client);
  if (!state.ok()) return state.status();
  Json& kept = (*state)["servers"];
  if (!kept.contains(name)) return LocalError(v1::NOT_FOUND, not_installed);
  absl::StatusOr<Json> document = ParseFile(config_text, "the client's file");
  if (!document.ok()) return document.status();
  absl::StatusOr<Json*> servers = Servers(*document, client);
  if (!servers.ok()) return servers.status();

  const Json& record = kept[name];
  auto it = (*servers)->find(name);
  if (!force && it != (*servers)->end() && record.contains("installed") &&
      *it != record["installed"]) {
    return LocalError(
        v1::FAILED_PRECONDITION,
        absl::StrCat("the entry \"", name,
                     "\" was changed since it was installed; restoring it "
                     "would lose those changes"),
        "give --force to restore the original entry anyway");
  }
  RewriteResult result;
  const Json& original = record.contains("original") ? record["original"]
                                                     : Json(nullptr);
  result.had_entry = !original.is_null();
  if (original.is_null()) {
    if (it != (*servers)->end()) (*servers)->erase(name);
  } else {
    // In place when the entry is still there, else appended.
    (**servers)[name] = original;
  }
  kept.erase(name);
  result.config_text = Dump(*document);
  result.state_text = kept.empty() ? "" : Dump(*state);
  return result;
}

}  // namespace inspector::cli
