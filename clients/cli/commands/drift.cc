// `inspectorctl drift [SERVER]`, `drift show SERVER ITEM` and `drift
// approve SERVER [ITEM...|--all]`: the items of servers' catalogs that
// changed or appeared since the first listing
// (HistoryService.ListCatalogChanges), one change in detail, and the
// approval of current versions (HistoryService.ApproveCatalog) that a
// server pinning its catalog needs before it shows them again.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/table.h"
#include "clients/cli/times.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace inspector::cli {
namespace {

using HistoryStub = v1::HistoryService::Stub;

struct DriftFlags {
  std::string server;
  bool pending = false;
  uint32_t limit = 100;
};

struct DriftShowFlags {
  std::string server;
  std::string item;
};

struct DriftPinFlags {
  std::string server;
  bool pin = true;
};

struct DriftApproveFlags {
  std::string server;
  std::vector<std::string> items;
  bool all = false;
};

// What a change's version is now: withheld (pinned, not approved),
// pending (not approved), approved, or an older version (superseded).
std::string DriftState(const v1::CatalogChange& change) {
  if (!change.current()) return "superseded";
  if (change.withheld()) return "withheld";
  return change.approved() ? "approved" : "pending";
}

std::string DriftServer(const v1::CatalogChange& change) {
  return change.server_name().empty() ? change.server_id()
                                      : change.server_name();
}

absl::Status RunDrift(Context& context, const DriftFlags& flags) {
  v1::ListCatalogChangesRequest request;
  request.set_server_id(flags.server);
  request.set_pending_only(flags.pending);
  request.set_limit(flags.limit);
  v1::ListCatalogChangesResponse response;
  RETURN_IF_ERROR(context.Call(
      context.history(), &HistoryStub::ListCatalogChanges, request, &response));
  if (context.json()) return context.PrintJson(response);
  if (response.changes_size() == 0) {
    context.out() << "no catalog changes"
                  << (flags.server.empty() ? ""
                                           : absl::StrCat(" of ", flags.server))
                  << "\n"
                  << std::flush;
    return absl::OkStatus();
  }
  TableTimes times = LocalTimes();
  Table table({"SERVER", "KIND", "ITEM", "CHANGE", "WHEN", "FIELDS", "STATE"});
  for (const v1::CatalogChange& change : response.changes()) {
    table.AddRow(
        {DriftServer(change), change.list(), change.item_key(), change.change(),
         FormatTableTime(change.seen_at(), times.now, times.zone),
         change.fields().empty() ? "-" : absl::StrJoin(change.fields(), ","),
         DriftState(change)});
  }
  context.PrintTable(table, /*flexible_column=*/2);
  if (!flags.server.empty() && response.pinned()) {
    context.out() << flags.server
                  << " pins its catalog: withheld items are hidden from its "
                     "callers until approved (inspectorctl drift approve "
                  << flags.server << ")\n"
                  << std::flush;
  }
  return absl::OkStatus();
}

nlohmann::json FieldOf(const std::string& json_text, const std::string& field) {
  nlohmann::json object = nlohmann::json::parse(json_text, nullptr, false);
  if (!object.is_object() || !object.contains(field)) return nullptr;
  return object[field];
}

absl::Status RunDriftShow(Context& context, const DriftShowFlags& flags) {
  v1::ListCatalogChangesRequest request;
  request.set_server_id(flags.server);
  request.set_item_key(flags.item);
  request.set_limit(1);
  v1::ListCatalogChangesResponse response;
  RETURN_IF_ERROR(context.Call(
      context.history(), &HistoryStub::ListCatalogChanges, request, &response));
  if (response.changes_size() == 0) {
    return Error(v1::NOT_FOUND,
                 absl::StrCat("no change of ", flags.item,
                              " in the catalog of ", flags.server));
  }
  const v1::CatalogChange& change = response.changes(0);
  // An added item has no previous version: every field is new.
  std::vector<std::string> fields(change.fields().begin(),
                                  change.fields().end());
  if (fields.empty()) {
    nlohmann::json after =
        nlohmann::json::parse(change.after_json(), nullptr, false);
    if (after.is_object()) {
      for (auto it = after.begin(); it != after.end(); ++it) {
        fields.push_back(it.key());
      }
    }
  }
  if (context.json()) {
    nlohmann::json out = {
        {"serverId", change.server_id()}, {"serverName", change.server_name()},
        {"list", change.list()},          {"itemKey", change.item_key()},
        {"change", change.change()},      {"seenAt", change.seen_at()},
        {"state", DriftState(change)},    {"fields", nlohmann::json::array()}};
    for (const std::string& field : fields) {
      out["fields"].push_back({{"field", field},
                               {"before", FieldOf(change.before_json(), field)},
                               {"after", FieldOf(change.after_json(), field)}});
    }
    context.PrintJson(out);
    return absl::OkStatus();
  }
  TableTimes times = LocalTimes();
  KeyValueBlock block;
  block.Add("Server", DriftServer(change));
  block.Add("Item", absl::StrCat(change.list(), " ", change.item_key()));
  block.Add("Change", change.change());
  block.Add("When", FormatTableTime(change.seen_at(), times.now, times.zone));
  block.Add("State", DriftState(change));
  context.out() << block.Render();
  for (const std::string& field : fields) {
    context.out() << "\n" << field << ":\n";
    nlohmann::json before = FieldOf(change.before_json(), field);
    nlohmann::json after = FieldOf(change.after_json(), field);
    context.out() << "  - " << (before.is_null() ? "(none)" : before.dump())
                  << "\n  + " << (after.is_null() ? "(none)" : after.dump())
                  << "\n";
  }
  context.out() << std::flush;
  return absl::OkStatus();
}

absl::Status RunDriftApprove(Context& context, const DriftApproveFlags& flags) {
  if (flags.items.empty() && !flags.all) {
    return Error(v1::INVALID_REQUEST,
                 "name the items to approve, or approve all with --all");
  }
  v1::ApproveCatalogRequest request;
  request.set_server_id(flags.server);
  for (const std::string& item : flags.items) request.add_item_keys(item);
  request.set_all(flags.all);
  v1::ApproveCatalogResponse response;
  RETURN_IF_ERROR(context.Call(context.history(), &HistoryStub::ApproveCatalog,
                               request, &response));
  if (context.json()) return context.PrintJson(response);
  if (response.approved_size() == 0) {
    context.out() << "nothing to approve: the current versions are approved\n"
                  << std::flush;
    return absl::OkStatus();
  }
  for (const v1::CatalogApproval& approval : response.approved()) {
    context.out() << "approved " << approval.list() << " "
                  << approval.item_key() << "\n";
  }
  context.out() << std::flush;
  return absl::OkStatus();
}

// Sets or clears "pinCatalog" in the server's configuration (extra), the
// other keys of extra kept.
absl::Status RunDriftPin(Context& context, const DriftPinFlags& flags) {
  v1::GetServerRequest get;
  get.set_id(flags.server);
  v1::ServerConfig server;
  RETURN_IF_ERROR(context.Call(
      context.config(), &v1::ConfigService::Stub::GetServer, get, &server));
  v1::UpdateServerRequest request;
  request.set_id(server.id());
  *request.mutable_server()->mutable_extra() = server.extra();
  auto* fields = request.mutable_server()->mutable_extra()->mutable_fields();
  if (flags.pin) {
    (*fields)["pinCatalog"].set_bool_value(true);
  } else {
    fields->erase("pinCatalog");
  }
  request.mutable_update_mask()->add_paths("extra");
  v1::ServerConfig updated;
  RETURN_IF_ERROR(context.Call(context.config(),
                               &v1::ConfigService::Stub::UpdateServer, request,
                               &updated));
  if (context.json()) return context.PrintJson(updated);
  context.out() << server.name()
                << (flags.pin ? " pins its catalog: items not approved are "
                                "withheld from its callers\n"
                              : " no longer pins its catalog\n")
                << std::flush;
  return absl::OkStatus();
}

}  // namespace

void AddCatalogPinCommands(CLI::App* parent, Context* context,
                           const char* group) {
  for (bool pin : {true, false}) {
    auto pin_flags = std::make_shared<DriftPinFlags>();
    pin_flags->pin = pin;
    CLI::App* command = AddCommand(
        parent, context, group,
        {pin ? "pin" : "unpin",
         pin ? "Withhold a server's items until they are approved"
             : "Stop withholding a server's items",
         pin ? "Sets \"pinCatalog\": true in the server's configuration: its\n"
               "items whose current version is not approved (changed since,\n"
               "or new since the first listing) are left out of list answers\n"
               "and their calls refused, for every client (front doors,\n"
               "conversions, the desktop proxy, REST, gRPC), until\n"
               "`inspectorctl drift approve`. Each session to the server\n"
               "lists its catalog before its first call goes, so a tool\n"
               "changed while the server was down is refused too.\n"
               "Also `inspectorctl drift pin`."
             : "Removes \"pinCatalog\" from the server's configuration."},
        pin_flags, RunDriftPin);
    AddServerArgument(command, &pin_flags->server);
  }
}

void AddDriftCommand(CLI::App* app, Context* context) {
  auto flags = std::make_shared<DriftFlags>();
  CLI::App* drift = app->add_subcommand(
      "drift", "Show what changed in servers' catalogs, and approve it");
  drift->group(kMcpGroup);
  drift->add_option("server", flags->server, "Only this server (name or id)")
      ->type_name("SERVER");
  drift->add_flag("--pending", flags->pending,
                  "Only current versions not yet approved");
  drift
      ->add_option("--limit", flags->limit,
                   "Max changes (default 100, at most 1000)")
      ->type_name("N");
  drift->footer(
      "Every list answer (tools, prompts, resources, resource templates) is\n"
      "fingerprinted item by item. The first listing is the baseline; an\n"
      "item that comes back different (CHANGE changed, FIELDS naming what)\n"
      "or appears later (added) is shown here, newest first. STATE:\n"
      "approved, pending (not approved), withheld (not approved, and the\n"
      "server pins its catalog: \"pinCatalog\": true in its entry), or\n"
      "superseded (a newer version came).\n"
      "\n"
      "Examples:\n"
      "  inspectorctl drift\n"
      "  inspectorctl drift everything --pending\n"
      "  inspectorctl drift show everything echo\n"
      "  inspectorctl drift approve everything echo\n"
      "  inspectorctl drift approve everything --all\n"
      "  inspectorctl drift pin everything");

  auto show_flags = std::make_shared<DriftShowFlags>();
  CLI::App* show = AddCommand(
      drift, context, kMcpGroup,
      {"show", "One item's newest change: its fields before and after", ""},
      show_flags, RunDriftShow);
  AddServerArgument(show, &show_flags->server);
  show->add_option("item", show_flags->item,
                   "The item (tool or prompt name, resource URI or template)")
      ->type_name("ITEM")
      ->required();

  auto approve_flags = std::make_shared<DriftApproveFlags>();
  CLI::App* approve = AddCommand(
      drift, context, kMcpGroup,
      {"approve", "Approve the current version of a server's items",
       "A server that pins its catalog withholds an item from its callers\n"
       "(left out of list answers; calls refused with data.reason\n"
       "CATALOG_CHANGED or CATALOG_NOT_APPROVED) until its current version\n"
       "is approved."},
      approve_flags, RunDriftApprove);
  AddServerArgument(approve, &approve_flags->server);
  approve->add_option("items", approve_flags->items, "The items to approve")
      ->type_name("ITEM");
  approve->add_flag("--all", approve_flags->all,
                    "Every item whose current version is not approved");

  AddCatalogPinCommands(drift, context, kMcpGroup);

  drift->callback([context, flags, drift] {
    // CLI11 runs this after a subcommand's callback: keep its action.
    if (!drift->get_subcommands().empty()) return;
    context->SetAction([context, flags] { return RunDrift(*context, *flags); },
                       /*takes_command_line=*/false);
  });
}

}  // namespace inspector::cli
