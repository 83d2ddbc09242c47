// MCP Server Cards (the draft discovery extension, SEP-2127): the JSON
// document that describes an HTTP MCP server before a client connects
// (name, version, remotes, capabilities, and optionally its tools, prompts
// and resources), served at /.well-known/mcp/server-card and listed by an
// AI catalog (/.well-known/ai-catalog.json).
//
// One home for the card's rules: the front doors build a card for each
// configured server (BuildServerCard, BuildAiCatalog), and the doctor
// checks a server's card (ValidateServerCard) and compares it with what
// the server really offers (CompareServerCard).
//
// Stateless functions and value types; thread-safe.
#ifndef INSPECTOR_SERVER_PROTOCOL_SERVER_CARD_H_
#define INSPECTOR_SERVER_PROTOCOL_SERVER_CARD_H_

#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace inspector::protocol {

// The card's schema URI (the draft's v1).
inline constexpr char kServerCardSchema[] =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
// Where a server publishes its card, and the catalog that lists cards.
inline constexpr std::string_view kServerCardPath = "/.well-known/mcp/server-card";
inline constexpr std::string_view kAiCatalogPath = "/.well-known/ai-catalog.json";
// An AI catalog entry's type for an MCP server card.
inline constexpr char kServerCardMediaType[] = "application/mcp-server-card+json";

// What a card is built from: what the server declared (its serverInfo,
// capabilities, instructions and lists) and where it is reached.
struct CardSource {
  // The card's `name`: reverse-DNS namespace, one slash, server name.
  std::string name;
  // serverInfo (name, version, title, description, websiteUrl, icons).
  nlohmann::json server_info = nlohmann::json::object();
  nlohmann::json capabilities = nlohmann::json::object();
  // Each an array of the list's items, or null when not known (left out).
  nlohmann::json tools;
  nlohmann::json prompts;
  nlohmann::json resources;
  // The Streamable HTTP and legacy SSE URLs ("" for none) and the protocol
  // versions both speak.
  std::string streamable_http_url;
  std::string sse_url;
  std::vector<std::string> protocol_versions;
  // Whether a caller must authenticate, and how ("bearer", "oauth2").
  bool auth_required = false;
  std::vector<std::string> auth_schemes;
};

// The server card of `source`.
nlohmann::json BuildServerCard(const CardSource& source);

// The card name for server `server_name` reached at `host` (a Host header
// value): the host's DNS name reversed ("mcp.example.com" gives
// "com.example.mcp/NAME"); "local.inspectord/NAME" for an IP address,
// localhost or no host. Characters outside [A-Za-z0-9._-] in the server
// name become "-".
std::string CardName(std::string_view host, std::string_view server_name);

// One AI catalog entry per card: {identifier, type, url, name, description}.
struct CatalogEntry {
  std::string identifier;  // the card's name
  std::string url;         // where the card is
  std::string name;        // the server's display name
  std::string description;
};
nlohmann::json BuildAiCatalog(std::string_view host_name,
                              const std::vector<CatalogEntry>& entries);

// What is wrong with `card` by the draft's rules: each problem as one
// sentence naming the field ("name must contain exactly one /"). Empty
// when the card is valid.
std::vector<std::string> ValidateServerCard(const nlohmann::json& card);

// What the server really offers, as found by connecting to it.
struct LiveServer {
  nlohmann::json server_info = nlohmann::json::object();
  nlohmann::json capabilities = nlohmann::json::object();
  std::string protocol_version;
  // tools/list's tools array (first page), or null when not listed.
  nlohmann::json tools;
};

struct CardDifference {
  // A disagreement the card may have by design (its lists are marked as
  // changing at runtime with listChanged), not an error.
  bool expected_to_drift = false;
  std::string text;
};

// Where `card` disagrees with `live`: its version against serverInfo's,
// each capability declared by one and not the other, the negotiated
// protocol version missing from every remote's supportedProtocolVersions,
// and (when the card lists tools) tools missing on either side or with a
// different description or input schema.
std::vector<CardDifference> CompareServerCard(const nlohmann::json& card,
                                              const LiveServer& live);

}  // namespace inspector::protocol

#endif  // INSPECTOR_SERVER_PROTOCOL_SERVER_CARD_H_
