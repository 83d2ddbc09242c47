// Unit tests of the web UI's one-time sign-in codes, on a fake clock.
#include "server/auth/sign_in_codes.h"

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace inspector::auth {
namespace {

class SignInCodesTest : public ::testing::Test {
 protected:
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  SignInCodes codes_{absl::Minutes(15), [this] { return now_; }};
};

TEST_F(SignInCodesTest, ACodeIsHexAndWorksOnce) {
  auto code = codes_.Mint();
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(code->code.size(), 64u);
  EXPECT_EQ(code->code.find_first_not_of("0123456789abcdef"),
            std::string::npos);
  EXPECT_EQ(code->expires_at, now_ + absl::Minutes(15));
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
  now_ += absl::Minutes(15);
  EXPECT_FALSE(codes_.Redeem(code->code));
  now_ -= absl::Minutes(1);  // Even if the clock went back: it is gone.
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
