// HTTP from end-to-end tests: curl as a real client of a daemon's REST
// gateway, MCP front doors and bridge endpoints, its answer split into
// status, headers and body. The tests read what a user's curl would see.
//
// Stateless functions; call them from any thread (each runs its own curl
// child process).
#ifndef INSPECTOR_TESTS_TESTING_CURL_H_
#define INSPECTOR_TESTS_TESTING_CURL_H_

#include <map>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace inspector::testing {

struct HttpResult {
  int status = 0;          // 0 when no answer was read
  int curl_exit = 0;       // curl's exit code (7: connection refused)
  std::string curl_error;  // what curl wrote to stderr
  std::map<std::string, std::string> headers;  // lower-cased names
  std::string body;

  nlohmann::json Json() const;
  // The JSON-RPC message of an MCP answer: the body as JSON, or the data
  // of its first SSE event.
  nlohmann::json Rpc() const;
  // The Content-Type header ("" if none).
  std::string content_type() const;
};

// Runs `as` (for example setpriv, to be another user; may be empty), then
// `curl -sS -i --max-time 60 ARGS` with `input` on stdin, and splits the
// final answer (interim 100 Continue answers are skipped). Whatever curl's
// exit code: for tests of refused connections.
HttpResult RunCurl(const std::vector<std::string>& args,
                   const std::string& input = "",
                   const std::vector<std::string>& as = {});

// RunCurl, and a test failure (with curl's stderr) unless curl exits 0.
HttpResult Curl(const std::vector<std::string>& args,
                const std::string& input = "",
                const std::vector<std::string>& as = {});

// `method` on `url` with a JSON `body` (none if empty) and the extra
// `headers` ("Name: value"), through Curl.
HttpResult CurlJson(const std::string& method, const std::string& url,
                    const std::string& body = "",
                    const std::vector<std::string>& headers = {});

}  // namespace inspector::testing

#endif  // INSPECTOR_TESTS_TESTING_CURL_H_
