#include "server/telemetry/tracer.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace inspector::telemetry {
namespace {

bool NamesTool(std::string_view method) { return method == "tools/call"; }
bool NamesPrompt(std::string_view method) { return method == "prompts/get"; }
bool NamesResource(std::string_view method) {
  return absl::StartsWith(absl::string_view(method.data(), method.size()),
                          "resources/") &&
         method != "resources/list" &&
         method != "resources/templates/list";
}

// The JSON-RPC id as the conventions want it: a string, quotes removed.
std::string RequestId(std::string_view id_json) {
  if (id_json.size() >= 2 && id_json.front() == '"' && id_json.back() == '"') {
    return std::string(id_json.substr(1, id_json.size() - 2));
  }
  return std::string(id_json);
}

// The request's attributes both spans carry (the session's are shared).
Attributes RequestAttributes(const RequestStart& start, size_t room) {
  Attributes a;
  a.reserve(room + 3);
  a.push_back({"mcp.method.name", std::string(start.method)});
  if (!start.target.empty()) {
    if (NamesTool(start.method)) {
      a.push_back({"gen_ai.tool.name", std::string(start.target)});
      a.push_back({"gen_ai.operation.name", std::string("execute_tool")});
    } else if (NamesPrompt(start.method)) {
      a.push_back({"gen_ai.prompt.name", std::string(start.target)});
    } else if (NamesResource(start.method)) {
      a.push_back({"mcp.resource.uri", std::string(start.target)});
    }
  }
  return a;
}

// `outcome` on `span`; the answer's body only where `with_payload` (the
// SERVER span: the caller's answer).
void ApplyOutcome(const Outcome& outcome, bool with_payload, SpanData* span) {
  if (!outcome.rpc_status_code.empty()) {
    span->attributes.push_back(
        {"rpc.response.status_code", outcome.rpc_status_code});
  }
  if (!outcome.error_type.empty()) {
    span->attributes.push_back({"error.type", outcome.error_type});
  }
  if (with_payload && !outcome.payload.empty()) {
    span->attributes.push_back({"inspector.response.body", outcome.payload});
  }
  span->error = outcome.error;
  span->status_message = outcome.message;
}

}  // namespace

std::shared_ptr<const Attributes> SessionSpanAttributes::Build(
    const Identity& identity, std::string_view protocol_version) {
  auto a = std::make_shared<Attributes>();
  a->reserve(7);
  if (!identity.session_id.empty()) {
    a->push_back({"mcp.session.id", identity.session_id});
  }
  if (!protocol_version.empty()) {
    a->push_back({"mcp.protocol.version", std::string(protocol_version)});
  }
  a->push_back({"inspector.server.id", identity.server_id});
  if (!identity.server_name.empty()) {
    a->push_back({"inspector.server.name", identity.server_name});
  }
  a->push_back({"inspector.session.kind", identity.session_kind});
  if (!identity.caller_subject.empty()) {
    a->push_back({"user.id", identity.caller_subject});
  }
  if (!identity.caller_client_id.empty()) {
    a->push_back({"inspector.caller.client_id", identity.caller_client_id});
  }
  return a;
}

std::shared_ptr<const Attributes> SessionSpanAttributes::For(
    std::string_view protocol_version) const {
  absl::MutexLock lock(&mu_);
  if (attributes_ == nullptr || protocol_version_ != protocol_version) {
    protocol_version_ = std::string(protocol_version);
    attributes_ = Build(identity_, protocol_version);
  }
  return attributes_;
}

std::string SpanName(std::string_view method, std::string_view target) {
  if (!target.empty() && (NamesTool(method) || NamesPrompt(method))) {
    return std::string(method) + " " + std::string(target);
  }
  return std::string(method);
}

RequestTrace::RequestTrace(std::shared_ptr<SpanExporter> exporter,
                           bool recording, const RequestStart& start,
                           TraceId trace_id, std::string trace_state,
                           SpanId parent, uint8_t flags)
    : exporter_(std::move(exporter)),
      recording_(recording && exporter_ != nullptr),
      trace_id_hex_(Hex(trace_id)) {
  if (!recording_) return;
  absl::MutexLock lock(&mu_);
  server_.trace_id = trace_id;
  server_.span_id = NewSpanId();
  server_.parent_span_id = parent;
  server_.trace_state = std::move(trace_state);
  server_.flags = flags;
  server_.name = SpanName(start.method, start.target);
  server_.kind = SpanKind::kServer;
  server_.start = start.received;
  server_.session_attributes =
      start.session_attributes != nullptr
          ? start.session_attributes
          : SessionSpanAttributes::Build(
                {std::string(start.server_id), std::string(start.server_name),
                 std::string(start.session_id),
                 std::string(start.session_kind),
                 std::string(start.caller_subject),
                 std::string(start.caller_client_id)},
                start.protocol_version);
  // Room for the outcome's attributes too.
  server_.attributes = RequestAttributes(start, 4);
  request_attributes_ = server_.attributes.size();
  if (!start.jsonrpc_id.empty()) {
    server_.attributes.push_back(
        {"jsonrpc.request.id", RequestId(start.jsonrpc_id)});
  }
  if (!start.payload.empty()) {
    server_.attributes.push_back(
        {"inspector.request.body", std::string(start.payload)});
  }
  stdio_ = start.transport == "stdio";
}

RequestTrace::~RequestTrace() {
  // A request dropped unanswered (the daemon stopping) still shows.
  Outcome outcome;
  outcome.error = true;
  outcome.error_type = "_OTHER";
  outcome.message = "the request was dropped unanswered";
  absl::MutexLock lock(&mu_);
  if (!recording_ || ended_) return;
  const absl::Time end = server_.start;  // no clock here: a zero length
  FinishClientLocked(end, outcome);
  server_.end = end;
  ApplyOutcome(outcome, /*with_payload=*/true, &server_);
  ended_ = true;
  exporter_->Add(std::move(server_));
}

std::optional<TraceContext> RequestTrace::StartUpstream(
    absl::Time now, int round, std::string_view upstream_id) {
  if (!recording_) return std::nullopt;
  absl::MutexLock lock(&mu_);
  if (ended_) return std::nullopt;
  if (client_.has_value()) {
    Outcome previous;
    FinishClientLocked(now, previous);
  }
  if (round > 0) {
    server_.events.push_back(
        {now, "mcp.input_round", {{"mcp.input_round", int64_t{round}}}});
  }
  SpanData client;
  client.trace_id = server_.trace_id;
  client.span_id = NewSpanId();
  client.parent_span_id = server_.span_id;
  client.trace_state = server_.trace_state;
  client.flags = server_.flags;
  client.name = server_.name;
  client.kind = SpanKind::kClient;
  client.start = now;
  client.session_attributes = server_.session_attributes;
  // The request's attributes, as on the SERVER span, then the CLIENT's own.
  client.attributes.reserve(request_attributes_ + 6);
  client.attributes.assign(server_.attributes.begin(),
                           server_.attributes.begin() + request_attributes_);
  client.attributes.push_back(
      {"network.transport", std::string(stdio_ ? "pipe" : "tcp")});
  if (!stdio_) {
    client.attributes.push_back({"network.protocol.name", std::string("http")});
  }
  if (!upstream_id.empty()) {
    client.attributes.push_back({"jsonrpc.request.id", RequestId(upstream_id)});
  }
  if (round > 0) {
    client.attributes.push_back({"mcp.input_round", int64_t{round}});
  }
  TraceContext context;
  context.trace_id = client.trace_id;
  context.span_id = client.span_id;
  context.flags = client.flags;
  context.trace_state = client.trace_state;
  client_ = std::move(client);
  return context;
}

void RequestTrace::FinishClientLocked(absl::Time now, const Outcome& outcome) {
  if (!client_.has_value()) return;
  SpanData span = *std::move(client_);
  client_.reset();
  span.end = now;
  ApplyOutcome(outcome, /*with_payload=*/false, &span);
  exporter_->Add(std::move(span));
}

void RequestTrace::EndUpstream(absl::Time now, const Outcome& outcome) {
  if (!recording_) return;
  absl::MutexLock lock(&mu_);
  FinishClientLocked(now, outcome);
}

void RequestTrace::AddEvent(absl::Time now, std::string name,
                            Attributes attributes) {
  if (!recording_) return;
  absl::MutexLock lock(&mu_);
  if (ended_) return;
  server_.events.push_back({now, std::move(name), std::move(attributes)});
}

void RequestTrace::End(absl::Time now, const Outcome& outcome) {
  if (!recording_) return;
  absl::MutexLock lock(&mu_);
  if (ended_) return;
  ended_ = true;
  FinishClientLocked(now, outcome);
  server_.end = now;
  ApplyOutcome(outcome, /*with_payload=*/true, &server_);
  exporter_->Add(std::move(server_));
}

Tracer::Tracer(TracingConfig config, std::shared_ptr<SpanExporter> exporter)
    : config_(std::move(config)), exporter_(std::move(exporter)) {}

bool Tracer::ShouldSample(const TraceId& trace_id,
                          const std::optional<TraceContext>& parent) const {
  const bool parent_based = config_.sampler == Sampler::kParentBasedAlwaysOn ||
                            config_.sampler == Sampler::kParentBasedAlwaysOff ||
                            config_.sampler == Sampler::kParentBasedTraceIdRatio;
  if (parent_based && parent.has_value()) return parent->sampled();
  switch (config_.sampler) {
    case Sampler::kAlwaysOn:
    case Sampler::kParentBasedAlwaysOn:
      return true;
    case Sampler::kAlwaysOff:
    case Sampler::kParentBasedAlwaysOff:
      return false;
    case Sampler::kTraceIdRatio:
    case Sampler::kParentBasedTraceIdRatio:
      break;
  }
  if (config_.ratio >= 1) return true;
  if (config_.ratio <= 0) return false;
  // The trace id's last 8 bytes, the random part, against the ratio.
  uint64_t low = 0;
  for (size_t i = 8; i < 16; ++i) low = (low << 8) | trace_id[i];
  const double bound = config_.ratio * 18446744073709551616.0;
  return static_cast<double>(low) < bound;
}

std::shared_ptr<RequestTrace> Tracer::Start(const RequestStart& start) const {
  if (exporter_ == nullptr && !start.parent.has_value()) return nullptr;
  TraceId trace_id =
      start.parent ? start.parent->trace_id : NewTraceId(start.received);
  const bool sampled =
      exporter_ != nullptr && ShouldSample(trace_id, start.parent);
  SpanId parent{};
  std::string state;
  if (start.parent) {
    parent = start.parent->span_id;
    state = start.parent->trace_state;
  }
  if (!sampled && !start.parent.has_value()) return nullptr;
  return std::make_shared<RequestTrace>(exporter_, sampled, start, trace_id,
                                        std::move(state), parent,
                                        sampled ? uint8_t{1} : uint8_t{0});
}

}  // namespace inspector::telemetry
