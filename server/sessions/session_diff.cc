#include "server/sessions/session_diff.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/errors.h"

namespace inspector::sessions {
namespace {

using nlohmann::json;

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

std::vector<v1::DiffChange> DiffJson(
    const json& a, const json& b,
    const std::vector<std::vector<std::string>>& ignore) {
  return CompareRules::IgnoringOnly(ignore).Compare(a, b);
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
  DiffSessionsWith(a, b, CompareRules::IgnoringOnly(std::move(pointers)),
                   &response);
  return response;
}

void DiffSessionsWith(const std::vector<storage::SessionMessage>& a,
                      const std::vector<storage::SessionMessage>& b,
                      const CompareRules& rules,
                      v1::DiffSessionsResponse* response) {
  const std::vector<Exchange> left = Exchanges(a);
  const std::vector<Exchange> right = Exchanges(b);
  const size_t n = std::max(left.size(), right.size());
  for (size_t i = 0; i < n; ++i) {
    v1::DiffPair* pair = response->add_pairs();
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
           rules.Compare(AnswerJson(x->answer), AnswerJson(y->answer))) {
        *pair->add_changes() = std::move(change);
      }
      if (x->request->method() != y->request->method()) {
        pair->set_status("method_differs");
      } else {
        pair->set_status(pair->changes().empty() ? "same" : "changed");
      }
    }
    if (pair->status() != "same") {
      response->set_differing(response->differing() + 1);
    }
  }
  response->set_identical(response->differing() == 0);
}

}  // namespace inspector::sessions
