#include "tests/testing/curl.h"

#include <cctype>
#include <cstdlib>

#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace inspector::testing {

using json = nlohmann::json;

json HttpResult::Json() const { return json::parse(body, nullptr, false); }

json HttpResult::Rpc() const {
  size_t data = body.find("data: ");
  if (data == std::string::npos) return Json();
  size_t end = body.find('\n', data);
  return json::parse(
      body.substr(data + 6, end == std::string::npos ? std::string::npos
                                                     : end - data - 6),
      nullptr, false);
}

std::string HttpResult::content_type() const {
  auto found = headers.find("content-type");
  return found == headers.end() ? "" : found->second;
}

HttpResult RunCurl(const std::vector<std::string>& args,
                   const std::string& input,
                   const std::vector<std::string>& as) {
  std::vector<std::string> argv = as;
  for (const char* arg : {"curl", "-sS", "-i", "--max-time", "60"}) {
    argv.push_back(arg);
  }
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult run = RunProcess(argv, {}, input);
  HttpResult result;
  result.curl_exit = run.exit_code;
  result.curl_error = run.err;
  std::string out = run.out;
  while (true) {  // skip interim responses (100 Continue)
    size_t head_end = out.find("\r\n\r\n");
    if (head_end == std::string::npos) return result;
    std::string head = out.substr(0, head_end);
    out = out.substr(head_end + 4);
    // "HTTP/1.1 200 OK"
    size_t space = head.find(' ');
    if (space == std::string::npos) return result;
    result.status = std::atoi(head.c_str() + space + 1);
    if (result.status == 100) continue;
    size_t at = head.find("\r\n");
    while (at != std::string::npos) {
      size_t next = head.find("\r\n", at + 2);
      std::string line =
          head.substr(at + 2, next == std::string::npos ? std::string::npos
                                                        : next - at - 2);
      at = next;
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (char& c : name) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      size_t value = line.find_first_not_of(" \t", colon + 1);
      size_t last = line.find_last_not_of(" \t\r");
      result.headers[name] = value == std::string::npos
                                 ? ""
                                 : line.substr(value, last - value + 1);
    }
    break;
  }
  result.body = out;
  return result;
}

HttpResult Curl(const std::vector<std::string>& args, const std::string& input,
                const std::vector<std::string>& as) {
  HttpResult result = RunCurl(args, input, as);
  EXPECT_EQ(result.curl_exit, 0) << result.curl_error;
  return result;
}

HttpResult CurlJson(const std::string& method, const std::string& url,
                    const std::string& body,
                    const std::vector<std::string>& headers) {
  std::vector<std::string> args = {"-X", method};
  for (const std::string& header : headers) {
    args.push_back("-H");
    args.push_back(header);
  }
  if (!body.empty()) {
    args.insert(args.end(), {"-H", "Content-Type: application/json",
                             "--data-binary", "@-"});
  }
  args.push_back(url);
  return Curl(args, body);
}

}  // namespace inspector::testing
