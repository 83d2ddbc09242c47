#include "storage/schema.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "storage/database.h"

namespace inspector::storage {
namespace {

// Conventions of every table: times are unix time in milliseconds
// (INTEGER) unless a column says otherwise; *_json columns hold JSON text;
// booleans are INTEGER 0/1; ids of servers and sessions are UUID strings.
// Comments inside CREATE statements are kept by SQLite, so `.schema` in the
// sqlite3 shell shows them.
constexpr std::string_view kMigration1 = R"sql(
-- Server configurations (ConfigService): one row per MCP server the
-- inspector knows. Field names follow the mcp.json format.
CREATE TABLE servers (
  id              TEXT PRIMARY KEY,      -- UUID assigned by the daemon
  name            TEXT NOT NULL UNIQUE,  -- display name (case-sensitive)
  transport       TEXT NOT NULL
                  CHECK (transport IN ('stdio', 'streamableHttp', 'sse')),
  -- stdio: the executable, run as argv (never through a shell)
  command         TEXT,
  -- stdio: JSON array of argument strings
  args_json       TEXT NOT NULL DEFAULT '[]',
  -- stdio: JSON object of environment entries added to the daemon's
  env_json        TEXT NOT NULL DEFAULT '{}',
  cwd             TEXT,                  -- stdio: working dir; NULL: daemon's
  url             TEXT,                  -- streamableHttp/sse: http(s) URL
  -- streamableHttp/sse: JSON object of headers sent with every request
  headers_json    TEXT NOT NULL DEFAULT '{}',
  connection_mode TEXT,                  -- 'direct' or 'proxy'; NULL: auto
  -- inspector.v1.Timeouts as proto3 JSON; NULL: all defaults
  timeouts_json   TEXT,
  -- inspector.v1.OAuthConfig as proto3 JSON; NULL: none configured
  oauth_json      TEXT,
  -- JSON object of imported fields the inspector does not use; NULL: none
  extra_json      TEXT,
  created_at      INTEGER NOT NULL,      -- unix ms
  updated_at      INTEGER NOT NULL       -- unix ms
);

-- Upstream MCP sessions: each initialize handshake with a server, made for
-- the daemon's own callers or for one bridged, proxied or replaying client.
CREATE TABLE sessions (
  id               TEXT PRIMARY KEY,     -- UUID
  -- the server; NULL once it is deleted
  server_id        TEXT REFERENCES servers(id) ON DELETE SET NULL,
  -- 'daemon': the shared session of gRPC/REST/CLI callers; 'bridge' and
  -- 'proxy': one MCP client's own session; 'replay': a replay run
  kind             TEXT NOT NULL
                   CHECK (kind IN ('daemon', 'bridge', 'proxy', 'replay')),
  transport        TEXT,                 -- transport used upstream
  protocol_version TEXT,                 -- negotiated MCP protocol version
  mcp_session_id   TEXT,                 -- Mcp-Session-Id from the server
  client_info_json TEXT,                 -- clientInfo sent in initialize
  server_info_json TEXT,                 -- serverInfo of initialize's result
  started_at       INTEGER NOT NULL,     -- unix ms
  ended_at         INTEGER,              -- unix ms; NULL while live
  end_reason       TEXT                  -- closed, crashed, timeout, ...
);
CREATE INDEX sessions_server_id ON sessions(server_id);

-- Every JSON-RPC message that passed through the daemon, in either
-- direction, one row each, in the order recorded. No foreign keys, so
-- recording stays cheap and history outlives deleted servers and sessions.
CREATE TABLE messages (
  id            INTEGER PRIMARY KEY,     -- increases in recording order
  ts            INTEGER NOT NULL,        -- unix ms when the daemon saw it
  server_id     TEXT,                    -- servers.id of the upstream server
  session_id    TEXT,                    -- sessions.id of the session
  direction     TEXT NOT NULL
                CHECK (direction IN ('client_to_server', 'server_to_client')),
  kind          TEXT NOT NULL
                CHECK (kind IN ('request', 'response', 'error',
                                'notification', 'invalid')),
  -- JSON text of the JSON-RPC id as seen on that side of the daemon
  -- (1, "abc" with its quotes); NULL for notifications
  jsonrpc_id    TEXT,
  method        TEXT,                    -- requests, notifications: method
  target        TEXT,                    -- tool name, resource URI, prompt
  raw           TEXT NOT NULL,           -- JSON text (cut if truncated)
  raw_size      INTEGER NOT NULL,        -- bytes of the whole message
  truncated     INTEGER NOT NULL DEFAULT 0,  -- 1 if raw was cut
  -- responses and errors: messages.id of the request they answer
  correlated_id INTEGER,
  duration_ms   REAL,                    -- responses: ms since the request
  success       INTEGER,                 -- responses: 1 result, 0 error
  -- JSON-RPC error code, or the inspector's reason for a local failure
  error_code    TEXT,
  modified      INTEGER NOT NULL DEFAULT 0,  -- 1 if changed by intercept
  original_raw  TEXT                     -- if modified: the message before
);
CREATE INDEX messages_server_ts ON messages(server_id, ts);
CREATE INDEX messages_method_ts ON messages(method, ts);
CREATE INDEX messages_session ON messages(session_id);
CREATE INDEX messages_correlated ON messages(correlated_id);
CREATE INDEX messages_ts ON messages(ts);

-- Each request beside its response: one row per message of kind 'request',
-- with the first response or error that answers it; the response columns
-- are NULL while the request is pending.
CREATE VIEW requests AS
SELECT
  q.id          AS id,              -- messages.id of the request
  q.ts          AS ts,              -- unix ms of the request
  q.server_id   AS server_id,
  q.session_id  AS session_id,
  q.direction   AS direction,       -- who sent the request
  q.jsonrpc_id  AS jsonrpc_id,
  q.method      AS method,
  q.target      AS target,
  q.raw         AS request_raw,     -- the request's JSON text
  r.id          AS response_id,     -- messages.id of the response
  r.ts          AS response_ts,     -- unix ms of the response
  r.raw         AS response_raw,    -- the response's JSON text
  r.duration_ms AS duration_ms,
  r.success     AS success,         -- 1 result, 0 error, NULL pending
  r.error_code  AS error_code
FROM messages AS q
LEFT JOIN messages AS r
  ON r.id = (SELECT min(a.id) FROM messages AS a
             WHERE a.correlated_id = q.id AND a.kind IN ('response', 'error'))
WHERE q.kind = 'request';

-- Application and server logs: the daemon's own log, stdio servers'
-- stderr, and MCP notifications/message from servers.
CREATE TABLE logs (
  id         INTEGER PRIMARY KEY,      -- increases in recording order
  ts         INTEGER NOT NULL,         -- unix ms
  level      TEXT NOT NULL
             CHECK (level IN ('debug', 'info', 'warn', 'error')),
  -- 'daemon', 'stderr' (a stdio server's) or 'server' (MCP logging)
  source     TEXT NOT NULL CHECK (source IN ('daemon', 'stderr', 'server')),
  server_id  TEXT,                     -- servers.id, if about one server
  session_id TEXT,                     -- sessions.id, if about one session
  message    TEXT NOT NULL,
  data_json  TEXT                      -- structured details (JSON object)
);
CREATE INDEX logs_ts ON logs(ts);
CREATE INDEX logs_server_ts ON logs(server_id, ts);

-- OAuth client registrations, one per server.
CREATE TABLE oauth_clients (
  server_id         TEXT PRIMARY KEY
                    REFERENCES servers(id) ON DELETE CASCADE,
  issuer            TEXT,              -- authorization server registered with
  client_id         TEXT NOT NULL,
  client_secret     TEXT,              -- secret; NULL for public clients
  registration_json TEXT,              -- the registration response (JSON)
  strategy          TEXT,              -- 'dcr', 'preregistered' or 'cimd'
  created_at        INTEGER NOT NULL   -- unix ms
);

-- OAuth tokens, one set per server.
CREATE TABLE oauth_tokens (
  server_id     TEXT PRIMARY KEY REFERENCES servers(id) ON DELETE CASCADE,
  access_token  TEXT NOT NULL,         -- secret
  refresh_token TEXT,                  -- secret
  token_type    TEXT,                  -- usually 'Bearer'
  scope         TEXT,                  -- granted scopes, space-separated
  expires_at    INTEGER,               -- unix ms; NULL: no lifetime given
  obtained_at   INTEGER NOT NULL       -- unix ms
);

-- OAuth flows in progress or finished (the guided debugger and the
-- authorize/callback pair).
CREATE TABLE oauth_flows (
  id               TEXT PRIMARY KEY,   -- random flow id
  server_id        TEXT REFERENCES servers(id) ON DELETE CASCADE,
  -- current step: an OAuthFlowState name, 'METADATA_DISCOVERY' ... 'COMPLETE'
  state            TEXT NOT NULL,
  protocol_version TEXT,               -- '2025-03-26', '2025-06-18', ...
  data_json        TEXT,               -- what the flow gathered (JSON)
  latest_error     TEXT,               -- the last step's error, if any
  created_at       INTEGER NOT NULL,   -- unix ms
  updated_at       INTEGER NOT NULL    -- unix ms
);
CREATE INDEX oauth_flows_server_id ON oauth_flows(server_id);

-- stdio servers converted to Streamable HTTP endpoints ("convert").
CREATE TABLE bridges (
  server_name TEXT PRIMARY KEY,        -- the conversion's name
  -- the stdio server configuration behind it, if any
  server_id   TEXT REFERENCES servers(id) ON DELETE SET NULL,
  command     TEXT NOT NULL,           -- executable, run as argv
  args_json   TEXT NOT NULL DEFAULT '[]',  -- JSON array of strings
  env_json    TEXT NOT NULL DEFAULT '{}',  -- JSON object of env entries
  port        INTEGER,                 -- listening port
  url         TEXT,                    -- e.g. http://127.0.0.1:9001/mcp
  status      TEXT NOT NULL,           -- 'running' or 'stopped'
  created_at  INTEGER NOT NULL,        -- unix ms
  stopped_at  INTEGER                  -- unix ms; NULL while running
);
CREATE INDEX bridges_server_id ON bridges(server_id);
)sql";

// The inspector as each server's MCP client: which client capabilities
// initialize declares, and the roots answered to roots/list.
constexpr std::string_view kMigration2 = R"sql(
-- inspector.v1.ClientCapabilities as proto3 JSON (sampling, elicitation,
-- elicitationUrl, roots; an absent key means true); NULL: all declared
ALTER TABLE servers ADD COLUMN client_capabilities_json TEXT;
-- JSON array of the roots answered to roots/list, each
-- {"uri": "file:///...", "name": "..."} (name optional)
ALTER TABLE servers ADD COLUMN roots_json TEXT NOT NULL DEFAULT '[]';
)sql";

// Conversions ("convert"): how each is served, and where a converted
// server's original stdio command is kept.
constexpr std::string_view kMigration3 = R"sql(
-- 1: the legacy SSE transport is served too (/sse and /message)
ALTER TABLE bridges ADD COLUMN sse INTEGER NOT NULL DEFAULT 0;
-- secret: the bearer token clients must send; NULL: none required
ALTER TABLE bridges ADD COLUMN token TEXT;
-- inspector.v1.ConvertedFromStdio as proto3 JSON: the stdio command of a
-- server converted to a Streamable HTTP endpoint; NULL: not converted
ALTER TABLE servers ADD COLUMN converted_from_stdio_json TEXT;
)sql";

// Retry settings per server (docs/guides/configuration.md: maxRetries,
// retryBackoff and retryableErrors).
constexpr std::string_view kMigration4 = R"sql(
-- JSON object with the retry settings that are set: maxRetries (count),
-- retryBackoff (array of ms), retryableErrors (array of names such as
-- "ECONNREFUSED" or "RATE_LIMITED"); NULL: all defaults
ALTER TABLE servers ADD COLUMN retry_json TEXT;
)sql";

// Recorded sessions as evidence (SessionService): what each session ran
// against, the user's name and notes, where imported and replayed sessions
// came from.
constexpr std::string_view kMigration5 = R"sql(
-- The server's configuration when the session started, as a JSON object
-- {"name", "transport", "command", "args", "env", "cwd", "url",
-- "headers"} (copied from servers by the trigger sessions_capture_server,
-- so later edits of the server do not change it; secrets unmasked); NULL
-- if the server was unknown
ALTER TABLE sessions ADD COLUMN server_json TEXT;
ALTER TABLE sessions ADD COLUMN name TEXT;       -- set by the user
ALTER TABLE sessions ADD COLUMN notes TEXT;      -- set by the user
-- imported sessions: JSON object of the file's other metadata entries
ALTER TABLE sessions ADD COLUMN metadata_json TEXT;
-- replays: sessions.id of the session replayed
ALTER TABLE sessions ADD COLUMN replay_of TEXT;
-- unix ms when imported from a session file; NULL: recorded here
ALTER TABLE sessions ADD COLUMN imported_at INTEGER;
CREATE INDEX sessions_started_at ON sessions(started_at);

-- Messages of imported sessions: the id each had in its session file, so
-- that exporting the session again gives the same file.
CREATE TABLE imported_messages (
  message_id INTEGER PRIMARY KEY,     -- messages.id
  file_id    TEXT NOT NULL            -- the message's "id" in the file
);

-- Keeps the server's configuration with each session as it starts.
CREATE TRIGGER sessions_capture_server AFTER INSERT ON sessions
WHEN NEW.server_json IS NULL AND NEW.server_id IS NOT NULL
BEGIN
  UPDATE sessions SET server_json = (
    SELECT json_object(
      'name', s.name, 'transport', s.transport, 'command', s.command,
      'args', json(CASE WHEN json_valid(s.args_json) THEN s.args_json
                        ELSE '[]' END),
      'env', json(CASE WHEN json_valid(s.env_json) THEN s.env_json
                       ELSE '{}' END),
      'cwd', s.cwd, 'url', s.url,
      'headers', json(CASE WHEN json_valid(s.headers_json)
                           THEN s.headers_json ELSE '{}' END))
    FROM servers AS s WHERE s.id = NEW.server_id)
  WHERE id = NEW.id;
END;
)sql";

// OAuth as the daemon does it: what a refresh needs beside the tokens, and
// the registration's token endpoint authentication and redirect URI.
constexpr std::string_view kMigration6 = R"sql(
-- the authorization server that issued the tokens; never sent elsewhere
ALTER TABLE oauth_tokens ADD COLUMN issuer TEXT;
-- where refresh_token grants go
ALTER TABLE oauth_tokens ADD COLUMN token_endpoint TEXT;
-- RFC 8707 resource the tokens are for
ALTER TABLE oauth_tokens ADD COLUMN resource TEXT;
-- 'client_secret_basic', 'client_secret_post' or 'none'
ALTER TABLE oauth_clients ADD COLUMN token_endpoint_auth_method TEXT;
-- the redirect URI registered with the client
ALTER TABLE oauth_clients ADD COLUMN redirect_uri TEXT;
)sql";

// Intercept (InterceptService): what the intercept stage did with each
// message it held.
constexpr std::string_view kMigration7 = R"sql(
-- forward, modify or drop: the user's (or the hold timeout's, a mode
-- switch's, a session end's) action on a held message; NULL: not held.
-- With modify, raw is what was sent and original_raw what was received.
ALTER TABLE messages ADD COLUMN intercept_action TEXT;
)sql";

// The protocol era spoken to each server: MCP 2026-07-28, the handshake
// era, or a server/discover probe choosing between them.
constexpr std::string_view kMigration8 = R"sql(
-- 'legacy', 'modern' or 'auto'; NULL: auto (probe with server/discover)
ALTER TABLE servers ADD COLUMN protocol TEXT;
)sql";

// Each message's protocol era, and the rounds of MCP 2026-07-28 multi
// round-trip requests: every retry is a request of its own, tied to the
// first send.
constexpr std::string_view kMigration9 = R"sql(
-- 'legacy' (the initialize handshake era) or 'modern' (MCP 2026-07-28);
-- NULL: not known (recorded before this version)
ALTER TABLE messages ADD COLUMN era TEXT;
-- requests and their answers: 0 for the first send, n for the nth retry
-- with inputResponses/requestState; NULL for other messages
ALTER TABLE messages ADD COLUMN input_round INTEGER;
-- rounds >= 1 and their answers: messages.id of round 0's request
ALTER TABLE messages ADD COLUMN first_round_id INTEGER;
CREATE INDEX messages_first_round ON messages(first_round_id);
DROP VIEW requests;
CREATE VIEW requests AS
SELECT
  q.id          AS id,              -- messages.id of the request
  q.ts          AS ts,              -- unix ms of the request
  q.server_id   AS server_id,
  q.session_id  AS session_id,
  q.direction   AS direction,       -- who sent the request
  q.jsonrpc_id  AS jsonrpc_id,
  q.method      AS method,
  q.target      AS target,
  q.raw         AS request_raw,     -- the request's JSON text
  r.id          AS response_id,     -- messages.id of the response
  r.ts          AS response_ts,     -- unix ms of the response
  r.raw         AS response_raw,    -- the response's JSON text
  r.duration_ms AS duration_ms,
  r.success     AS success,         -- 1 result, 0 error, NULL pending
  r.error_code  AS error_code,
  q.era         AS era,             -- 'legacy' or 'modern'; NULL: unknown
  -- the request's round: 0 its first send, n the nth retry carrying the
  -- answers to a server's input requests (MCP 2026-07-28)
  q.input_round AS input_round,
  -- messages.id of round 0's request: the same for every round of one
  -- request (the request's own id for round 0 and for messages before
  -- schema version 9)
  coalesce(q.first_round_id, q.id) AS first_round_id
FROM messages AS q
LEFT JOIN messages AS r
  ON r.id = (SELECT min(a.id) FROM messages AS a
             WHERE a.correlated_id = q.id AND a.kind IN ('response', 'error'))
WHERE q.kind = 'request';
)sql";

// OAuth flows survive a restart: what the redirect's callback and the
// guided debugger need to go on with an unfinished flow.
constexpr std::string_view kMigration10 = R"sql(
-- the random `state` of the authorization request; NULL before it is built
ALTER TABLE oauth_flows ADD COLUMN oauth_state TEXT;
-- secret: the PKCE code verifier; NULL before the authorization request
ALTER TABLE oauth_flows ADD COLUMN code_verifier TEXT;
-- secret: the client secret of a registration the flow made (saved to
-- oauth_clients when the flow completes); NULL for public clients
ALTER TABLE oauth_flows ADD COLUMN client_secret TEXT;
-- unix ms after which the flow is dropped (its state's 10-minute lifetime,
-- or 10 minutes after its last step before the state exists)
ALTER TABLE oauth_flows ADD COLUMN expires_at INTEGER;
CREATE INDEX oauth_flows_oauth_state ON oauth_flows(oauth_state);
)sql";

// Cheaper message rows: an index entry only for the rows a lookup can
// find. Requests and notifications have no correlated_id, responses no
// method, and all but retried rounds no first_round_id; every lookup by
// these columns compares them with a value, which a NULL never matches, so
// SQLite uses the partial index for it.
constexpr std::string_view kMigration11 = R"sql(
DROP INDEX messages_method_ts;
CREATE INDEX messages_method_ts ON messages(method, ts)
  WHERE method IS NOT NULL;
DROP INDEX messages_correlated;
CREATE INDEX messages_correlated ON messages(correlated_id)
  WHERE correlated_id IS NOT NULL;
DROP INDEX messages_first_round;
CREATE INDEX messages_first_round ON messages(first_round_id)
  WHERE first_round_id IS NOT NULL;
)sql";

// The web UI's browser sign-ins (server/auth/ui_sessions.h): each browser
// signed in with a one-time link has a credential of its own, which
// expires and can be revoked, instead of the daemon's session token.
constexpr std::string_view kMigration12 = R"sql(
-- One row per browser signed into the web UI (`inspectorctl ui sessions`
-- lists them). The browser's credential itself is never stored.
CREATE TABLE ui_sessions (
  id            TEXT PRIMARY KEY,      -- random public id, to revoke by
  secret_sha256 TEXT NOT NULL UNIQUE,  -- hex SHA-256 of the credential
  user_agent    TEXT,                  -- the browser's, at sign-in
  created_at    INTEGER NOT NULL,      -- unix ms
  -- unix ms of the last call made with it (kept to the minute)
  last_used_at  INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL       -- unix ms: the lifetime's end
);
)sql";

// History at scale: a full-text index of the messages, the index the
// request pages filtered by direction need, and nothing on the writer's hot
// path but one small insert per message.
//
// messages_fts indexes the first 4,096 characters of each message's raw
// JSON (kIndexedRawChars in storage/history_index.h) with the trigram
// tokenizer, so LIKE '%...%' and GLOB with 3 or more characters between
// wildcards use it; detail=none keeps it to about the size of the text it
// indexes (phrase MATCH queries are refused with detail=none: use LIKE).
// It is an external-content table: its rows read raw from `messages`.
// New messages are queued in messages_fts_pending by a trigger and indexed
// by the daemon's indexer (storage/history_index.h) within about a second;
// deleting or changing a message keeps the index in step by trigger.
constexpr std::string_view kMigration13 = R"sql(
-- Full-text index of messages.raw (its first 4,096 characters), for
--   SELECT rowid FROM messages_fts WHERE raw LIKE '%needle%'
-- The LIKE is checked against the whole raw text, so a match is real; a
-- needle found only after the 4,096th character is not found here.
-- Messages still in messages_fts_pending are not indexed yet.
CREATE VIRTUAL TABLE messages_fts USING fts5(
  raw, content='messages', content_rowid='id',
  tokenize='trigram', detail='none');

-- messages.id of the messages not indexed yet, oldest first (the indexer
-- empties it within about a second of their recording).
CREATE TABLE messages_fts_pending (
  id INTEGER PRIMARY KEY               -- messages.id
);
INSERT INTO messages_fts_pending(id) SELECT id FROM messages;

CREATE TRIGGER messages_fts_queue AFTER INSERT ON messages
BEGIN
  INSERT INTO messages_fts_pending(id) VALUES (NEW.id);
END;

-- A deleted message leaves the index (or the queue, if not indexed yet).
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, raw)
    SELECT 'delete', OLD.id, substr(OLD.raw, 1, 4096)
    WHERE NOT EXISTS (SELECT 1 FROM messages_fts_pending WHERE id = OLD.id);
  DELETE FROM messages_fts_pending WHERE id = OLD.id;
END;

-- A changed raw is indexed again.
CREATE TRIGGER messages_fts_update AFTER UPDATE OF raw ON messages
BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, raw)
    SELECT 'delete', OLD.id, substr(OLD.raw, 1, 4096)
    WHERE NOT EXISTS (SELECT 1 FROM messages_fts_pending WHERE id = OLD.id);
  INSERT OR IGNORE INTO messages_fts_pending(id) VALUES (NEW.id);
END;

-- Requests by who sent them, newest first: server-initiated requests are
-- rare among the rows, so a page of them cannot come from the ts index.
CREATE INDEX messages_requests_direction_ts ON messages(direction, ts)
  WHERE kind = 'request';
-- One server's calls of one method, newest first (the two filters the UI
-- and CLI combine most), without reading the server's other rows.
CREATE INDEX messages_server_method_ts ON messages(server_id, method, ts)
  WHERE method IS NOT NULL;
)sql";

// Retention (storage/history_retention.h): sessions a user wants kept
// whatever the limits, and imported messages' file ids removed with their
// messages.
constexpr std::string_view kMigration14 = R"sql(
-- 1: retention and pruning never remove the session or its messages (a
-- named session is kept too); 0: it goes with its messages once they are
-- due
ALTER TABLE sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;

-- A message's file id goes when the message does.
CREATE TRIGGER messages_drop_imported AFTER DELETE ON messages
BEGIN
  DELETE FROM imported_messages WHERE message_id = OLD.id;
END;
)sql";

// Front doors as OAuth resource servers: who opened each session.
constexpr std::string_view kMigration15 = R"sql(
-- The caller whose access token opened a front-door session (with
-- --frontdoor-issuer); NULL for every other session. "Who called tool X":
-- messages joined to sessions on session_id.
ALTER TABLE sessions ADD COLUMN caller_issuer TEXT;     -- the token's iss
ALTER TABLE sessions ADD COLUMN caller_subject TEXT;    -- its sub
ALTER TABLE sessions ADD COLUMN caller_client_id TEXT;  -- client_id or azp
-- its scopes, space-separated as OAuth writes them
ALTER TABLE sessions ADD COLUMN caller_scopes TEXT;
CREATE INDEX sessions_caller_subject ON sessions(caller_subject)
  WHERE caller_subject IS NOT NULL;
)sql";

// Catalog drift: every version of every item a server listed.
constexpr std::string_view kMigration16 = R"sql(
-- One row per version of an item of a server's catalog: the first time
-- the daemon saw it ('first_seen', the baseline), and each time it
-- appeared later ('added') or came back different ('changed').
CREATE TABLE catalog_versions (
  id INTEGER PRIMARY KEY,
  server_id TEXT NOT NULL,
  list TEXT NOT NULL,          -- tools | prompts | resources | resource_templates
  item_key TEXT NOT NULL,      -- name, URI or URI template
  change TEXT NOT NULL,        -- first_seen | added | changed
  fingerprint TEXT NOT NULL,   -- hex SHA-256 of the fingerprinted fields
  changed_fields TEXT,         -- 'changed': the fields, comma-separated
  item_json TEXT NOT NULL,     -- the fingerprinted fields as JSON
  seen_at INTEGER NOT NULL,    -- unix milliseconds
  message_id INTEGER           -- the answer that showed it (messages.id)
);
CREATE INDEX catalog_versions_item
  ON catalog_versions(server_id, list, item_key, id);
)sql";

// Distributed tracing: the W3C trace a message belongs to.
constexpr std::string_view kMigration17 = R"sql(
-- The W3C trace id (32 lowercase hex digits) of the request a message is
-- part of: the caller's traceparent (params._meta or the HTTP header), or
-- the trace the daemon started for it when it exports traces; NULL when
-- neither. A trace in Jaeger or Tempo links to its rows, and back.
ALTER TABLE messages ADD COLUMN trace_id TEXT;
CREATE INDEX messages_trace ON messages(trace_id) WHERE trace_id IS NOT NULL;
)sql";

// The HTTP exchange that carried a message, for HTTP upstreams and the
// front doors (common/http_exchange_record.h).
constexpr std::string_view kMigration18 = R"sql(
-- One row per message that crossed HTTP: the exchange that carried it.
-- For a message from an HTTP upstream, the daemon's POST (or GET stream)
-- and the server's answer that brought it; for a message a client sent
-- to a front door, the client's request and the front door's answer (or
-- only the request: status NULL, when the message was recorded before the
-- answer was known). Header values of secret headers (Authorization,
-- Cookie, X-Api-Key, ...) are stored masked as "***(N chars)"; an
-- Authorization keeps its scheme ("Bearer ***(40 chars)").
--   SELECT m.method, h.status, json_extract(h.response_headers,
--          '$.content-type') FROM messages m JOIN message_http h
--     ON h.message_id = m.id
CREATE TABLE message_http (
  message_id INTEGER PRIMARY KEY,  -- messages.id
  method TEXT NOT NULL,            -- POST | GET
  path TEXT NOT NULL,              -- the URL's path and query, e.g. /mcp
  status INTEGER,                  -- the HTTP status; NULL: not known
  request_headers TEXT NOT NULL,   -- JSON object name -> value, masked
  response_headers TEXT            -- JSON object, masked; NULL with status
);

-- An exchange goes with its message.
CREATE TRIGGER messages_drop_http AFTER DELETE ON messages
BEGIN
  DELETE FROM message_http WHERE message_id = OLD.id;
END;
)sql";

// Recordings: sessions saved under a name, versioned, for `sessions
// verify NAME[@VERSION]` and export beside a server's code.
constexpr std::string_view kMigration19 = R"sql(
-- One row per saved version of a named recording: the session it is, and
-- the rules file (what may differ) saved with it. Versions of a name count
-- from 1. A saved session is pinned (sessions.pinned = 1), so retention
-- keeps it.
--   SELECT name, MAX(version) FROM recordings GROUP BY name
CREATE TABLE recordings (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  session_id TEXT NOT NULL,     -- sessions.id
  created_at INTEGER NOT NULL,  -- unix milliseconds
  notes TEXT NOT NULL DEFAULT '',
  rules_json TEXT NOT NULL DEFAULT '',  -- '' : the built-in rules
  UNIQUE (name, version)
);
CREATE INDEX recordings_session ON recordings(session_id);
)sql";

constexpr Migration kMigrations[] = {
    {1, "create the initial schema", kMigration1},
    {2, "add client capabilities and roots to servers", kMigration2},
    {3, "add conversion options and converted servers' stdio commands",
     kMigration3},
    {4, "add retry settings to servers", kMigration4},
    {5, "add recorded sessions' server, name, notes and origins", kMigration5},
    {6, "add OAuth issuer, endpoints and client authentication", kMigration6},
    {7, "add the intercept action to messages", kMigration7},
    {8, "add the protocol era setting to servers", kMigration8},
    {9, "add each message's era and input round, and pair rounds in requests",
     kMigration9},
    {10, "keep unfinished OAuth flows across restarts", kMigration10},
    {11, "index messages only where the indexed column is set", kMigration11},
    {12, "add the web UI's browser sign-ins", kMigration12},
    {13, "add the messages' full-text index", kMigration13},
    {14, "keep pinned sessions and drop imported ids with their messages",
     kMigration14},
    {15, "add the caller of front-door sessions", kMigration15},
    {16, "keep the versions of the servers' catalogs", kMigration16},
    {17, "add each message's trace id", kMigration17},
    {18, "keep the HTTP exchange that carried each message", kMigration18},
    {19, "keep named, versioned recordings of sessions", kMigration19},
};

absl::Status TooNew(const Database& db, int version, int latest) {
  return absl::FailedPreconditionError(
      absl::StrCat("database ", db.path(), " has schema version ", version,
                   ", newer than this build's ", latest,
                   "; it was written by a newer inspectord"));
}

}  // namespace

absl::Span<const Migration> Migrations() { return kMigrations; }

int SchemaVersion() { return Migrations().back().version; }

absl::Status ApplyMigrations(Database* db,
                             absl::Span<const Migration> migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "migration ", i + 1, " has version ", migrations[i].version));
    }
  }
  const int latest = static_cast<int>(migrations.size());
  // Cheap check first: an up-to-date file needs no write lock.
  ASSIGN_OR_RETURN(int version, db->UserVersion());
  if (version > latest) return TooNew(*db, version, latest);
  while (version < latest) {
    ASSIGN_OR_RETURN(Transaction transaction, db->BeginTransaction());
    // Another connection may have migrated meanwhile; re-read under the lock.
    ASSIGN_OR_RETURN(version, db->UserVersion());
    if (version > latest) return TooNew(*db, version, latest);
    if (version == latest) break;
    const Migration& migration = migrations[version];
    absl::Status status = db->Exec(migration.sql);
    if (status.ok()) {
      status =
          db->Exec(absl::StrCat("PRAGMA user_version = ", migration.version));
    }
    if (status.ok()) status = transaction.Commit();
    if (!status.ok()) {
      return absl::Status(
          status.code(),
          absl::StrCat("migration ", migration.version, " (",
                       AbslView(migration.description), ") of ", db->path(),
                       " failed: ", status.message()));
    }
    version = migration.version;
  }
  return absl::OkStatus();
}

absl::Status Migrate(Database* db) { return ApplyMigrations(db, Migrations()); }

absl::Status CheckSchemaVersion(Database* db) {
  ASSIGN_OR_RETURN(int version, db->UserVersion());
  const int latest = SchemaVersion();
  if (version > latest) return TooNew(*db, version, latest);
  if (version < latest) {
    return absl::FailedPreconditionError(
        absl::StrCat("database ", db->path(), " has schema version ", version,
                     ", older than this build's ", latest,
                     "; open it read-write once to migrate it"));
  }
  return absl::OkStatus();
}

}  // namespace inspector::storage
