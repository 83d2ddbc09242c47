// Unit tests of the web UI's one-time sign-in codes, on a fake clock.
#include "server/auth/sign_in_codes.h"

#include "gtest/gtest.h"
#include "tests/testing/fake_clock.h"

namespace inspector::auth {
namespace {

class SignInCodesTest : public ::testing::Test {
 protected:
  inspector::testing::FakeClock clock_;
  const absl::Time start_ = clock_.Now();
  SignInCodes codes_{&clock_, absl::Minutes(15)};
};

TEST_F(SignInCodesTest, ACodeIsHexAndWorksOnce) {
  auto code = codes_.Mint();
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(code->code.size(), 64u);
  EXPECT_EQ(code->code.find_first_not_of("0123456789abcdef"),
            std::string::npos);
  EXPECT_EQ(code->expires_at, start_ + absl::Minutes(15));
  EXPECT_TRUE(codes_.Redeem(code->code));
  EXPECT_FALSE(codes_.Redeem(code->code));
}

TEST_F(SignInCodesTest, CodesAreIndependentAndDistinct) {
  auto first = codes_.Mint();
  auto second = codes_.Mint();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->code, second->code);
  EXPECT_TRUE(codes_.Redeem(second->code));
  EXPECT_TRUE(codes_.Redeem(first->code));
}

TEST_F(SignInCodesTest, UnknownEmptyAndPartialCodesAreRefused) {
  auto code = codes_.Mint();
  ASSERT_TRUE(code.ok());
  EXPECT_FALSE(codes_.Redeem(""));
  EXPECT_FALSE(codes_.Redeem(code->code.substr(0, 32)));
  EXPECT_FALSE(codes_.Redeem(std::string(64, '0')));
  EXPECT_TRUE(codes_.Redeem(code->code));
}

TEST_F(SignInCodesTest, AnExpiredCodeIsRefusedAndForgotten) {
  auto code = codes_.Mint();
  ASSERT_TRUE(code.ok());
  clock_.Advance(absl::Minutes(15));
  EXPECT_FALSE(codes_.Redeem(code->code));
  // Even if the clock went back: it is gone.
  clock_.SetBack(absl::Minutes(1));
  EXPECT_FALSE(codes_.Redeem(code->code));
}

TEST_F(SignInCodesTest, OnlyTheNewestCodesAreKept) {
  auto oldest = codes_.Mint();
  ASSERT_TRUE(oldest.ok());
  for (size_t i = 0; i < SignInCodes::kMaxLive; ++i) {
    ASSERT_TRUE(codes_.Mint().ok());
  }
  EXPECT_FALSE(codes_.Redeem(oldest->code));
}

}  // namespace
}  // namespace inspector::auth
