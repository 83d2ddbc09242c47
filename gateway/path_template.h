// Path templates of google.api.http rules ("/config/{id}",
// "/api/servers/{server_id}/tools/{name}:call", "/v1/{name=shelves/*}/**")
// and matching request paths against them.
//
// Grammar (google/api/http.proto):
//   Template = "/" [ Segments ] [ Verb ] ;
//   Segments = Segment { "/" Segment } ;
//   Segment  = "*" | "**" | LITERAL | Variable ;
//   Variable = "{" FieldPath [ "=" Segments ] "}" ;
//   FieldPath = IDENT { "." IDENT } ;
//   Verb     = ":" LITERAL ;
// A LITERAL is one or more URL path characters other than '/', '{', '}',
// '*', ':', '=' and '?' ('%XX' escapes allowed). `{x}` means `{x=*}`. `**`
// matches zero or more segments and may only be the last segment.
//
// Matching works on the raw request path (no query): it is cut at every
// '/', then each segment is percent-decoded on its own, so "%2F" inside a
// segment never splits it. A variable bound to several segments (`**`, or
// `{x=a/*}`) gets the decoded segments joined with '/'. When (and only when)
// the template has a verb, the verb is cut from the last segment at its last
// ':' before decoding ("/api/pending/p%3A1:resolve" binds id "p:1").
// Single-segment wildcards never match an empty segment.
//
// PathTemplate and RequestPath are immutable values: safe to share across
// threads.
#ifndef INSPECTOR_GATEWAY_PATH_TEMPLATE_H_
#define INSPECTOR_GATEWAY_PATH_TEMPLATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace inspector::gateway {

// The variable bindings a path produced when it matched a template, in
// template order: {"id", "abc"}, {"server_id", "s1"}; field paths may be
// dotted ("server.id"). Values are percent-decoded.
using PathBindings = std::vector<std::pair<std::string, std::string>>;

// A request path cut into raw (still percent-encoded) segments once, so it
// can be matched against many templates. Views point into the string given
// to Split, which must outlive this value.
class RequestPath {
 public:
  // nullopt unless `path` starts with '/'. "/" has no segments; "/a/" has
  // two ("a" and "").
  static std::optional<RequestPath> Split(std::string_view path);

  const std::vector<std::string_view>& segments() const { return segments_; }

 private:
  std::vector<std::string_view> segments_;
};

class PathTemplate {
 public:
  // One variable: its field path and the template segments it covers,
  // [start, end); end == -1 means "to the end of the path" (ends in `**`).
  struct Variable {
    std::string field_path;
    int start = 0;
    int end = 0;
  };

  // An empty template that matches nothing; use Parse.
  PathTemplate() = default;

  // Parses `text`; INVALID_ARGUMENT naming the position and character of
  // the first problem otherwise.
  static absl::StatusOr<PathTemplate> Parse(std::string_view text);

  // The bindings if `path` (raw URL path, no query) matches.
  std::optional<PathBindings> Match(std::string_view path) const;
  std::optional<PathBindings> Match(const RequestPath& path) const;
  // Like Match but fills `bindings` (cleared first) and returns whether it
  // matched; lets a caller reuse one vector.
  bool MatchInto(const RequestPath& path, PathBindings* bindings) const;

  // The template with every variable replaced by its pattern and literals
  // in one spelling: "/config/*", "/api/pending/*:resolve". Two templates
  // with the same canonical form match exactly the same paths.
  std::string Canonical() const;

  // Orders templates by how specific they are: literal segments beat `*`,
  // which beats `**`, compared from the first segment on; then a verb beats
  // no verb. Negative if *this is less specific than `other`, 0 if equally.
  int CompareSpecificity(const PathTemplate& other) const;

  const std::vector<Variable>& variables() const { return variables_; }
  const std::string& verb() const { return verb_; }
  bool valid() const { return valid_; }
  // The first segment's (decoded) literal, or nullptr if it is a wildcard
  // or there are no segments. Used by RouteTable to index templates.
  const std::string* first_literal() const;

 private:
  enum class Kind : uint8_t { kLiteral, kSingle, kMulti };
  struct Segment {
    Kind kind;
    std::string literal;  // decoded; only for kLiteral
  };

  bool valid_ = false;
  std::vector<Segment> segments_;
  std::vector<Variable> variables_;
  std::string verb_;
  bool ends_with_multi_ = false;

  friend class TemplateParser;
};

// Percent-decodes `in` into `out` ('+' stays '+'). False (and `out`
// unspecified) on a malformed escape. Exposed for the query parser.
bool PercentDecode(std::string_view in, std::string* out);

}  // namespace inspector::gateway

#endif  // INSPECTOR_GATEWAY_PATH_TEMPLATE_H_
