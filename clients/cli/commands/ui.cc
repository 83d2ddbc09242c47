// `inspectorctl ui [--open] [--url BASE]`: a fresh one-time sign-in link
// of the web UI (SystemService.CreateSignInCode), printed or opened; and
// `inspectorctl ui sessions [--revoke ID|all]`: the browsers signed in with
// such links (ListUiSessions, RevokeUiSessions).

#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/table.h"
#include "clients/cli/text.h"
#include "clients/cli/times.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

struct UiOptions {
  bool open = false;
  std::string url;
};

absl::Status RunUi(Context& context, const UiOptions& options) {
  std::string base(absl::StripSuffix(options.url, "/"));
  if (!base.empty() && !absl::StartsWith(base, "http://") &&
      !absl::StartsWith(base, "https://")) {
    return UsageError("--url must start with http:// or https://",
                      "for example --url http://127.0.0.1:3000");
  }
  v1::SignInCode code;
  RETURN_IF_ERROR(context.Call(context.system(),
                               &v1::SystemService::Stub::CreateSignInCode,
                               v1::CreateSignInCodeRequest(), &code));
  std::string url = base.empty()
                        ? code.url()
                        : absl::StrCat(base, "/ui/sign-in?code=", code.code());
  if (url.empty()) {
    return LocalError(
        v1::FAILED_PRECONDITION,
        "inspectord serves no web UI: it was started without --http",
        "start it with --http 127.0.0.1:3000 (tools/run.sh does), or give "
        "--url with the address of an inspector-gateway in front of it");
  }
  if (context.json()) {
    context.PrintJson(
        nlohmann::json{{"url", url}, {"expiresAt", code.expires_at()}});
  } else {
    context.out() << url << "\n" << std::flush;
  }
  if (options.open) {
    if (absl::Status opened = OpenInBrowser(url); !opened.ok()) {
      std::cerr << "warning: " << opened.message()
                << "; open the link above in a browser yourself\n";
    }
  }
  return absl::OkStatus();
}

struct UiSessionsOptions {
  // --revoke: a sign-in's id, or "all"; empty to list.
  std::string revoke;
};

absl::Status RunUiSessions(Context& context,
                           const UiSessionsOptions& options) {
  if (!options.revoke.empty()) {
    v1::RevokeUiSessionsRequest request;
    if (options.revoke == "all") {
      request.set_all(true);
    } else {
      request.set_id(options.revoke);
    }
    v1::RevokeUiSessionsResponse response;
    RETURN_IF_ERROR(context.Call(context.system(),
                                 &v1::SystemService::Stub::RevokeUiSessions,
                                 request, &response));
    if (context.json()) return context.PrintJson(response);
    if (request.all()) {
      context.out() << "revoked " << response.revoked()
                    << (response.revoked() == 1 ? " web UI sign-in\n"
                                                : " web UI sign-ins\n");
    } else {
      context.out() << "revoked " << SanitizeForTerminal(options.revoke)
                    << "\n";
    }
    return absl::OkStatus();
  }
  v1::ListUiSessionsResponse response;
  RETURN_IF_ERROR(context.Call(context.system(),
                               &v1::SystemService::Stub::ListUiSessions,
                               v1::ListUiSessionsRequest(), &response));
  if (context.json()) return context.PrintJson(response);
  if (response.sessions().empty()) {
    context.out() << "no browser is signed into the web UI\n";
    return absl::OkStatus();
  }
  absl::Time now = absl::Now();
  absl::TimeZone zone = absl::LocalTimeZone();
  Table table({"ID", "SIGNED IN", "LAST USED", "ENDS", "BROWSER"});
  for (const v1::UiSession& s : response.sessions()) {
    table.AddRow({SanitizeForTerminal(s.id()),
                  FormatTableTime(s.created_at(), now, zone),
                  FormatTableTime(s.last_used_at(), now, zone),
                  FormatTableTime(s.idle_expires_at(), now, zone),
                  s.user_agent().empty() ? "-"
                                         : SanitizeForTerminal(s.user_agent())});
  }
  context.PrintTable(table, 4);
  return absl::OkStatus();
}

}  // namespace

void AddUiCommand(CLI::App* app, Context* context) {
  auto options = std::make_shared<UiOptions>();
  CLI::App* ui = app->add_subcommand(
      "ui",
      "Print a one-time link that signs a browser into the web UI (--open "
      "opens it)");
  ui->add_flag("--open", options->open,
               "Open the link in the desktop's browser (xdg-open)");
  ui->add_option("--url", options->url,
                 "The web UI's address when it is not inspectord's own "
                 "--http listener, e.g. an inspector-gateway's")
      ->type_name("BASE");
  ui->footer(
      "The link works once, for 15 minutes. Opening it signs that browser\n"
      "in with a credential of its own (not the session token), kept in an\n"
      "HttpOnly cookie for that address only; the address bar keeps\n"
      "neither. The sign-in ends after 7 days, after 12 hours unused, on\n"
      "\"Sign out\", or with `inspectorctl ui sessions --revoke`.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl ui\n"
      "  inspectorctl ui --open\n"
      "  inspectorctl ui --url http://127.0.0.1:3001   # an inspector-gateway\n"
      "  inspectorctl ui sessions");

  auto sessions_options = std::make_shared<UiSessionsOptions>();
  CLI::App* sessions = ui->add_subcommand(
      "sessions",
      "List the browsers signed into the web UI; --revoke signs one out");
  sessions->add_option("--revoke", sessions_options->revoke,
                       "End the sign-in with this ID (from the list), or "
                       "every sign-in with `all`; that browser's next call "
                       "is refused")
      ->type_name("ID|all");
  sessions->footer(
      "Columns: ID, SIGNED IN, LAST USED, ENDS (when the sign-in ends unless\n"
      "used before: 12 hours after its last use, 7 days after sign-in at\n"
      "the latest), BROWSER (its User-Agent at sign-in). Only the daemon's\n"
      "session token may list or revoke sign-ins, not a browser's. A revoked\n"
      "browser signs in again with a fresh `inspectorctl ui` link. Exits 2\n"
      "for an unknown ID.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl ui sessions\n"
      "  inspectorctl ui sessions --revoke ui-3f9c0a1b2c3d4e5f\n"
      "  inspectorctl ui sessions --revoke all");
  sessions->callback([context, sessions_options] {
    context->SetAction(
        [context, sessions_options] {
          return RunUiSessions(*context, *sessions_options);
        },
        /*takes_command_line=*/false);
  });
  ui->callback([context, options, sessions] {
    // CLI11 runs this after the subcommand's callback: keep its action.
    if (sessions->parsed()) return;
    context->SetAction([context, options] { return RunUi(*context, *options); },
                       /*takes_command_line=*/false);
  });
}

}  // namespace inspector::cli
