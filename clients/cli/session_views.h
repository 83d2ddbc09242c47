// Human renderings of recorded sessions (SessionService): the session
// list, one session's details and messages, and a comparison of two
// sessions. Pure functions.
#ifndef INSPECTOR_CLIENTS_CLI_SESSION_VIEWS_H_
#define INSPECTOR_CLIENTS_CLI_SESSION_VIEWS_H_

#include <string>

#include "clients/cli/history_views.h"
#include "clients/cli/table.h"
#include "inspector/v1/sessions.pb.h"

namespace inspector::cli {

// ID, STARTED, KIND, SERVER, TRANSPORT, MESSAGES, STATE (live or the end
// reason), NAME; one row per session, in the order given.
inline constexpr int kSessionsNameColumn = 7;
Table SessionsTable(const v1::ListSessionsResponse& response,
                    const ServerNames& names, const TableTimes& times);

// "Id: ..., Kind: ..., Server: ..." lines of one session.
std::string SessionDetails(const v1::Session& session,
                           const ServerNames& names, const TableTimes& times);

// SEQ, TIME, DIR (→ client to server, ← server to client), KIND, METHOD,
// JSON-RPC ID, MESSAGE ID (for `inspectorctl replay`).
Table SessionMessagesTable(const v1::Session& session,
                           const TableTimes& times);

// A value of a DiffChange as compact JSON, cut to 120 characters.
std::string DiffValueText(const google::protobuf::Value& value);

// One line per pair ("#3 tools/call changed") followed by its changes
// ("  ~ /result/content/0/text: \"a\" -> \"b\""), then a summary line.
// `only_differences` leaves out the pairs that are the same.
std::string DiffText(const v1::DiffSessionsResponse& diff,
                     bool only_differences);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_SESSION_VIEWS_H_
