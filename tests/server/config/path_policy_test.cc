// PathPolicy on a real temporary tree: ".." and symbolic links are resolved
// before the allowed directories are compared, paths that do not exist
// yet are resolved through their existing parent, and a policy with no
// directories allows everything.
#include "server/config/path_policy.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::config {
namespace {

using ::testing::HasSubstr;

class PathPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/path-policy-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    char* real = realpath(tmpl, nullptr);
    root_ = real;
    free(real);
    allowed_ = root_ + "/allowed";
    outside_ = root_ + "/outside";
    ASSERT_EQ(mkdir(allowed_.c_str(), 0700), 0);
    ASSERT_EQ(mkdir(outside_.c_str(), 0700), 0);
    ASSERT_EQ(mkdir((allowed_ + "/sub").c_str(), 0700), 0);
    ASSERT_EQ(symlink(outside_.c_str(), (allowed_ + "/escape").c_str()), 0);
    ASSERT_EQ(symlink((allowed_ + "/sub").c_str(), (outside_ + "/in").c_str()),
              0);
    auto policy = PathPolicy::Create({allowed_});
    ASSERT_TRUE(policy.ok()) << policy.status();
    policy_ = *policy;
  }
  void TearDown() override {
    std::string command = "rm -rf '" + root_ + "'";
    ASSERT_EQ(system(command.c_str()), 0);
  }

  std::string root_, allowed_, outside_;
  PathPolicy policy_;
};

TEST_F(PathPolicyTest, ResolvesDotDotAndLinks) {
  EXPECT_EQ(ResolvePath(allowed_ + "/sub/../sub/."), allowed_ + "/sub");
  EXPECT_EQ(ResolvePath(allowed_ + "/escape"), outside_);
  EXPECT_EQ(ResolvePath(allowed_ + "/escape/../allowed"), root_ + "/allowed");
  EXPECT_EQ(ResolvePath(allowed_ + "/missing/../../outside/x"),
            outside_ + "/x");
  EXPECT_EQ(ResolvePath("sub/tool", allowed_), allowed_ + "/sub/tool");
}

TEST_F(PathPolicyTest, AllowsInsideAndRefusesEscapes) {
  EXPECT_TRUE(policy_.Check("cwd", allowed_).ok());
  EXPECT_TRUE(policy_.Check("cwd", allowed_ + "/sub").ok());
  EXPECT_TRUE(policy_.Check("cwd", allowed_ + "/not-yet/deeper").ok());
  // A link from outside that leads inside is inside.
  EXPECT_TRUE(policy_.Check("cwd", outside_ + "/in").ok());

  for (const std::string& escape :
       {allowed_ + "/..", allowed_ + "/../outside", allowed_ + "/escape",
        allowed_ + "/escape/file", allowed_ + "/missing/../../outside",
        root_ + "/allowed-but-not", std::string("/")}) {
    absl::Status status = policy_.Check("cwd", escape);
    EXPECT_EQ(ErrorReason(status), "INVALID_REQUEST") << escape;
    EXPECT_THAT(status.message(), HasSubstr(escape));
    EXPECT_EQ(GetErrorDetails(status)["path"], escape);
  }
}

TEST_F(PathPolicyTest, ChecksAStdioServersCwdAndCommandPath) {
  v1::ServerConfig config;
  config.set_transport("stdio");
  config.set_command("npx");  // looked up in PATH: not a path
  config.set_cwd(allowed_ + "/sub");
  EXPECT_TRUE(policy_.CheckServer(config).ok());
  config.set_command("./tool");
  EXPECT_TRUE(policy_.CheckServer(config).ok());
  config.set_command("../../outside/tool");
  EXPECT_EQ(ErrorReason(policy_.CheckServer(config)), "INVALID_REQUEST");
  config.set_command("/bin/sh");
  EXPECT_EQ(ErrorReason(policy_.CheckServer(config)), "INVALID_REQUEST");
  config.set_command("npx");
  config.set_cwd(allowed_ + "/escape");
  EXPECT_EQ(ErrorReason(policy_.CheckServer(config)), "INVALID_REQUEST");

  v1::ServerConfig http;
  http.set_transport("streamableHttp");
  http.set_url("http://127.0.0.1:1/mcp");
  EXPECT_TRUE(policy_.CheckServer(http).ok());
}

TEST_F(PathPolicyTest, NoDirectoriesAllowEverything) {
  PathPolicy open;
  EXPECT_FALSE(open.restricted());
  EXPECT_TRUE(open.Check("cwd", "/").ok());
  EXPECT_TRUE(open.Check("cwd", allowed_ + "/escape").ok());
}

TEST_F(PathPolicyTest, AMissingAllowedDirIsAnError) {
  auto policy = PathPolicy::Create({root_ + "/nope"});
  ASSERT_FALSE(policy.ok());
  EXPECT_THAT(policy.status().message(), HasSubstr(root_ + "/nope"));
}

}  // namespace
}  // namespace inspector::config
