// inspectord: the inspector's control-plane daemon. Flags live here only;
// they become DaemonOptions.
#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/clock/timer_queue.h"
#include "common/intercept/breakpoint_spec.h"
#include "common/message_limits.h"
#include "common/service_process.h"
#include "common/version.h"
#include "server/daemon.h"
#include "server/logging.h"

namespace {

// "30d", "12h", "90m", "45s", "1w", or "0": a retention age.
absl::StatusOr<absl::Duration> ParseAge(const std::string& text) {
  if (text == "0") return absl::ZeroDuration();
  int64_t n = 0;
  const char unit = text.empty() ? '\0' : text.back();
  if (text.size() < 2 ||
      !absl::SimpleAtoi(text.substr(0, text.size() - 1), &n) || n < 0) {
    return absl::InvalidArgumentError("not a duration");
  }
  switch (unit) {
    case 's':
      return absl::Seconds(n);
    case 'm':
      return absl::Minutes(n);
    case 'h':
      return absl::Hours(n);
    case 'd':
      return absl::Hours(24 * n);
    case 'w':
      return absl::Hours(24 * 7 * n);
    default:
      return absl::InvalidArgumentError("not a duration");
  }
}

// "500MB", "2GiB", "64K", "1048576", "0": bytes, in binary units.
absl::StatusOr<int64_t> ParseBytes(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && absl::ascii_isdigit(text[digits])) ++digits;
  int64_t n = 0;
  if (digits == 0 || !absl::SimpleAtoi(text.substr(0, digits), &n)) {
    return absl::InvalidArgumentError("not a size");
  }
  const std::string unit = absl::AsciiStrToLower(text.substr(digits));
  int shift = 0;
  if (unit.empty() || unit == "b") {
    shift = 0;
  } else if (unit == "k" || unit == "kb" || unit == "kib") {
    shift = 10;
  } else if (unit == "m" || unit == "mb" || unit == "mib") {
    shift = 20;
  } else if (unit == "g" || unit == "gb" || unit == "gib") {
    shift = 30;
  } else if (unit == "t" || unit == "tb" || unit == "tib") {
    shift = 40;
  } else {
    return absl::InvalidArgumentError("not a size");
  }
  if (n > (INT64_MAX >> shift)) return absl::InvalidArgumentError("too large");
  return n << shift;
}

}  // namespace

int main(int argc, char** argv) {
  inspector::DaemonOptions options;
  std::string log_level = "info";
  std::string log_format = "text";
  CLI::App app{
      "inspectord: inspect, debug and proxy MCP servers.\n"
      "Serves the inspector.v1 gRPC API (with health and reflection) on a\n"
      "loopback address and keeps its state in one SQLite file. Every call\n"
      "except health needs the session token, which is created on first\n"
      "start and read by inspectorctl automatically."};
  app.set_version_flag("--version", inspector::Version());
  app.add_option("--listen", options.listen,
                 "gRPC address: host:port, [v6]:port or unix:/path; port 0 "
                 "picks a free one")
      ->capture_default_str();
  app.add_option("--db", options.database_path,
                 "SQLite database file, created with mode 0600 if missing")
      ->capture_default_str();
  app.add_option("--token-file", options.token_file,
                 "session token file (default: $INSPECTOR_TOKEN_FILE, else "
                 "$XDG_STATE_HOME/inspector/token, else "
                 "~/.local/state/inspector/token)");
  app.add_option("--import", options.import_file,
                 "mcp.json, Claude Desktop, Cursor or VS Code config to "
                 "import at start (same-named servers are replaced)")
      ->check(CLI::ExistingFile);
  app.add_option("--config", options.config_file,
                 "live mcp.json (the seed's format): loaded at start (created "
                 "from the database if missing), every change written back "
                 "(mode 0600), hand edits picked up while running");
  app.add_option("--allowed-dir", options.allowed_dirs,
                 "directory stdio servers' cwd and command paths and the "
                 "--config/--import files must lie in, after resolving .. "
                 "and links (repeatable; default: no restriction)");
  app.add_option("--http", options.http_listen,
                 "also serve the REST + SSE API and the MCP front doors "
                 "(/servers/NAME/mcp) on this host:port (e.g. "
                 "127.0.0.1:3000; port 0 picks a free one)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--cors-origin", options.http_cors_origins,
                 "browser origin the REST API accepts (repeatable; replaces "
                 "the defaults http://localhost:5173 and "
                 "http://localhost:3000 and their 127.0.0.1 forms)");
  app.add_option("--allowed-host", options.http_allowed_hosts,
                 "extra host name the REST API accepts in the Host header "
                 "besides localhost, 127.0.0.1 and ::1 (repeatable)");
  size_t http_max_body_mib = options.http_max_body_bytes >> 20;
  app.add_option("--http-max-body-mib", http_max_body_mib,
                 "largest request body --http accepts, in MiB (413 beyond)")
      ->check(CLI::Range(size_t{1}, inspector::kMaxForwardedMessageBytes >> 20))
      ->capture_default_str();
  app.add_option("--frontdoor-max-sessions", options.frontdoor_max_sessions,
                 "MCP client sessions per server on the --http front doors "
                 "(/servers/NAME/mcp and /sse); 503 beyond")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  int64_t frontdoor_idle_seconds = 600;
  app.add_option("--frontdoor-idle-timeout", frontdoor_idle_seconds,
                 "seconds a front-door client session may stay unused "
                 "before it is ended with its server session")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--frontdoor-token", options.frontdoor_token,
                 "require \"Authorization: Bearer TOKEN\" on the front "
                 "doors and serve any caller that sends it (default: none, "
                 "and only processes of the user running inspectord are "
                 "served; other users get 403)");
  app.add_option("--frontdoor-issuer", options.frontdoor_issuers,
                 "make the front doors OAuth resource servers: serve any "
                 "caller with a valid JWT access token from this "
                 "authorization server (its issuer URL, https or loopback "
                 "http; repeatable), issued for the front door's URL; the "
                 "user running the caller and --frontdoor-token then no "
                 "longer decide (the two flags cannot be combined)");
  app.add_option("--frontdoor-scope", options.frontdoor_scopes,
                 "a scope every front-door access token must carry "
                 "(repeatable; 403 insufficient_scope without it; needs "
                 "--frontdoor-issuer)");
  app.add_option("--frontdoor-introspection-client-id",
                 options.frontdoor_introspection_client_id,
                 "with --frontdoor-issuer: also take opaque access tokens, "
                 "asking the issuer about each (RFC 7662 token "
                 "introspection at the introspection_endpoint of its "
                 "metadata) as this client; answers are kept a minute");
  app.add_option("--frontdoor-introspection-secret-file",
                 options.frontdoor_introspection_secret_file,
                 "file holding the secret of "
                 "--frontdoor-introspection-client-id (HTTP Basic "
                 "authentication at the introspection endpoint)");
  app.add_option("--frontdoor-cors-origin", options.frontdoor_cors_origins,
                 "browser origin the front doors accept, e.g. a web MCP "
                 "client's http://localhost:6274 (repeatable; default: "
                 "none; --cors-origin does not apply to them)");
  bool no_metrics = false;
  app.add_flag("--no-metrics", no_metrics,
               "keep no Prometheus metrics and serve no /metrics");
  app.add_option("--metrics-listen", options.metrics_listen,
                 "also serve the Prometheus metrics (GET /metrics, no token) "
                 "on a listener of their own at this host:port, for a "
                 "scraper (e.g. 127.0.0.1:9464; port 0 picks a free one); "
                 "--http serves them too, behind the session token")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_flag("--metrics-allow-network", options.metrics_allow_network,
               "allow a non-loopback --metrics-listen address: anyone who "
               "can reach it reads the metrics (server names and ids, tool "
               "names, counts), with no token");
  app.add_option("--otel-endpoint", options.tracing.endpoint,
                 "export traces over OTLP to this collector: the traces URL "
                 "for http/protobuf (e.g. http://127.0.0.1:4318/v1/traces), "
                 "host:port for grpc (default: OTEL_EXPORTER_OTLP_TRACES_"
                 "ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; "
                 "none: no traces)");
  app.add_option("--otel-protocol", options.tracing.protocol,
                 "http/protobuf (default) or grpc (default: "
                 "OTEL_EXPORTER_OTLP_PROTOCOL)")
      ->check(CLI::IsMember({"http/protobuf", "grpc"}));
  app.add_option("--otel-service-name", options.tracing.service_name,
                 "service.name of the exported spans (default: "
                 "OTEL_SERVICE_NAME, else inspectord)");
  double otel_ratio = -1;
  app.add_option("--otel-sample-ratio", otel_ratio,
                 "sample this share of new traces, from 0 to 1 (a caller's "
                 "sampled flag decides for its own traces; default: "
                 "OTEL_TRACES_SAMPLER, else all)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--otel-metrics-endpoint", options.tracing.metrics_endpoint,
                 "push the metrics over OTLP to this collector: the metrics "
                 "URL for http/protobuf (e.g. http://127.0.0.1:4318/v1/"
                 "metrics), host:port for grpc (default: OTEL_EXPORTER_OTLP_"
                 "METRICS_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + "
                 "/v1/metrics; none: no push)");
  std::string otel_metrics_interval;
  app.add_option("--otel-metrics-interval", otel_metrics_interval,
                 "how often the metrics are pushed, e.g. 60s, 500ms "
                 "(default: OTEL_METRIC_EXPORT_INTERVAL in ms, else 60s)")
      ->check([](const std::string& text) -> std::string {
        absl::Duration interval;
        return absl::ParseDuration(text, &interval) &&
                       interval > absl::ZeroDuration()
                   ? ""
                   : "a duration above 0, e.g. 60s or 500ms";
      });
  app.add_flag("--otel-capture-payloads", options.tracing.capture_payloads,
               "put each request's and answer's JSON, secrets masked, into "
               "its spans (off by default: spans then carry no payload)");
  app.add_option("--ready-file", options.ready_file,
                 "write the bound host:port here once serving");
  bool no_history = false;
  app.add_flag("--no-history", no_history,
               "do not record messages in the database (for benchmarks; "
               "history and logs stay empty)");
  int64_t idle_seconds = 300;
  app.add_option("--idle-timeout", idle_seconds,
                 "seconds a server may stay unused before it is stopped "
                 "(stdio processes are killed)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--history-max-messages,--history-max-rows",
                 options.history_max_rows,
                 "keep at most this many messages; the oldest go first, "
                 "with their sessions (0: no limit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  std::string history_max_age;
  CLI::Option* max_age =
      app.add_option("--history-max-age", history_max_age,
                     "remove messages older than this: 30d, 12h, 90m, 1w "
                     "(0: keep; default 30d). Pinned and named sessions "
                     "are always kept")
          ->check(CLI::Validator(
              [](std::string& text) -> std::string {
                return ParseAge(text).ok() ? "" : "e.g. 30d, 12h, 90m or 0";
              },
              "DURATION"));
  std::string history_max_bytes = "0";
  app.add_option("--history-max-bytes", history_max_bytes,
                 "remove the oldest messages while the database holds more: "
                 "500MB, 2GiB, ... (binary units; 0: no limit); freed space "
                 "is given back to the file system")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return ParseBytes(text).ok() ? "" : "e.g. 500MB, 2GiB or 0";
          },
          "SIZE"))
      ->capture_default_str();
  std::string history_sync = "answered";
  app.add_option("--history-sync", history_sync,
                 "answered: a call's answer leaves once its request and "
                 "response are committed to history, so a call that was "
                 "answered is in the database at once and survives the "
                 "daemon being killed; async: the answer leaves at once and "
                 "the rows are committed within ~50 ms, faster, but a "
                 "query right after the answer may not find the call yet, "
                 "and a kill -9 or crash loses the calls answered in the "
                 "last ~50 ms")
      ->check(CLI::IsMember({"answered", "async"}))
      ->capture_default_str();
  int64_t history_days = 30;
  app.add_option("--history-max-days", history_days,
                 "the same as --history-max-age in days (0: keep)")
      ->check(CLI::NonNegativeNumber)
      ->excludes(max_age);
  app.add_option("--bridge-port-base", options.bridge_port_base,
                 "first port of the conversions' pool (convert); ports "
                 "other programs hold are skipped; 0: the kernel picks")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--bridge-port-count", options.bridge_port_count,
                 "ports in the conversions' pool")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  app.add_option("--bridge-max", options.bridge_max,
                 "conversions that may run at once; more are refused (503)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  int64_t bridge_idle_seconds = 600;
  app.add_option("--bridge-idle-timeout", bridge_idle_seconds,
                 "seconds a converted server's client session may stay idle "
                 "before it and its process are ended")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--dangerously-expose-to-network",
               options.allow_network_exposure,
               "allow a non-loopback --listen address: anyone who can reach "
               "it and has the token can start processes on this machine");
  app.add_flag("--intercept", options.intercept,
               "start in intercept mode: hold every message until it is "
               "forwarded, modified or dropped (default: passthrough, only "
               "breakpoints hold)");
  app.add_option("--breakpoint", options.breakpoints,
                 "hold the messages SPEC matches (repeatable): key=value "
                 "pairs, comma-separated: server, session, direction "
                 "(c2s|s2c), kind, method, target, pattern (RE2), pointer "
                 "(JSON Pointer), value (JSON), value_pattern (RE2); flags "
                 "once, unanswered, disabled. E.g. "
                 "method=tools/call,target=echo")
      ->check(CLI::Validator(
          [](std::string& spec) -> std::string {
            auto breakpoint = inspector::intercept::ParseBreakpointSpec(spec);
            if (breakpoint.ok()) return "";
            return std::string(breakpoint.status().message());
          },
          "SPEC"));
  app.add_option("--hold-timeout", options.hold_timeout_ms,
                 "forward a held message unchanged after this many ms "
                 "(0: hold until acted on)")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "debug, info, warn or error")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}))
      ->capture_default_str();
  app.add_option("--log-format", log_format,
                 "text: one readable line per entry; json: NDJSON, one "
                 "object per line with \"type\" app, mcp_request or "
                 "mcp_response (every JSON-RPC message is logged)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.footer(
      "Examples:\n"
      "  inspectord                          # 127.0.0.1:50051, ./inspector.db\n"
      "  inspectord --import ~/.config/Claude/claude_desktop_config.json\n"
      "  inspectord --http 127.0.0.1:3000     # and the REST API on port 3000\n"
      "  inspectord --listen 127.0.0.1:0 --ready-file /tmp/addr --db /tmp/x.db");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  options.record_history = !no_history;
  options.metrics = !no_metrics;
  if (otel_ratio >= 0) options.tracing.sample_ratio = otel_ratio;
  if (absl::Duration interval;
      !otel_metrics_interval.empty() &&
      absl::ParseDuration(otel_metrics_interval, &interval)) {
    options.tracing.metrics_interval = interval;
  }
  options.answer_after_recorded = history_sync == "answered";
  options.idle_timeout = absl::Seconds(idle_seconds);
  options.bridge_idle_timeout = absl::Seconds(bridge_idle_seconds);
  options.http_max_body_bytes = http_max_body_mib << 20;
  options.frontdoor_idle_timeout = absl::Seconds(frontdoor_idle_seconds);
  options.history_max_age = history_max_age.empty()
                                ? absl::Hours(24 * history_days)
                                : *ParseAge(history_max_age);
  options.history_max_bytes = *ParseBytes(history_max_bytes);
  inspector::SetLogLevel(inspector::ParseLogLevel(log_level));
  if (log_format == "json") {
    inspector::SetLogFormat(inspector::LogFormat::kJson);
  }

  // Stop signals are blocked in every thread; one thread waits for them.
  sigset_t stop_signals = inspector::PrepareServiceProcess();
  // The process's one real clock, for the log and the daemon alike; its
  // thread starts after the stop signals are blocked. Never destroyed: a
  // thread may still log while the process exits.
  auto* clock = new inspector::TimerQueue();
  inspector::SetLogClock(clock);
  options.clock = clock;

  auto daemon = inspector::Daemon::Start(options);
  if (!daemon.ok()) {
    std::cerr << "inspectord: " << daemon.status().message() << "\n";
    return 1;
  }
  inspector::LogInfo(absl::StrCat(
      "inspectord ", inspector::Version(), " serving gRPC on ",
      (*daemon)->address(),
      (*daemon)->http_address().empty()
          ? std::string()
          : absl::StrCat(" and REST on ", (*daemon)->http_address()),
      " (database ", options.database_path,
      ", token file ", (*daemon)->token_file(), ")"));
  if (!(*daemon)->metrics_address().empty()) {
    inspector::LogInfo(absl::StrCat("metrics on http://",
                                    (*daemon)->metrics_address(), "/metrics"));
  }
  if (!(*daemon)->http_address().empty()) {
    absl::StatusOr<std::string> ui = (*daemon)->NewSignInUrl();
    if (ui.ok()) {
      inspector::LogInfo(absl::StrCat(
          "web UI: open ", *ui,
          " (signs this browser in; the link works once, for 15 minutes: "
          "`inspectorctl ui` prints a fresh one)"));
    }
  }

  std::thread signal_waiter([&stop_signals, &daemon] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    inspector::LogInfo(absl::StrCat("received ", strsignal(signal_number),
                                    ", shutting down"));
    (*daemon)->Shutdown();
  });
  (*daemon)->Wait();
  // Wait() also returns after a Shutdown() from elsewhere; wake the waiter.
  pthread_kill(signal_waiter.native_handle(), SIGTERM);
  signal_waiter.join();
  daemon->reset();
  inspector::LogInfo("stopped");
  return 0;
}
