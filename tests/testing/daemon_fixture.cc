#include "tests/testing/daemon_fixture.h"

#include <utility>

#include "tests/testing/daemon_clients.h"

namespace inspector::testing {

void DaemonFixture::StartDaemon(std::vector<std::string> flags) {
  daemon_.reset();
  std::string error;
  daemon_ = DaemonProcess::Start(INSPECTORD_PATH, dir_, flags, &error);
  ASSERT_NE(daemon_, nullptr) << error;
}

void DaemonFixture::StartDaemonWithHttp(std::vector<std::string> flags) {
  flags.insert(flags.begin(), {"--http", "127.0.0.1:0"});
  StartDaemon(std::move(flags));
  ASSERT_NE(daemon_, nullptr);
  ASSERT_FALSE(daemon_->http_address().empty()) << daemon_->Stderr();
  base_ = "http://" + daemon_->http_address();
}

ProcessResult DaemonFixture::Ctl(std::vector<std::string> args,
                                 std::map<std::string, std::string> env,
                                 const std::string& input) {
  return testing::Ctl(*daemon_, std::move(args), std::move(env), input);
}

nlohmann::json DaemonFixture::CtlJson(std::vector<std::string> args) {
  return testing::CtlJson(*daemon_, std::move(args));
}

HttpResult DaemonFixture::Rest(const std::string& method,
                               const std::string& path, const std::string& body,
                               const std::vector<std::string>& headers) {
  std::vector<std::string> all = {"X-Session-Token: " + daemon_->token()};
  all.insert(all.end(), headers.begin(), headers.end());
  return CurlJson(method, base_ + path, body, all);
}

std::unique_ptr<grpc::ClientContext> DaemonFixture::Context(int seconds) {
  return CallContext(*daemon_, seconds);
}

}  // namespace inspector::testing
