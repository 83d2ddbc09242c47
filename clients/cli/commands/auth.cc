// `inspectorctl auth login|status|refresh|logout|debug`: OAuth for
// protected HTTP servers. The daemon is the OAuth client; these commands
// drive its flow (OAuthService) and open the browser on this machine.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/text.h"
#include "common/errors.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

struct AuthFlags {
  std::string server;
  bool no_browser = false;
  bool headless = false;
  std::string protocol;
  std::string registration;
  std::vector<std::string> scopes;
  bool all = false;
  bool step = false;
  bool resume = false;
  std::string start_at;
  std::string authorization_server;
  std::string client_id;
};

std::string StateName(v1::OAuthFlowState state) {
  switch (state) {
    case v1::METADATA_DISCOVERY: return "metadata_discovery";
    case v1::CLIENT_REGISTRATION: return "client_registration";
    case v1::AUTHORIZATION_REDIRECT: return "authorization_redirect";
    case v1::AUTHORIZATION_CODE: return "authorization_code";
    case v1::TOKEN_REQUEST: return "token_request";
    case v1::COMPLETE: return "complete";
    default: return "unspecified";
  }
}

bool HasDesktop() {
  const char* x = std::getenv("DISPLAY");
  const char* w = std::getenv("WAYLAND_DISPLAY");
  return (x != nullptr && *x) || (w != nullptr && *w);
}

// Prints what the flow did since `shown_exchanges`/`shown_log`.
void PrintProgress(Context& context, const v1::OAuthFlow& flow,
                   int* shown_exchanges, int* shown_log, bool verbose) {
  std::ostream& err = std::cerr;
  for (int i = *shown_log; i < flow.log_size(); ++i) {
    const auto& step = flow.log(i);
    err << "[" << StateName(step.state()) << "] "
        << SanitizeForTerminal(step.message()) << "\n";
  }
  *shown_log = flow.log_size();
  for (int i = *shown_exchanges; i < flow.exchanges_size(); ++i) {
    const auto& ex = flow.exchanges(i);
    if (!verbose) continue;
    context.out() << "  " << ex.method() << " " << SanitizeForTerminal(ex.url())
                  << " -> "
                  << (ex.status() ? absl::StrCat(ex.status())
                                  : absl::StrCat("error: ", ex.error()))
                  << absl::StrFormat(" (%.0f ms)", ex.duration_ms()) << "\n";
    for (const auto& [name, value] : ex.request_headers()) {
      context.out() << "    > " << name << ": " << SanitizeForTerminal(value) << "\n";
    }
    if (!ex.request_body().empty()) {
      context.out() << "    > " << SanitizeForTerminal(ex.request_body().substr(0, 2000)) << "\n";
    }
    for (const auto& [name, value] : ex.response_headers()) {
      context.out() << "    < " << name << ": " << SanitizeForTerminal(value) << "\n";
    }
    if (!ex.response_body().empty()) {
      context.out() << "    < " << SanitizeForTerminal(ex.response_body().substr(0, 2000)) << "\n";
    }
  }
  *shown_exchanges = flow.exchanges_size();
  context.out() << std::flush;
}

absl::Status FlowFailed(Context& context, const v1::OAuthFlow& flow) {
  Failure failure;
  failure.exit_code = kExitAuth;
  failure.message = absl::StrCat("OAuth ", StateName(flow.state()), ": ",
                                 SanitizeForTerminal(flow.latest_error()));
  failure.hint = flow.hint();
  context.PrintFailure(failure);
  return AlreadyReported(kExitAuth);
}

absl::Status Advance(Context& context, const std::string& server,
                     v1::AdvanceFlowRequest request, v1::OAuthFlow* flow) {
  request.set_server_id(server);
  return context.CallServer(context.oauth(), &v1::OAuthService::Stub::AdvanceFlow,
                            request, flow);
}

// login and debug: the same flow; debug shows every exchange and may
// pause before each step.
absl::Status RunLogin(Context& context, const AuthFlags& flags, bool debug) {
  v1::StartFlowRequest start;
  start.set_server_id(flags.server);
  start.set_protocol_version(flags.protocol);
  start.set_registration_strategy(flags.registration);
  for (const auto& s : flags.scopes) start.add_scopes(s);
  if (!flags.start_at.empty()) {
    v1::OAuthFlowState at = v1::OAUTH_FLOW_STATE_UNSPECIFIED;
    v1::OAuthFlowState_Parse(absl::AsciiStrToUpper(flags.start_at), &at);
    start.set_start_at(at);
  }
  start.set_authorization_server(flags.authorization_server);
  if (!flags.client_id.empty()) {
    start.set_client_id(flags.client_id);
    // A confidential client's secret: never a flag, which other users of
    // the machine can read.
    if (const char* secret = std::getenv("INSPECTOR_OAUTH_CLIENT_SECRET")) {
      start.set_client_secret(secret);
    }
  }
  v1::OAuthFlow flow;
  if (flags.resume) {
    // The server's unfinished flow, where it stopped (also after a
    // restart of the daemon).
    v1::GetFlowRequest get;
    get.set_server_id(flags.server);
    RETURN_IF_ERROR(context.Call(context.oauth(),
                                 &v1::OAuthService::Stub::GetFlow, get, &flow));
  } else {
    RETURN_IF_ERROR(context.Call(context.oauth(),
                                 &v1::OAuthService::Stub::StartFlow, start,
                                 &flow));
  }

  int shown_exchanges = 0, shown_log = 0;
  const bool verbose = debug && !context.json();
  auto pause = [&]() {
    if (!debug || !flags.step) return;
    std::cerr << "next: " << StateName(flow.state()) << " — press Enter"
              << std::flush;
    std::string line;
    std::getline(std::cin, line);
  };
  auto show = [&]() {
    if (debug && context.json()) {
      (void)context.PrintJson(flow);
    } else {
      PrintProgress(context, flow, &shown_exchanges, &shown_log, verbose);
    }
  };
  // A start at a later step ran the steps before it: a failed one is said
  // as a step's failure.
  if (!flags.resume && !flow.latest_error().empty()) {
    show();
    return FlowFailed(context, flow);
  }
  for (int guard = 0; guard < 16 && flow.state() != v1::COMPLETE; ++guard) {
    if (flow.state() != v1::AUTHORIZATION_CODE) {
      pause();
      RETURN_IF_ERROR(Advance(context, flags.server, {}, &flow));
      show();
      if (!flow.latest_error().empty()) return FlowFailed(context, flow);
      continue;
    }
    // The browser leg.
    v1::AdvanceFlowRequest request;
    if (flags.headless) {
      request.set_follow_redirect(true);
    } else if (flags.no_browser || !HasDesktop()) {
      std::cerr << "Open this URL in a browser and approve:\n\n  "
                << flow.authorization_url() << "\n\n";
      if (flags.no_browser) {
        std::cerr << "Then paste the URL the browser was sent to (or the "
                     "code): "
                  << std::flush;
        std::string line;
        if (!std::getline(std::cin, line)) {
          return Error(v1::CANCELLED, "no redirected URL was pasted");
        }
        line = std::string(absl::StripAsciiWhitespace(line));
        if (line.find("://") != std::string::npos) {
          request.set_redirect_url(line);
        } else {
          request.set_authorization_code(line);
        }
      }
    } else {
      std::cerr << "Opening the browser to sign in to "
                << SanitizeForTerminal(flags.server) << "...\n";
      if (!OpenInBrowser(flow.authorization_url()).ok()) {
        std::cerr << "Could not open a browser; open this URL:\n\n  "
                  << flow.authorization_url() << "\n\n";
      }
    }
    if (request.follow_redirect() || !request.redirect_url().empty() ||
        !request.authorization_code().empty()) {
      pause();
      RETURN_IF_ERROR(Advance(context, flags.server, std::move(request), &flow));
      show();
      if (!flow.latest_error().empty()) return FlowFailed(context, flow);
      continue;
    }
    // Wait for the redirect to reach the daemon's callback.
    std::cerr << "Waiting for the browser to come back (Ctrl-C to stop)...\n";
    absl::Time deadline = absl::Now() + absl::Minutes(10);
    while (flow.state() == v1::AUTHORIZATION_CODE && flow.latest_error().empty()) {
      if (absl::Now() > deadline) {
        return Error(v1::REQUEST_TIMEOUT,
                     "the browser did not come back within 10 minutes");
      }
      absl::SleepFor(absl::Milliseconds(500));
      v1::GetFlowRequest get;
      get.set_server_id(flags.server);
      RETURN_IF_ERROR(context.Call(context.oauth(),
                                   &v1::OAuthService::Stub::GetFlow, get, &flow));
    }
    show();
    if (flow.state() != v1::COMPLETE && !flow.latest_error().empty()) {
      return FlowFailed(context, flow);
    }
  }
  if (flow.state() != v1::COMPLETE) return FlowFailed(context, flow);
  if (!debug && context.json()) return context.PrintJson(flow);
  if (!context.json()) {
    context.out() << "Authorized " << SanitizeForTerminal(flags.server)
                  << " with " << SanitizeForTerminal(flow.issuer());
    if (flow.granted_scopes_size() > 0) {
      context.out() << " (scopes: " << absl::StrJoin(flow.granted_scopes(), " ")
                    << ")";
    }
    context.out() << "\n" << std::flush;
  }
  return absl::OkStatus();
}

absl::Status RunAuthStatus(Context& context, const AuthFlags& flags) {
  v1::GetAuthStatusRequest request;
  request.set_server_id(flags.server);
  v1::AuthStatus status;
  RETURN_IF_ERROR(context.Call(context.oauth(),
                               &v1::OAuthService::Stub::GetAuthStatus, request,
                               &status));
  if (context.json()) return context.PrintJson(status);
  auto line = [&](const char* name, const std::string& value) {
    if (!value.empty()) {
      context.out() << name << ": " << SanitizeForTerminal(value) << "\n";
    }
  };
  context.out() << SanitizeForTerminal(flags.server) << ": "
                << (status.authenticated() ? "authenticated" : "not authenticated")
                << "\n";
  line("issuer", status.issuer());
  line("resource", status.resource());
  line("client id", status.client_id());
  line("registration", status.registration_strategy());
  line("token endpoint auth", status.token_endpoint_auth_method());
  line("scopes", absl::StrJoin(status.scopes(), " "));
  line("obtained", status.obtained_at());
  line("expires", status.expires_at());
  if (status.authenticated()) {
    context.out() << "refresh token: " << (status.has_refresh_token() ? "yes" : "no")
                  << "\n";
  }
  context.out() << std::flush;
  if (!status.authenticated()) {
    Failure failure;
    failure.exit_code = kExitAuth;
    failure.message = absl::StrCat(SanitizeForTerminal(flags.server),
                                   " has no OAuth tokens");
    failure.hint = absl::StrCat("run `inspectorctl auth login ",
                                SanitizeForTerminal(flags.server), "`");
    context.PrintFailure(failure);
    return AlreadyReported(kExitAuth);
  }
  return absl::OkStatus();
}

absl::Status RunRefresh(Context& context, const AuthFlags& flags) {
  v1::RefreshRequest request;
  request.set_server_id(flags.server);
  v1::RefreshResponse response;
  RETURN_IF_ERROR(context.CallServer(context.oauth(),
                                     &v1::OAuthService::Stub::Refresh, request,
                                     &response));
  if (context.json()) return context.PrintJson(response);
  context.out() << "Refreshed " << SanitizeForTerminal(flags.server);
  if (!response.expires_at().empty()) {
    context.out() << " (expires " << response.expires_at() << ")";
  }
  context.out() << "\n" << std::flush;
  return absl::OkStatus();
}

absl::Status RunLogout(Context& context, const AuthFlags& flags) {
  v1::RevokeTokenRequest request;
  request.set_server_id(flags.server);
  request.set_forget_client(flags.all);
  google::protobuf::Empty empty;
  RETURN_IF_ERROR(context.Call(context.oauth(),
                               &v1::OAuthService::Stub::RevokeToken, request,
                               &empty));
  if (!context.json()) {
    context.out() << "Logged out of " << SanitizeForTerminal(flags.server)
                  << (flags.all ? " (client registration forgotten)" : "")
                  << "\n" << std::flush;
  }
  return absl::OkStatus();
}

void AddFlowOptions(CLI::App* cmd, AuthFlags* flags) {
  cmd->add_option("--protocol", flags->protocol,
                  "Authorization revision: 2025-03-26, 2025-06-18, 2025-11-25, "
                  "2026-07-28 (default: 2025-11-25's discovery, with "
                  "2026-07-28's checks, falling back to 2025-03-26)")
      ->type_name("REV");
  cmd->add_option("--registration", flags->registration,
                  "dcr, preregistered or cimd (default: preregistered when "
                  "the server has oauth.clientId, else cimd when the "
                  "authorization server supports it and can fetch the "
                  "document, else dcr)")
      ->type_name("STRATEGY");
  cmd->add_option("--scope", flags->scopes,
                  "A scope to request (repeatable; default: from the server)")
      ->type_name("SCOPE");
  cmd->add_option("--authorization-server", flags->authorization_server,
                  "Use this authorization server (its issuer, or the URL of "
                  "its metadata document) instead of discovering it from the "
                  "server; the server's URL is the resource")
      ->type_name("URL");
  cmd->add_option("--client-id", flags->client_id,
                  "A client pre-registered with the authorization server "
                  "(a confidential client's secret is read from "
                  "INSPECTOR_OAUTH_CLIENT_SECRET)")
      ->type_name("ID");
  cmd->add_flag("--no-browser", flags->no_browser,
                "Print the authorization URL and read the redirected URL "
                "(or code) pasted back on stdin");
  cmd->add_flag("--resume", flags->resume,
                "Go on with the server's unfinished flow where it stopped "
                "(flows are kept across daemon restarts) instead of starting "
                "a new one");
  cmd->add_flag("--headless", flags->headless,
                "The daemon GETs the authorization URL itself and follows its "
                "redirect (for authorization servers that approve without a "
                "person, such as test servers)");
}

}  // namespace

void AddAuthCommands(CLI::App* app, Context* context) {
  CLI::App* auth = app->add_subcommand(
      "auth", "OAuth for protected HTTP servers: login, status, refresh, "
              "logout, debug");
  auth->require_subcommand(1);

  auto login_flags = std::make_shared<AuthFlags>();
  CLI::App* login = auth->add_subcommand(
      "login", "Authorize the daemon with a server's authorization server");
  login->add_option("server", login_flags->server, "The server (name or id)")
      ->required();
  AddFlowOptions(login, login_flags.get());
  login->footer(
      "Discovers the server's authorization server, registers (or uses the\n"
      "configured client), opens the authorization URL in the browser\n"
      "(xdg-open when there is a desktop; printed otherwise) and waits for\n"
      "the redirect to the daemon's /oauth/callback. The tokens are kept by\n"
      "the daemon and sent as Authorization: Bearer to that server only.\n"
      "Exits 0 when authorized, 3 when the flow failed (with the step and a\n"
      "hint), 2 for an unknown server.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl auth login remote\n"
      "  inspectorctl auth login remote --no-browser --scope mcp:read");
  login->callback([context, login_flags] {
    context->SetAction(
        [context, login_flags] { return RunLogin(*context, *login_flags, false); },
        false);
  });

  auto debug_flags = std::make_shared<AuthFlags>();
  CLI::App* debug = auth->add_subcommand(
      "debug", "The OAuth flow step by step, with every HTTP exchange");
  debug->add_option("server", debug_flags->server, "The server (name or id)")
      ->required();
  AddFlowOptions(debug, debug_flags.get());
  debug->add_flag("--step", debug_flags->step,
                  "Wait for Enter before each step");
  debug->add_option("--start-at", debug_flags->start_at,
                    "Begin at this step: metadata_discovery (default), "
                    "client_registration (needs --authorization-server) or "
                    "authorization_redirect (also needs --client-id)")
      ->type_name("STEP")
      ->check(CLI::IsMember(
          {"metadata_discovery", "client_registration", "authorization_redirect"}));
  debug->footer(
      "Runs the same flow as login and prints each step's requests and\n"
      "answers as it goes (secrets masked). -o json prints the flow after\n"
      "each step. --start-at skips the steps before it, doing them from\n"
      "what is given instead.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl auth debug remote --step\n"
      "  inspectorctl auth debug remote --start-at client_registration \\\n"
      "      --authorization-server https://auth.example.com\n"
      "  inspectorctl auth debug remote --start-at authorization_redirect \\\n"
      "      --authorization-server https://auth.example.com --client-id my-app");
  debug->callback([context, debug_flags] {
    context->SetAction(
        [context, debug_flags] { return RunLogin(*context, *debug_flags, true); },
        false);
  });

  auto status_flags = std::make_shared<AuthFlags>();
  CLI::App* status = auth->add_subcommand(
      "status", "What the daemon holds for a server (tokens masked)");
  status->add_option("server", status_flags->server, "The server (name or id)")
      ->required();
  status->footer("Exits 0 when the server has tokens, 3 when it has none.");
  status->callback([context, status_flags] {
    context->SetAction(
        [context, status_flags] {
          return RunAuthStatus(*context, *status_flags);
        },
        false);
  });

  auto refresh_flags = std::make_shared<AuthFlags>();
  CLI::App* refresh = auth->add_subcommand(
      "refresh", "Refresh a server's access token now");
  refresh->add_option("server", refresh_flags->server, "The server (name or id)")
      ->required();
  refresh->callback([context, refresh_flags] {
    context->SetAction(
        [context, refresh_flags] { return RunRefresh(*context, *refresh_flags); },
        false);
  });

  auto logout_flags = std::make_shared<AuthFlags>();
  CLI::App* logout = auth->add_subcommand(
      "logout", "Forget a server's tokens");
  logout->add_option("server", logout_flags->server, "The server (name or id)")
      ->required();
  logout->add_flag("--all", logout_flags->all,
                   "Forget the client registration too");
  logout->callback([context, logout_flags] {
    context->SetAction(
        [context, logout_flags] { return RunLogout(*context, *logout_flags); },
        false);
  });
}

}  // namespace inspector::cli
