#include "clients/cli/files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "clients/cli/cli_errors.h"
#include "clients/cli/exit_codes.h"

namespace inspector::cli {
namespace files_test {

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    std::string base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    std::string pattern = base + "/inspectorctl-files-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::string command = "rm -rf '" + dir_ + "'";
    EXPECT_EQ(std::system(command.c_str()), 0);
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  void Write(const std::string& name, const std::string& content) {
    std::ofstream(Path(name), std::ios::binary) << content;
  }
  static int ExitCodeOf(const absl::Status& status) {
    return DescribeError(status, ErrorContext()).exit_code;
  }

  std::string dir_;
};

TEST_F(FilesTest, ReadsSmallFiles) {
  Write("a.json", "{\"mcpServers\": {}}");
  auto content = ReadInputFile(Path("a.json"), 1024);
  ASSERT_TRUE(content.ok()) << content.status();
  EXPECT_EQ(*content, "{\"mcpServers\": {}}");
}

TEST_F(FilesTest, RefusesFilesOverTheLimit) {
  Write("big.json", std::string(101, 'x'));
  auto content = ReadInputFile(Path("big.json"), 100);
  ASSERT_FALSE(content.ok());
  EXPECT_EQ(ExitCodeOf(content.status()), kExitInvalidInput);
  EXPECT_EQ(ErrorReason(content.status()), "TOO_LARGE");

  Write("edge.json", std::string(100, 'x'));
  EXPECT_TRUE(ReadInputFile(Path("edge.json"), 100).ok());
}

TEST_F(FilesTest, MissingFileIsInvalidInput) {
  auto content = ReadInputFile(Path("missing.json"), 100);
  ASSERT_FALSE(content.ok());
  EXPECT_EQ(ExitCodeOf(content.status()), kExitInvalidInput);
  EXPECT_NE(std::string(content.status().message()).find("missing.json"),
            std::string::npos);
  EXPECT_FALSE(ReadInputFile(dir_, 100).ok());
}

TEST_F(FilesTest, WritesPrivateFiles) {
  ASSERT_TRUE(WritePrivateFile(Path("out.json"), "secret\n").ok());
  struct stat st;
  ASSERT_EQ(stat(Path("out.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::ifstream in(Path("out.json"));
  std::stringstream read;
  read << in.rdbuf();
  EXPECT_EQ(read.str(), "secret\n");
}

TEST_F(FilesTest, ReplacingAWorldReadableFileMakesItPrivate) {
  Write("old.json", "old");
  ASSERT_EQ(chmod(Path("old.json").c_str(), 0644), 0);
  ASSERT_TRUE(WritePrivateFile(Path("old.json"), "new").ok());
  struct stat st;
  ASSERT_EQ(stat(Path("old.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(FilesTest, WriteFailsInAMissingDirectory) {
  absl::Status status = WritePrivateFile(Path("no/such/dir/out.json"), "x");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(ExitCodeOf(status), kExitInvalidInput);
}

}  // namespace files_test
}  // namespace inspector::cli
