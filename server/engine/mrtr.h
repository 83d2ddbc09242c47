// Multi round-trip requests (MCP 2026-07-28) from the client's side:
// UpstreamSession turns each input request of an InputRequiredResult into
// a pending item for a person (the same ones as the handshake era's
// server-to-client requests) and sends the retries. What a result is and
// how a retry is built are the protocol's (server/protocol/results.h),
// named here for the engine.
//
// Declarations only; thread-safe.
#ifndef INSPECTOR_SERVER_ENGINE_MRTR_H_
#define INSPECTOR_SERVER_ENGINE_MRTR_H_

#include "server/protocol/results.h"

namespace inspector::engine {

// How many input rounds one request may take before the engine gives up
// (CallLimits::max_input_rounds 0 means this).
using protocol::kDefaultMaxInputRounds;

using protocol::BuildInputRetry;
using protocol::InputRequest;
using protocol::InputRequired;
using protocol::ParseInputRequests;
using protocol::ParseInputRequired;

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_MRTR_H_
