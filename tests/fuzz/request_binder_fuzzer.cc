// Fuzz target for the gateway's request side: route lookup and building
// the gRPC request from path, query and body (gateway/route_table.h,
// transcoder.h), over the real route table.
//
// Input: byte 0 picks a route; the rest is "PATH\nQUERY\nBODY" (the body
// may hold more newlines). A PATH that does not start with '/' is a
// comma-separated list of values put into the route's own template, so most
// inputs reach the route.
// Properties: nothing crashes; a found route is one of the table's and a
// 405 names other methods only; BuildRequest either fails with
// INVALID_REQUEST or gives bytes that parse as the request message (so the
// daemon can read them); rendering arbitrary bytes as the route's response
// either works or fails with INTERNAL_ERROR.
//
// Built by tests/fuzz/CMakeLists.txt: with clang, a libFuzzer binary
// (request_binder_fuzzer -max_total_time=60 CORPUS_DIR); with any compiler,
// a replay test over tests/fuzz/corpus/request_binder.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>

#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/stubs/logging.h>

#include "gateway/route_table.h"
#include "gateway/transcoder.h"
#include "common/errors.h"

#ifndef INSPECTOR_DESCRIPTOR_SET
#error "INSPECTOR_DESCRIPTOR_SET must name the compiled descriptor set"
#endif

namespace {

using inspector::gateway::PathBindings;
using inspector::gateway::Route;
using inspector::gateway::RouteTable;
using inspector::gateway::Transcoder;

struct State {
  std::unique_ptr<google::protobuf::DescriptorPool> pool;
  std::unique_ptr<RouteTable> table;
  std::unique_ptr<Transcoder> transcoder;
  std::unique_ptr<google::protobuf::DynamicMessageFactory> factory;
};

const State& GetState() {
  static const State* state = [] {
    // Parsing arbitrary responses makes protobuf log every bad UTF-8
    // string; the log only slows the fuzzer down.
    google::protobuf::SetLogHandler(nullptr);
    std::ifstream in(INSPECTOR_DESCRIPTOR_SET, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    auto pool = inspector::gateway::LoadDescriptorSet(bytes);
    if (!pool.ok()) {
      std::fprintf(stderr, "%s\n", pool.status().ToString().c_str());
      std::abort();
    }
    auto* s = new State;
    s->pool = *std::move(pool);
    auto table = RouteTable::Build(*s->pool);
    if (!table.ok() || table->routes().empty()) std::abort();
    s->table = std::make_unique<RouteTable>(*std::move(table));
    s->transcoder = std::make_unique<Transcoder>(s->pool.get());
    s->factory = std::make_unique<google::protobuf::DynamicMessageFactory>(
        s->pool.get());
    return s;
  }();
  return *state;
}

// The route's pattern with each {variable} replaced by the next value.
std::string FillTemplate(const std::string& pattern, std::string_view values) {
  std::string out;
  size_t i = 0;
  while (i < pattern.size()) {
    if (pattern[i] != '{') {
      out.push_back(pattern[i++]);
      continue;
    }
    size_t close = pattern.find('}', i);
    if (close == std::string::npos) break;
    size_t comma = values.find(',');
    out.append(values.substr(0, comma));
    values = comma == std::string_view::npos ? std::string_view()
                                             : values.substr(comma + 1);
    i = close + 1;
  }
  return out;
}

void CheckBuilt(const State& state, const Route& route,
                const absl::StatusOr<std::string>& built) {
  if (!built.ok()) {
    if (inspector::ErrorReason(built.status()) != "INVALID_REQUEST") {
      std::fprintf(stderr, "unexpected error: %s\n",
                   built.status().ToString().c_str());
      std::abort();
    }
    return;
  }
  std::unique_ptr<google::protobuf::Message> request(
      state.factory->GetPrototype(route.method->input_type())->New());
  if (!request->ParseFromString(*built)) {
    std::fprintf(stderr, "built request does not parse\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const State& state = GetState();
  const auto& routes = state.table->routes();
  const Route& chosen = routes[data[0] % routes.size()];
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);

  size_t first = rest.find('\n');
  std::string_view path_part = rest.substr(0, first);
  std::string_view query, body;
  if (first != std::string_view::npos) {
    std::string_view after = rest.substr(first + 1);
    size_t second = after.find('\n');
    query = after.substr(0, second);
    if (second != std::string_view::npos) body = after.substr(second + 1);
  }
  std::string path = !path_part.empty() && path_part[0] == '/'
                         ? std::string(path_part)
                         : FillTemplate(chosen.pattern, path_part);

  RouteTable::Match match = state.table->Find(chosen.http_method, path);
  switch (match.kind) {
    case RouteTable::Match::kFound: {
      if (match.route < routes.data() ||
          match.route >= routes.data() + routes.size() ||
          match.route->http_method != chosen.http_method) {
        std::abort();
      }
      CheckBuilt(
          state, *match.route,
          state.transcoder->BuildRequest(*match.route, match.bindings, query,
                                         body, "application/json"));
      break;
    }
    case RouteTable::Match::kMethodNotAllowed:
      if (match.allowed_methods.empty() ||
          std::find(match.allowed_methods.begin(), match.allowed_methods.end(),
                    chosen.http_method) != match.allowed_methods.end()) {
        std::abort();
      }
      break;
    case RouteTable::Match::kNotFound:
      if (match.route != nullptr || !match.allowed_methods.empty()) {
        std::abort();
      }
      break;
  }

  // The chosen route itself, with whatever its template binds.
  PathBindings bindings;
  if (auto bound = chosen.path.Match(path)) bindings = *std::move(bound);
  // Byte 0's high bit: the query doubles as the Content-Type header.
  std::string_view content_type = (data[0] & 0x80) ? query : "text/plain";
  CheckBuilt(state, chosen,
             state.transcoder->BuildRequest(chosen, bindings, query, body,
                                            content_type));

  // Arbitrary bytes as the route's response.
  auto rendered = state.transcoder->RenderResponse(chosen, body);
  if (!rendered.ok() &&
      inspector::ErrorReason(rendered.status()) != "INTERNAL_ERROR") {
    std::abort();
  }
  return 0;
}
