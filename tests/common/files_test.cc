// Unit tests of common/files.h: the atomic, private file write.
#include "common/files.h"

#include <dirent.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace inspector {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* entry = readdir(d)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  return names;
}

TEST(WriteFileAtomicallyTest, WritesThePrivateFileWhateverTheUmask) {
  testing::TempDir dir;
  mode_t old_umask = umask(0);
  absl::Status status = WriteFileAtomically(dir.File("ready"), "host:1\n");
  umask(old_umask);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(Slurp(dir.File("ready")), "host:1\n");
  struct stat st;
  ASSERT_EQ(stat(dir.File("ready").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_THAT(Names(dir.path()), ElementsAre("ready"));
}

TEST(WriteFileAtomicallyTest, ReplacesAnExistingFile) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomically(dir.File("f"), "old and longer").ok());
  ASSERT_TRUE(WriteFileAtomically(dir.File("f"), "new").ok());
  EXPECT_EQ(Slurp(dir.File("f")), "new");
  EXPECT_THAT(Names(dir.path()), ElementsAre("f"));
}

TEST(WriteFileAtomicallyTest, KeepsAnExistingFileWhenAskedTo) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomically(dir.File("token"), "first\n").ok());
  AtomicWriteOptions options;
  options.replace_existing = false;
  absl::Status status =
      WriteFileAtomically(dir.File("token"), "second\n", options);
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists) << status;
  EXPECT_EQ(Slurp(dir.File("token")), "first\n");
  EXPECT_THAT(Names(dir.path()), ElementsAre("token"));
}

TEST(WriteFileAtomicallyTest, CreatesWhenNothingIsThereAndReplaceIsOff) {
  testing::TempDir dir;
  AtomicWriteOptions options;
  options.replace_existing = false;
  ASSERT_TRUE(WriteFileAtomically(dir.File("token"), "t\n", options).ok());
  EXPECT_EQ(Slurp(dir.File("token")), "t\n");
  EXPECT_THAT(Names(dir.path()), ElementsAre("token"));
}

TEST(WriteFileAtomicallyTest, MissingDirectoryIsNotFoundAndNamesThePath) {
  testing::TempDir dir;
  std::string path = dir.File("no/such/ready");
  absl::Status status = WriteFileAtomically(path, "x");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(path));
}

TEST(WriteFileAtomicallyTest, ADirectoryPathIsRefused) {
  testing::TempDir dir;
  absl::Status status = WriteFileAtomically(dir.path() + "/", "x");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_TRUE(Names(dir.path()).empty());
}

TEST(WriteFileAtomicallyTest, AFailedRenameLeavesNoTemporaryFile) {
  testing::TempDir dir;
  // A directory in the way: rename() of a file over it fails.
  ASSERT_EQ(mkdir(dir.File("taken").c_str(), 0700), 0);
  absl::Status status = WriteFileAtomically(dir.File("taken"), "x");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(Names(dir.path()), ElementsAre("taken"));
}

}  // namespace
}  // namespace inspector
