// The gateway's route table: every google.api.http rule (and its
// additional_bindings) of every service in a descriptor set, turned into
// Routes once at start-up, and the lookup of an HTTP method and path.
//
// Nothing here knows a route by hand: LoadDescriptorSet reads the compiled
// FileDescriptorSet (proto/inspector.v1.pb, built with --include_imports)
// and RouteTable::Build reads the rules from the method options.
//
// A built RouteTable is immutable: Find is safe to call from any number of
// threads at once. The DescriptorPool must outlive the table (Routes point
// into it).
#ifndef INSPECTOR_GATEWAY_ROUTE_TABLE_H_
#define INSPECTOR_GATEWAY_ROUTE_TABLE_H_

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include "absl/status/statusor.h"
#include "gateway/path_template.h"
#include "gateway/route.h"
#include "google/api/http.pb.h"

namespace inspector::gateway {

// Name of the empty file LoadDescriptorSet adds to the pool; it imports
// every file of the set, because a DescriptorPool cannot list its files.
inline constexpr std::string_view kDescriptorSetIndexFile =
    "inspector-gateway/descriptor-set-index.proto";

// Builds a pool from a serialized google.protobuf.FileDescriptorSet (in any
// file order). INVALID_CONFIG naming the problem if the bytes are not a
// FileDescriptorSet, a file imports one that is missing, or a file does not
// build.
absl::StatusOr<std::unique_ptr<google::protobuf::DescriptorPool>>
LoadDescriptorSet(std::string_view serialized_file_descriptor_set);

// The method's google.api.http rule, if it has one. Reads the registered
// extension and, if the options were parsed without it being registered,
// the raw field (number 72295728) from the unknown fields.
bool HttpRuleFromOptions(const google::protobuf::MethodOptions& options,
                         google::api::HttpRule* rule);

class RouteTable {
 public:
  // The result of Find.
  struct Match {
    enum Kind { kFound, kNotFound, kMethodNotAllowed };
    Kind kind = kNotFound;
    // kFound: the route and the path's variable bindings.
    const Route* route = nullptr;
    PathBindings bindings;
    // kMethodNotAllowed: the methods whose routes match the path, sorted
    // (for the Allow header).
    std::vector<std::string> allowed_methods;
  };

  // Every rule of every service in a pool made by LoadDescriptorSet.
  // INVALID_CONFIG naming the method and template for: a bad template; a
  // `body` or `response_body` that names no field; a path variable that
  // names no field or a repeated / message field; a rule without a pattern;
  // nested additional_bindings; two routes with the same HTTP method and
  // canonical template.
  static absl::StatusOr<RouteTable> Build(
      const google::protobuf::DescriptorPool& pool);
  // The same for the services of the given files only.
  static absl::StatusOr<RouteTable> Build(
      const std::vector<const google::protobuf::FileDescriptor*>& files);

  // In declaration order: file, service, method, then the rule before its
  // additional_bindings.
  const std::vector<Route>& routes() const { return routes_; }

  // Looks up `path` (raw URL path, no query string). Templates are indexed
  // by HTTP method and first literal segment; a lookup takes well under a
  // microsecond. When several
  // templates match, the most specific wins (literal over variable, `*`
  // over `**`, see PathTemplate::CompareSpecificity). kMethodNotAllowed if
  // routes of other methods match the path; kNotFound otherwise.
  Match Find(std::string_view http_method, std::string_view path) const;

 private:
  // Route indices whose template starts with one literal, most specific
  // first.
  using Bucket = std::vector<int>;

  absl::Status Add(Route route);
  void Index();
  // The best route of `method_id` in `bucket`, or -1; fills `bindings`.
  int BestIn(const Bucket& bucket, int method_id, const RequestPath& path,
             PathBindings* bindings) const;
  void CollectMethods(const Bucket& bucket, const RequestPath& path,
                      std::vector<std::string>* methods) const;

  std::vector<Route> routes_;
  // Route index -> small integer for its HTTP method, so the lookup loop
  // compares ints.
  std::vector<int> method_ids_;
  std::vector<std::string> method_names_;
  std::unordered_map<std::string, Bucket> by_first_literal_;
  Bucket wildcard_first_;
};

}  // namespace inspector::gateway

#endif  // INSPECTOR_GATEWAY_ROUTE_TABLE_H_
