#include "gateway/route_table.h"

#include <algorithm>
#include <map>
#include <utility>

#include <google/protobuf/unknown_field_set.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/errors.h"
#include "google/api/annotations.pb.h"

namespace inspector::gateway {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::FieldDescriptor;
using google::protobuf::FileDescriptor;
using google::protobuf::FileDescriptorProto;
using google::protobuf::FileDescriptorSet;
using google::protobuf::MethodDescriptor;

class CollectErrors : public DescriptorPool::ErrorCollector {
 public:
  void AddError(const std::string& filename, const std::string& element_name,
                const google::protobuf::Message* descriptor,
                ErrorLocation location, const std::string& message) override {
    if (!text_.empty()) text_.append("; ");
    absl::StrAppend(&text_, element_name.empty() ? filename : element_name,
                    ": ", message);
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// Builds files in import order: a FileDescriptorSet written with
// --include_imports is usually in that order already, but nothing requires
// it.
class SetBuilder {
 public:
  SetBuilder(const FileDescriptorSet& set, DescriptorPool* pool) : pool_(pool) {
    for (const FileDescriptorProto& file : set.file()) {
      by_name_.emplace(file.name(), &file);
    }
  }

  absl::Status Build(const std::string& name, const std::string& importer) {
    auto [state, inserted] = state_.emplace(name, kBuilding);
    if (!inserted) {
      if (state->second == kBuilt) return absl::OkStatus();
      return Error(
          ErrorCode::INVALID_CONFIG,
          absl::StrCat("descriptor set: import cycle through \"", name, "\""));
    }
    auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      return Error(
          ErrorCode::INVALID_CONFIG,
          absl::StrCat("descriptor set: \"", importer, "\" imports \"", name,
                       "\", which is not in the set (write it with "
                       "protoc --include_imports)"));
    }
    for (const std::string& dependency : it->second->dependency()) {
      if (absl::Status s = Build(dependency, name); !s.ok()) return s;
    }
    CollectErrors errors;
    if (pool_->BuildFileCollectingErrors(*it->second, &errors) == nullptr) {
      return Error(ErrorCode::INVALID_CONFIG,
                   absl::StrCat("descriptor set: \"", name,
                                "\" does not build: ", errors.text()));
    }
    state->second = kBuilt;
    return absl::OkStatus();
  }

 private:
  enum State { kBuilding, kBuilt };
  DescriptorPool* pool_;
  std::map<std::string, const FileDescriptorProto*> by_name_;
  std::map<std::string, State> state_;
};

absl::Status RouteError(const MethodDescriptor* method,
                        std::string_view http_method, std::string_view pattern,
                        std::string_view what) {
  return Error(ErrorCode::INVALID_CONFIG,
               absl::StrCat("route ", std::string(http_method), " \"",
                            std::string(pattern), "\" of ", method->full_name(),
                            ": ", std::string(what)));
}

// Resolves a path variable's dotted field path in `type`: every part but
// the last must be a singular message field, the last a singular scalar or
// enum field.
absl::Status CheckVariableField(const Descriptor* type,
                                const std::string& field_path) {
  std::vector<std::string> parts = absl::StrSplit(field_path, '.');
  for (size_t i = 0; i < parts.size(); ++i) {
    const FieldDescriptor* field = type->FindFieldByName(parts[i]);
    if (field == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "path variable \"", field_path, "\": ", type->full_name(),
          " has no field \"", parts[i], "\""));
    }
    if (field->is_repeated()) {
      return absl::InvalidArgumentError(
          absl::StrCat("path variable \"", field_path, "\": field \"", parts[i],
                       "\" is repeated"));
    }
    bool last = i + 1 == parts.size();
    bool is_message = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (last && is_message) {
      return absl::InvalidArgumentError(
          absl::StrCat("path variable \"", field_path, "\": field \"", parts[i],
                       "\" is a message, not a scalar"));
    }
    if (!last && !is_message) {
      return absl::InvalidArgumentError(
          absl::StrCat("path variable \"", field_path, "\": field \"", parts[i],
                       "\" is not a message"));
    }
    if (!last) type = field->message_type();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<DescriptorPool>> LoadDescriptorSet(
    std::string_view serialized_file_descriptor_set) {
  FileDescriptorSet set;
  if (!set.ParseFromArray(
          serialized_file_descriptor_set.data(),
          static_cast<int>(serialized_file_descriptor_set.size()))) {
    return Error(ErrorCode::INVALID_CONFIG,
                 "descriptor set: the bytes are not a serialized "
                 "google.protobuf.FileDescriptorSet");
  }
  if (set.file_size() == 0) {
    return Error(ErrorCode::INVALID_CONFIG,
                 "descriptor set: it holds no files");
  }
  std::vector<std::string> names;
  std::map<std::string, const FileDescriptorProto*> seen;
  for (const FileDescriptorProto& file : set.file()) {
    if (file.name().empty()) {
      return Error(ErrorCode::INVALID_CONFIG,
                   "descriptor set: a file has no name");
    }
    auto [it, inserted] = seen.emplace(file.name(), &file);
    if (inserted) {
      names.push_back(file.name());
    } else if (it->second->SerializeAsString() != file.SerializeAsString()) {
      return Error(ErrorCode::INVALID_CONFIG,
                   absl::StrCat("descriptor set: \"", file.name(),
                                "\" appears twice with different contents"));
    }
  }
  auto pool = std::make_unique<DescriptorPool>();
  SetBuilder builder(set, pool.get());
  for (const std::string& name : names) {
    if (absl::Status s = builder.Build(name, name); !s.ok()) return s;
  }
  FileDescriptorProto index;
  index.set_name(std::string(kDescriptorSetIndexFile));
  index.set_syntax("proto3");
  for (const std::string& name : names) index.add_dependency(name);
  CollectErrors errors;
  if (pool->BuildFileCollectingErrors(index, &errors) == nullptr) {
    return Error(ErrorCode::INVALID_CONFIG,
                 absl::StrCat("descriptor set: ", errors.text()));
  }
  return pool;
}

bool HttpRuleFromOptions(const google::protobuf::MethodOptions& options,
                         google::api::HttpRule* rule) {
  if (options.HasExtension(google::api::http)) {
    *rule = options.GetExtension(google::api::http);
    return true;
  }
  // Options parsed where the extension was not registered keep it as an
  // unknown length-delimited field; several occurrences merge.
  const google::protobuf::UnknownFieldSet& unknown = options.unknown_fields();
  bool found = false;
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField& field = unknown.field(i);
    if (field.number() != google::api::kHttpFieldNumber ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
      continue;
    }
    if (!found) rule->Clear();
    if (!rule->MergeFromString(field.length_delimited())) return false;
    found = true;
  }
  return found;
}

absl::StatusOr<RouteTable> RouteTable::Build(const DescriptorPool& pool) {
  const FileDescriptor* index =
      pool.FindFileByName(std::string(kDescriptorSetIndexFile));
  if (index == nullptr) {
    return Error(ErrorCode::INVALID_CONFIG,
                 "route table: the descriptor pool was not made by "
                 "LoadDescriptorSet, so its files are unknown");
  }
  std::vector<const FileDescriptor*> files;
  files.reserve(index->dependency_count());
  for (int i = 0; i < index->dependency_count(); ++i) {
    files.push_back(index->dependency(i));
  }
  return Build(files);
}

absl::StatusOr<RouteTable> RouteTable::Build(
    const std::vector<const FileDescriptor*>& files) {
  RouteTable table;
  std::vector<std::pair<std::string, std::string>> seen_keys;
  for (const FileDescriptor* file : files) {
    for (int s = 0; s < file->service_count(); ++s) {
      const google::protobuf::ServiceDescriptor* service = file->service(s);
      for (int m = 0; m < service->method_count(); ++m) {
        const MethodDescriptor* method = service->method(m);
        google::api::HttpRule rule;
        if (!HttpRuleFromOptions(method->options(), &rule)) continue;
        std::vector<const google::api::HttpRule*> rules = {&rule};
        for (const auto& binding : rule.additional_bindings()) {
          rules.push_back(&binding);
        }
        for (const google::api::HttpRule* r : rules) {
          std::string http_method;
          std::string pattern;
          switch (r->pattern_case()) {
            case google::api::HttpRule::kGet:
              http_method = "GET";
              pattern = r->get();
              break;
            case google::api::HttpRule::kPut:
              http_method = "PUT";
              pattern = r->put();
              break;
            case google::api::HttpRule::kPost:
              http_method = "POST";
              pattern = r->post();
              break;
            case google::api::HttpRule::kDelete:
              http_method = "DELETE";
              pattern = r->delete_();
              break;
            case google::api::HttpRule::kPatch:
              http_method = "PATCH";
              pattern = r->patch();
              break;
            case google::api::HttpRule::kCustom:
              http_method = r->custom().kind();
              pattern = r->custom().path();
              if (http_method.empty()) {
                return RouteError(method, "(custom)", pattern,
                                  "a custom rule needs a kind");
              }
              break;
            case google::api::HttpRule::PATTERN_NOT_SET:
              return RouteError(method, "-", "",
                                "the http rule has no method and path");
          }
          if (r != &rule && !r->additional_bindings().empty()) {
            return RouteError(method, http_method, pattern,
                              "additional_bindings cannot nest");
          }
          Route route;
          route.http_method = http_method;
          route.pattern = pattern;
          absl::StatusOr<PathTemplate> path = PathTemplate::Parse(pattern);
          if (!path.ok()) {
            return RouteError(method, http_method, pattern,
                              std::string(path.status().message()));
          }
          route.path = *std::move(path);
          route.method = method;
          route.grpc_path =
              absl::StrCat("/", service->full_name(), "/", method->name());
          route.body = r->body();
          route.response_body = r->response_body();
          route.server_streaming = method->server_streaming();
          route.client_streaming = method->client_streaming();
          const Descriptor* input = method->input_type();
          if (!route.body.empty() && route.body != "*" &&
              input->FindFieldByName(route.body) == nullptr) {
            return RouteError(
                method, http_method, pattern,
                absl::StrCat("body \"", route.body, "\" names no field of ",
                             input->full_name()));
          }
          if (!route.response_body.empty() &&
              method->output_type()->FindFieldByName(route.response_body) ==
                  nullptr) {
            return RouteError(
                method, http_method, pattern,
                absl::StrCat("response_body \"", route.response_body,
                             "\" names no field of ",
                             method->output_type()->full_name()));
          }
          for (const auto& variable : route.path.variables()) {
            if (absl::Status s = CheckVariableField(input, variable.field_path);
                !s.ok()) {
              return RouteError(method, http_method, pattern,
                                std::string(s.message()));
            }
          }
          std::string key =
              absl::StrCat(http_method, " ", route.path.Canonical());
          for (const auto& [other_key, other] : seen_keys) {
            if (other_key == key) {
              return RouteError(method, http_method, pattern,
                                absl::StrCat("same method and path as ", other,
                                             " (both are ", key, ")"));
            }
          }
          seen_keys.emplace_back(
              key, absl::StrCat(http_method, " \"", pattern, "\" of ",
                                method->full_name()));
          table.routes_.push_back(std::move(route));
        }
      }
    }
  }
  table.Index();
  return table;
}

void RouteTable::Index() {
  method_ids_.clear();
  method_names_.clear();
  by_first_literal_.clear();
  wildcard_first_.clear();
  for (size_t i = 0; i < routes_.size(); ++i) {
    const std::string& name = routes_[i].http_method;
    auto it = std::find(method_names_.begin(), method_names_.end(), name);
    if (it == method_names_.end()) {
      method_names_.push_back(name);
      it = method_names_.end() - 1;
    }
    method_ids_.push_back(static_cast<int>(it - method_names_.begin()));
    const std::string* first = routes_[i].path.first_literal();
    (first ? by_first_literal_[*first] : wildcard_first_)
        .push_back(static_cast<int>(i));
  }
  auto by_specificity = [this](int a, int b) {
    return routes_[a].path.CompareSpecificity(routes_[b].path) > 0;
  };
  for (auto& [literal, bucket] : by_first_literal_) {
    std::stable_sort(bucket.begin(), bucket.end(), by_specificity);
  }
  std::stable_sort(wildcard_first_.begin(), wildcard_first_.end(),
                   by_specificity);
}

int RouteTable::BestIn(const Bucket& bucket, int method_id,
                       const RequestPath& path, PathBindings* bindings) const {
  for (int index : bucket) {
    if (method_ids_[index] != method_id) continue;
    if (routes_[index].path.MatchInto(path, bindings)) return index;
  }
  return -1;
}

void RouteTable::CollectMethods(const Bucket& bucket, const RequestPath& path,
                                std::vector<std::string>* methods) const {
  PathBindings scratch;
  for (int index : bucket) {
    const std::string& name = method_names_[method_ids_[index]];
    if (std::find(methods->begin(), methods->end(), name) != methods->end()) {
      continue;
    }
    if (routes_[index].path.MatchInto(path, &scratch)) methods->push_back(name);
  }
}

RouteTable::Match RouteTable::Find(std::string_view http_method,
                                   std::string_view path) const {
  Match result;
  std::optional<RequestPath> split = RequestPath::Split(path);
  if (!split) return result;

  // Templates are indexed by their first literal; a one-segment path may
  // carry a verb ("/foo:bar" against "/foo:bar" is first literal "foo").
  const Bucket* buckets[3] = {nullptr, nullptr, &wildcard_first_};
  const auto& segments = split->segments();
  if (!segments.empty()) {
    std::string key;
    if (PercentDecode(segments[0], &key)) {
      auto it = by_first_literal_.find(key);
      if (it != by_first_literal_.end()) buckets[0] = &it->second;
    }
    size_t colon = segments[0].rfind(':');
    if (segments.size() == 1 && colon != std::string_view::npos &&
        PercentDecode(segments[0].substr(0, colon), &key)) {
      auto it = by_first_literal_.find(key);
      if (it != by_first_literal_.end()) buckets[1] = &it->second;
    }
  }

  int method_id = -1;
  for (size_t i = 0; i < method_names_.size(); ++i) {
    if (method_names_[i] == http_method) method_id = static_cast<int>(i);
  }
  int best = -1;
  if (method_id >= 0) {
    PathBindings bindings;
    for (const Bucket* bucket : buckets) {
      if (bucket == nullptr) continue;
      int index = BestIn(*bucket, method_id, *split, &bindings);
      if (index < 0) continue;
      if (best < 0 ||
          routes_[index].path.CompareSpecificity(routes_[best].path) > 0) {
        best = index;
        result.bindings = std::move(bindings);
        bindings = PathBindings();
      }
    }
  }
  if (best >= 0) {
    result.kind = Match::kFound;
    result.route = &routes_[best];
    return result;
  }
  result.bindings.clear();
  for (const Bucket* bucket : buckets) {
    if (bucket != nullptr)
      CollectMethods(*bucket, *split, &result.allowed_methods);
  }
  if (!result.allowed_methods.empty()) {
    std::sort(result.allowed_methods.begin(), result.allowed_methods.end());
    result.kind = Match::kMethodNotAllowed;
  }
  return result;
}

}  // namespace inspector::gateway
