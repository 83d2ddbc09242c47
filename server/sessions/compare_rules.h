// What may differ between a recorded JSON-RPC message and a live one, and
// the structural comparison under those rules. The one differ of recorded
// sessions: DiffSessions (session_diff.h), `sessions verify` and the
// requests a served recording matches (`sessions serve`) all compare here.
//
// A change is "added" (a value only in the actual message), "removed"
// (only in the recorded one) or "changed" (both, different), at a JSON
// Pointer (RFC 6901) into the message. Objects are compared key by key
// (sorted), arrays index by index; numbers compare by value (1 and 1.0 are
// equal). In rule pointers a segment "*" matches any one key or index and
// "**" any number of them (none included).
//
// The rules file (JSON, kept beside the recording, e.g. session.rules.json
// for session.json):
//   {
//     "defaults": true,                  false: none of the defaults below
//     "ignore": ["/result/content/0/text"],  not compared, nor below
//     "match": {                         compared by form, not by value:
//       "/result/structuredContent/id": {"type": "string"},
//       "/result/content/*/text": {"regex": "^Echo: "}
//     },
//     "sets": ["/result/tools"],         arrays compared in any order
//     "tolerance": {"/result/structuredContent": 0.01},
//                                        numbers at or below within this
//     "timestamps": true                 two date-time strings are equal
//   }
// "type" is one of string, number, integer, boolean, object, array, null;
// "regex" (ECMAScript) is searched in the actual string (a non-string
// value fails it); both may be given. The recorded value is not compared
// at a match pointer.
//
// Defaults (kept unless "defaults": false): ignore the JSON-RPC id
// (remapped by every replay), the messages' own `_meta` (/result/_meta,
// /params/_meta: progress tokens, timings) and trace fields in any
// `_meta` (traceparent, tracestate, progressToken), and an
// input_required result's opaque /result/requestState (the server's state
// of its own run); timestamps on.
//
// Immutable once built; thread-safe.
#ifndef INSPECTOR_SERVER_SESSIONS_COMPARE_RULES_H_
#define INSPECTOR_SERVER_SESSIONS_COMPARE_RULES_H_

#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "inspector/v1/sessions.pb.h"
#include "nlohmann/json.hpp"

namespace inspector::sessions {

// A parsed JSON Pointer: its unescaped segments. INVALID_REQUEST for text
// that is neither "" nor starts with "/", or a bad "~" escape.
absl::StatusOr<std::vector<std::string>> ParseJsonPointer(
    std::string_view pointer);

class CompareRules {
 public:
  using Pointer = std::vector<std::string>;

  // Compares everything but `ignore` (no defaults, no timestamps).
  static CompareRules IgnoringOnly(std::vector<Pointer> ignore);
  // The defaults above.
  static CompareRules Defaults();
  // A rules file's text ("" gives the defaults). INVALID_REQUEST naming
  // the member at fault (details {"field": "rules<JSON Pointer>"}).
  static absl::StatusOr<CompareRules> FromJson(std::string_view text);

  // Differences from `recorded` to `actual`, in document order.
  std::vector<v1::DiffChange> Compare(const nlohmann::json& recorded,
                                      const nlohmann::json& actual) const;
  bool Same(const nlohmann::json& recorded,
            const nlohmann::json& actual) const {
    return Compare(recorded, actual).empty();
  }

  // The ignored pointers as text, defaults first (for reports).
  std::vector<std::string> IgnoredText() const;

 private:
  struct Match {
    Pointer at;
    std::string type;  // "" for any
    std::shared_ptr<const std::regex> regex;  // null for any
  };
  struct Tolerance {
    Pointer at;
    double within = 0;
  };

  void AddDefaults();
  bool Ignored(const Pointer& path) const;
  const Match* MatchAt(const Pointer& path) const;
  bool IsSet(const Pointer& path) const;
  std::optional<double> ToleranceAt(const Pointer& path) const;
  bool SameScalar(const nlohmann::json& a, const nlohmann::json& b,
                  const Pointer& path) const;
  void Diff(const nlohmann::json& a, const nlohmann::json& b, Pointer& path,
            std::vector<v1::DiffChange>* out) const;
  void DiffSet(const nlohmann::json& a, const nlohmann::json& b,
               Pointer& path, std::vector<v1::DiffChange>* out) const;

  std::vector<Pointer> ignore_;
  std::vector<Match> match_;
  std::vector<Pointer> sets_;
  std::vector<Tolerance> tolerance_;
  bool timestamps_ = false;
};

}  // namespace inspector::sessions

#endif  // INSPECTOR_SERVER_SESSIONS_COMPARE_RULES_H_
