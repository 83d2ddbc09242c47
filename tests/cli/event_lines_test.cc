#include "clients/cli/event_lines.h"

#include <gtest/gtest.h>

#include "tests/cli/everything_server.h"

namespace inspector::cli {
namespace event_lines_test {

// 2025-06-01T12:00:00Z.
constexpr double kNowMs = 1748779200000.0;
constexpr const char* kEverything = testdata::kEverythingId;

std::string Line(const v1::Event& event, bool color = false) {
  EventLineOptions options;
  options.color = color;
  options.zone = absl::UTCTimeZone();
  return FormatEventLine(event, testdata::EverythingNames(), options);
}

v1::Event Message(v1::Direction direction, const std::string& kind,
                  const std::string& method) {
  v1::Event event;
  event.set_sequence(1);
  event.set_timestamp(kNowMs + 1250);
  v1::McpMessage* message = event.mutable_message();
  message->set_server_id(kEverything);
  message->set_direction(direction);
  message->set_kind(kind);
  message->set_method(method);
  return event;
}

TEST(FormatEventLineTest, RequestAndResponse) {
  v1::Event request = Message(v1::CLIENT_TO_SERVER, "request", "tools/call");
  request.mutable_message()->set_target("echo");
  request.mutable_message()->set_jsonrpc_id("7");
  EXPECT_EQ(Line(request), "12:00:01.250  everything  →  tools/call  echo  7");

  v1::Event response = Message(v1::SERVER_TO_CLIENT, "response", "tools/call");
  response.mutable_message()->set_target("echo");
  response.mutable_message()->set_jsonrpc_id("7");
  response.mutable_message()->set_duration_ms(123);
  response.mutable_message()->set_success(true);
  EXPECT_EQ(Line(response),
            "12:00:01.250  everything  ←  tools/call  echo  7  (123 ms)");
}

TEST(FormatEventLineTest, ProgressAndResourceUpdates) {
  v1::Event progress;
  progress.set_timestamp(kNowMs + 4500);
  v1::Progress* p = progress.mutable_progress();
  p->set_server_id(kEverything);
  p->set_progress(2);
  p->set_total(5);
  p->set_method("tools/call");
  p->set_target("slow");
  p->set_request_id("\"inspectord-7\"");
  p->set_message("step 2 of 5");
  EXPECT_EQ(Line(progress),
            "12:00:04.500  everything: progress 2/5 of tools/call slow "
            "\"inspectord-7\"  step 2 of 5");
  // No total, no request known, no message.
  progress.mutable_progress()->clear_total();
  progress.mutable_progress()->clear_method();
  progress.mutable_progress()->clear_message();
  progress.mutable_progress()->set_progress(0.5);
  EXPECT_EQ(Line(progress), "12:00:04.500  everything: progress 0.5");

  v1::Event updated;
  updated.set_timestamp(kNowMs + 4600);
  updated.mutable_resource_updated()->set_server_id(kEverything);
  updated.mutable_resource_updated()->set_uri("fixture://counter");
  EXPECT_EQ(Line(updated),
            "12:00:04.600  everything: resource updated fixture://counter");
}

TEST(FormatEventLineTest, OAuthFlows) {
  v1::Event event;
  event.set_timestamp(kNowMs + 4700);
  v1::OAuthFlowEvent* oauth = event.mutable_oauth();
  oauth->set_server_id(kEverything);
  oauth->mutable_transition()->set_from(v1::OAUTH_FLOW_STATE_UNSPECIFIED);
  oauth->mutable_transition()->set_to(v1::METADATA_DISCOVERY);
  oauth->mutable_transition()->set_cause("started");
  EXPECT_EQ(Line(event),
            "12:00:04.700  everything: oauth  flow started at metadata_discovery");

  oauth->mutable_transition()->set_from(v1::METADATA_DISCOVERY);
  oauth->mutable_transition()->set_to(v1::CLIENT_REGISTRATION);
  oauth->mutable_transition()->set_cause("step");
  EXPECT_EQ(Line(event),
            "12:00:04.700  everything: oauth  metadata_discovery → "
            "client_registration");

  oauth->mutable_transition()->set_from(v1::TOKEN_REQUEST);
  oauth->mutable_transition()->set_to(v1::TOKEN_REQUEST);
  oauth->mutable_transition()->set_error("the token endpoint answered HTTP 401: invalid_client");
  oauth->mutable_transition()->set_hint("check oauth.clientId");
  EXPECT_EQ(Line(event),
            "12:00:04.700  everything: oauth  token_request failed: the token "
            "endpoint answered HTTP 401: invalid_client  check oauth.clientId");

  oauth->set_server_name("named");
  v1::OAuthHttpExchange* exchange = oauth->mutable_exchange();
  exchange->set_step(v1::CLIENT_REGISTRATION);
  exchange->set_method("POST");
  exchange->set_url("https://auth.example.com/register");
  exchange->set_status(201);
  exchange->set_duration_ms(20);
  EXPECT_EQ(Line(event),
            "12:00:04.700  named: oauth  [client_registration]  POST  "
            "https://auth.example.com/register  201  (20 ms)");

  oauth->mutable_step()->set_state(v1::METADATA_DISCOVERY);
  oauth->mutable_step()->set_message("protected resource metadata found at x");
  EXPECT_EQ(Line(event),
            "12:00:04.700  named: oauth  [metadata_discovery]  protected "
            "resource metadata found at x");
}

TEST(FormatEventLineTest, ErrorsNotificationsAndMarkers) {
  v1::Event error = Message(v1::SERVER_TO_CLIENT, "error", "");
  error.mutable_message()->set_jsonrpc_id("9");
  error.mutable_message()->set_error_code("-32601");
  error.mutable_message()->set_duration_ms(2);
  EXPECT_EQ(Line(error),
            "12:00:01.250  everything  ←  (error)  9  (2.0 ms)  error -32601");

  v1::Event notification =
      Message(v1::SERVER_TO_CLIENT, "notification", "notifications/progress");
  EXPECT_EQ(Line(notification),
            "12:00:01.250  everything  ←  notifications/progress");

  v1::Event modified = Message(v1::CLIENT_TO_SERVER, "request", "ping");
  modified.mutable_message()->set_jsonrpc_id("\"p\"");
  modified.mutable_message()->set_modified(true);
  modified.mutable_message()->set_truncated(true);
  modified.mutable_message()->set_raw_size(2000000);
  EXPECT_EQ(Line(modified),
            "12:00:01.250  everything  →  ping  \"p\"  [modified]  "
            "[truncated, 2000000 bytes]");
}

TEST(FormatEventLineTest, Colors) {
  v1::Event request = Message(v1::CLIENT_TO_SERVER, "request", "ping");
  request.mutable_message()->set_jsonrpc_id("1");
  EXPECT_EQ(Line(request, true),
            "12:00:01.250  everything  \033[36m→\033[0m  ping  1");

  v1::Event response = Message(v1::SERVER_TO_CLIENT, "response", "ping");
  EXPECT_EQ(Line(response, true),
            "12:00:01.250  everything  \033[32m←\033[0m  ping");

  v1::Event error = Message(v1::SERVER_TO_CLIENT, "error", "ping");
  EXPECT_EQ(Line(error, true),
            "12:00:01.250  everything  \033[31m←\033[0m  \033[31mping\033[0m  "
            "\033[31merror\033[0m");

  v1::Event notification =
      Message(v1::SERVER_TO_CLIENT, "notification", "notifications/message");
  EXPECT_EQ(Line(notification, true),
            "\033[2m12:00:01.250\033[0m  \033[2meverything\033[0m  "
            "\033[32m←\033[0m  \033[2mnotifications/message\033[0m");
}

TEST(FormatEventLineTest, StateChanges) {
  v1::Event event;
  event.set_timestamp(kNowMs);
  v1::StateChange* state = event.mutable_state();
  state->set_server_id(kEverything);
  state->set_from(v1::CONNECTING);
  state->set_to(v1::CONNECTED);
  EXPECT_EQ(Line(event), "12:00:00.000  everything: CONNECTING → CONNECTED");

  state->set_server_name("renamed");
  state->set_to(v1::ERROR);
  state->set_error_code("SPAWN_FAILED");
  state->set_error_message("npx: not found");
  EXPECT_EQ(Line(event),
            "12:00:00.000  renamed: CONNECTING → ERROR  (SPAWN_FAILED: npx: "
            "not found)");
  EXPECT_EQ(Line(event, true),
            "12:00:00.000  \033[31mrenamed:\033[0m\033[31m CONNECTING → "
            "ERROR\033[0m  \033[31m(SPAWN_FAILED: npx: not found)\033[0m");
}

TEST(FormatEventLineTest, Logs) {
  v1::Event event;
  event.set_timestamp(kNowMs);
  v1::LogEntry* log = event.mutable_log();
  log->set_server_id(kEverything);
  log->set_level("warning");
  log->set_source("server");
  log->set_message("disk almost full\nreally");
  EXPECT_EQ(Line(event),
            "12:00:00.000  everything [warning] disk almost full\\nreally");
  EXPECT_EQ(Line(event, true),
            "12:00:00.000  everything\033[33m [warning]\033[0m disk almost "
            "full\\nreally");

  log->clear_server_id();
  log->set_source("daemon");
  log->set_level("info");
  log->set_message("serving");
  EXPECT_EQ(Line(event), "12:00:00.000  inspectord [info] serving");
}

TEST(FormatEventLineTest, DroppedAndOthers) {
  v1::Event dropped;
  dropped.set_timestamp(kNowMs);
  dropped.mutable_dropped()->set_count(12);
  EXPECT_EQ(Line(dropped),
            "12:00:00.000  … 12 events dropped (reader too slow)");
  EXPECT_EQ(Line(dropped, true),
            "12:00:00.000  \033[33m… 12 events dropped (reader too "
            "slow)\033[0m");
  dropped.mutable_dropped()->set_count(1);
  EXPECT_EQ(Line(dropped), "12:00:00.000  … 1 event dropped (reader too slow)");

  v1::Event list;
  list.set_timestamp(kNowMs);
  list.mutable_list_changed()->set_server_id(kEverything);
  list.mutable_list_changed()->set_list("tools");
  EXPECT_EQ(Line(list), "12:00:00.000  everything: tools list changed");

  v1::Event config;
  config.set_timestamp(kNowMs);
  config.mutable_config()->set_server_id("abcdef0123456789");
  config.mutable_config()->set_change("created");
  EXPECT_EQ(Line(config), "12:00:00.000  abcdef01: configuration created");

  v1::Event pending;
  pending.set_timestamp(kNowMs);
  pending.mutable_pending()->set_id("p1");
  pending.mutable_pending()->set_server_id(kEverything);
  pending.mutable_pending()->set_method("sampling/createMessage");
  pending.mutable_pending()->set_status(v1::PENDING);
  EXPECT_EQ(
      Line(pending),
      "12:00:00.000  everything  ←  sampling/createMessage  [pending p1]");

  v1::Event held;
  held.set_timestamp(kNowMs);
  held.mutable_held()->set_id("h1");
  held.mutable_held()->set_action(v1::DROP);
  v1::McpMessage* message = held.mutable_held()->mutable_message();
  message->set_server_id(kEverything);
  message->set_direction(v1::CLIENT_TO_SERVER);
  message->set_kind("request");
  message->set_method("tools/call");
  message->set_target("rm");
  message->set_jsonrpc_id("3");
  EXPECT_EQ(Line(held),
            "12:00:00.000  everything  →  tools/call  rm  3  [held h1: drop]");
}

TEST(FormatEventLineTest, EscapesServerText) {
  v1::Event event = Message(v1::SERVER_TO_CLIENT, "request", "evil\033[2J");
  EXPECT_EQ(Line(event), "12:00:01.250  everything  ←  evil\\x1b[2J");
}

}  // namespace event_lines_test
}  // namespace inspector::cli
