#include "server/sessions/session_diff.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/errors.h"

namespace inspector::sessions {
namespace {

using nlohmann::json;

google::protobuf::Value ToValue(const json& j) {
  google::protobuf::Value v;
  if (j.is_null()) {
    v.set_null_value(google::protobuf::NULL_VALUE);
  } else if (j.is_boolean()) {
    v.set_bool_value(j.get<bool>());
  } else if (j.is_number()) {
    v.set_number_value(j.get<double>());
  } else if (j.is_string()) {
    v.set_string_value(j.get<std::string>());
  } else if (j.is_array()) {
    auto* list = v.mutable_list_value();
    for (const json& item : j) *list->add_values() = ToValue(item);
  } else if (j.is_object()) {
    auto* fields = v.mutable_struct_value()->mutable_fields();
    for (auto it = j.begin(); it != j.end(); ++it) {
      (*fields)[it.key()] = ToValue(it.value());
    }
  }
  return v;
}

std::string Escape(std::string_view segment) {
  std::string out;
  for (char c : segment) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// True if `path` is, or lies below, one of the ignored pointers.
bool Ignored(const std::vector<std::string>& path,
             const std::vector<std::vector<std::string>>& ignore) {
  for (const auto& pointer : ignore) {
    if (pointer.size() > path.size()) continue;
    bool match = true;
    for (size_t i = 0; i < pointer.size() && match; ++i) {
      match = pointer[i] == "*" || pointer[i] == path[i];
    }
    if (match) return true;
  }
  return false;
}

std::string PathText(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& segment : path) absl::StrAppend(&out, "/", Escape(segment));
  return out;
}

bool SameScalar(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_number_float() || b.is_number_float()) {
      return a.get<double>() == b.get<double>();
    }
  }
  return a == b;
}

void Diff(const json& a, const json& b, std::vector<std::string>& path,
          const std::vector<std::vector<std::string>>& ignore,
          std::vector<v1::DiffChange>* out) {
  if (Ignored(path, ignore)) return;
  auto change = [&](const char* op, const json* old_value,
                    const json* new_value) {
    v1::DiffChange c;
    c.set_op(op);
    c.set_path(PathText(path));
    if (old_value != nullptr) *c.mutable_old_value() = ToValue(*old_value);
    if (new_value != nullptr) *c.mutable_new_value() = ToValue(*new_value);
    out->push_back(std::move(c));
  };
  if (a.is_object() && b.is_object()) {
    std::map<std::string, std::pair<const json*, const json*>> keys;
    for (auto it = a.begin(); it != a.end(); ++it) {
      keys[it.key()].first = &it.value();
    }
    for (auto it = b.begin(); it != b.end(); ++it) {
      keys[it.key()].second = &it.value();
    }
    for (const auto& [key, values] : keys) {
      path.push_back(key);
      if (!Ignored(path, ignore)) {
        if (values.second == nullptr) {
          change("removed", values.first, nullptr);
        } else if (values.first == nullptr) {
          change("added", nullptr, values.second);
        } else {
          Diff(*values.first, *values.second, path, ignore, out);
        }
      }
      path.pop_back();
    }
    return;
  }
  if (a.is_array() && b.is_array()) {
    const size_t n = std::max(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
      path.push_back(absl::StrCat(i));
      if (!Ignored(path, ignore)) {
        if (i >= b.size()) {
          change("removed", &a[i], nullptr);
        } else if (i >= a.size()) {
          change("added", nullptr, &b[i]);
        } else {
          Diff(a[i], b[i], path, ignore, out);
        }
      }
      path.pop_back();
    }
    return;
  }
  if (!SameScalar(a, b)) change("changed", &a, &b);
}

// A session's client-to-server requests in order, each with its answer.
struct Exchange {
  const v1::McpMessage* request = nullptr;
  const v1::McpMessage* answer = nullptr;
};

std::vector<Exchange> Exchanges(
    const std::vector<storage::SessionMessage>& messages) {
  std::vector<Exchange> out;
  std::map<int64_t, size_t> index_of;
  for (const auto& entry : messages) {
    const v1::McpMessage& m = entry.message;
    if (m.direction() == v1::CLIENT_TO_SERVER && m.kind() == "request") {
      index_of[m.id()] = out.size();
      out.push_back({&m, nullptr});
    } else if (m.direction() == v1::SERVER_TO_CLIENT &&
               (m.kind() == "response" || m.kind() == "error")) {
      auto it = index_of.find(m.correlated_id());
      if (it != index_of.end() && out[it->second].answer == nullptr) {
        out[it->second].answer = &m;
      }
    }
  }
  return out;
}

json AnswerJson(const v1::McpMessage* answer) {
  if (answer == nullptr) return json(nullptr);
  json parsed = json::parse(answer->raw(), nullptr, false);
  if (parsed.is_discarded()) return json(answer->raw());
  return parsed;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseJsonPointer(
    std::string_view pointer) {
  std::vector<std::string> segments;
  if (pointer.empty()) return segments;
  if (pointer.front() != '/') {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat("\"", std::string(pointer),
                              "\" is not a JSON Pointer (it must start "
                              "with \"/\", e.g. /result/content/0/text)"),
                 {{"field", "ignore"}});
  }
  std::string current;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      segments.push_back(std::move(current));
      current.clear();
      continue;
    }
    if (pointer[i] == '~') {
      if (i + 1 < pointer.size() && (pointer[i + 1] == '0' ||
                                     pointer[i + 1] == '1')) {
        current += pointer[i + 1] == '0' ? '~' : '/';
        ++i;
        continue;
      }
      return Error(v1::INVALID_REQUEST,
                   absl::StrCat("\"", std::string(pointer),
                                "\" has a \"~\" not followed by 0 or 1"),
                   {{"field", "ignore"}});
    }
    current += pointer[i];
  }
  return segments;
}

std::vector<v1::DiffChange> DiffJson(
    const json& a, const json& b,
    const std::vector<std::vector<std::string>>& ignore) {
  std::vector<v1::DiffChange> out;
  std::vector<std::string> path;
  Diff(a, b, path, ignore, &out);
  return out;
}

absl::StatusOr<v1::DiffSessionsResponse> DiffSessions(
    const std::string& a_id, const std::vector<storage::SessionMessage>& a,
    const std::string& b_id, const std::vector<storage::SessionMessage>& b,
    const std::vector<std::string>& ignore, bool no_default_ignore) {
  v1::DiffSessionsResponse response;
  response.set_a(a_id);
  response.set_b(b_id);
  std::vector<std::vector<std::string>> pointers;
  auto add = [&](std::string_view text) -> absl::Status {
    auto parsed = ParseJsonPointer(text);
    if (!parsed.ok()) return parsed.status();
    response.add_ignored(std::string(text));
    pointers.push_back(*std::move(parsed));
    return absl::OkStatus();
  };
  if (!no_default_ignore) {
    for (std::string_view p : kDefaultIgnores) {
      absl::Status status = add(p);
      if (!status.ok()) return status;
    }
  }
  for (const std::string& p : ignore) {
    absl::Status status = add(p);
    if (!status.ok()) return status;
  }
  const std::vector<Exchange> left = Exchanges(a);
  const std::vector<Exchange> right = Exchanges(b);
  const size_t n = std::max(left.size(), right.size());
  for (size_t i = 0; i < n; ++i) {
    v1::DiffPair* pair = response.add_pairs();
    pair->set_index(static_cast<uint32_t>(i + 1));
    const Exchange* x = i < left.size() ? &left[i] : nullptr;
    const Exchange* y = i < right.size() ? &right[i] : nullptr;
    if (x != nullptr) {
      pair->set_method(x->request->method());
      pair->set_a_request_id(x->request->id());
      if (x->answer != nullptr) pair->set_a_response_id(x->answer->id());
    }
    if (y != nullptr) {
      pair->set_b_method(y->request->method());
      if (x == nullptr) pair->set_method(y->request->method());
      pair->set_b_request_id(y->request->id());
      if (y->answer != nullptr) pair->set_b_response_id(y->answer->id());
    }
    if (y == nullptr) {
      pair->set_status("only_a");
    } else if (x == nullptr) {
      pair->set_status("only_b");
    } else {
      for (auto& change :
           DiffJson(AnswerJson(x->answer), AnswerJson(y->answer), pointers)) {
        *pair->add_changes() = std::move(change);
      }
      if (x->request->method() != y->request->method()) {
        pair->set_status("method_differs");
      } else {
        pair->set_status(pair->changes().empty() ? "same" : "changed");
      }
    }
    if (pair->status() != "same") {
      response.set_differing(response.differing() + 1);
    }
  }
  response.set_identical(response.differing() == 0);
  return response;
}

}  // namespace inspector::sessions
