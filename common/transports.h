// The names of the MCP transports a server configuration can use
// (ServerConfig.transport), shared by the daemon's configuration checks, the
// store, the engine and inspectorctl so that the spelling lives in one place.
// Constants and pure functions only; thread-safe.
#ifndef INSPECTOR_COMMON_TRANSPORTS_H_
#define INSPECTOR_COMMON_TRANSPORTS_H_

#include <string_view>

namespace inspector {

// A child process spoken to over stdin/stdout.
inline constexpr std::string_view kTransportStdio = "stdio";
// The Streamable HTTP transport (one URL, POST plus optional SSE answers).
inline constexpr std::string_view kTransportStreamableHttp = "streamableHttp";
// The legacy HTTP+SSE transport (GET an event stream, POST to its endpoint).
inline constexpr std::string_view kTransportSse = "sse";

// True for "stdio", "streamableHttp" and "sse" (exact, case-sensitive).
constexpr bool IsKnownTransport(std::string_view transport) {
  return transport == kTransportStdio ||
         transport == kTransportStreamableHttp || transport == kTransportSse;
}

// True for the transports that reach a server by URL ("streamableHttp",
// "sse").
constexpr bool IsUrlTransport(std::string_view transport) {
  return transport == kTransportStreamableHttp || transport == kTransportSse;
}

}  // namespace inspector

#endif  // INSPECTOR_COMMON_TRANSPORTS_H_
