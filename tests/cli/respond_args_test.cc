#include "clients/cli/respond_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clients/cli/cli_errors.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/json_values.h"

namespace inspector::cli {
namespace respond_args_test {

using nlohmann::json;
using ::testing::HasSubstr;

int ExitCode(const absl::Status& status) {
  return DescribeError(status, ErrorContext()).exit_code;
}

v1::PendingRequest Item(v1::PendingKind kind, const std::string& method,
                        const json& params) {
  v1::PendingRequest item;
  item.set_id("a1b2c3d4");
  item.set_kind(kind);
  item.set_method(method);
  *item.mutable_params() = *JsonToStruct(params, "params");
  return item;
}

v1::PendingRequest Elicitation() {
  return Item(v1::ELICITATION, "elicitation/create",
              {{"message", "Who?"},
               {"requestedSchema",
                {{"type", "object"},
                 {"properties",
                  {{"name", {{"type", "string"}}},
                   {"age", {{"type", "integer"}, {"default", 30}}},
                   {"color", {{"type", "string"}, {"enum", {"red", "blue"}}}}}},
                 {"required", {"name"}}}}});
}

v1::PendingRequest Sampling() {
  return Item(
      v1::SAMPLING, "sampling/createMessage",
      {{"messages",
        {{{"role", "user"}, {"content", {{"type", "text"}, {"text", "Hi"}}}}}},
       {"maxTokens", 5}});
}

TEST(ChooseAnswerModeTest, OneAnswerOption) {
  RespondOptions options;
  options.decline = true;
  EXPECT_EQ(*ChooseAnswerMode(options, false), AnswerMode::kDecline);
  options = RespondOptions();
  options.cancel = true;
  EXPECT_EQ(*ChooseAnswerMode(options, true), AnswerMode::kCancel);
  options = RespondOptions();
  options.reject = "no";
  EXPECT_EQ(*ChooseAnswerMode(options, false), AnswerMode::kReject);
  options = RespondOptions();
  options.text = "hi";
  options.model = "m";
  EXPECT_EQ(*ChooseAnswerMode(options, false), AnswerMode::kText);
  options = RespondOptions();
  options.json = "{}";
  options.accept_defaults = true;
  EXPECT_EQ(*ChooseAnswerMode(options, false), AnswerMode::kJson);
  options = RespondOptions();
  options.fields = {"a=1"};
  options.accept_defaults = true;
  EXPECT_EQ(*ChooseAnswerMode(options, false), AnswerMode::kFields);
  options = RespondOptions();
  options.accept_defaults = true;
  EXPECT_EQ(*ChooseAnswerMode(options, true), AnswerMode::kFields);
}

TEST(ChooseAnswerModeTest, InteractiveOnlyOnATerminalOrWhenAsked) {
  RespondOptions options;
  EXPECT_EQ(*ChooseAnswerMode(options, true), AnswerMode::kInteractive);
  absl::StatusOr<AnswerMode> none = ChooseAnswerMode(options, false);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(ExitCode(none.status()), kExitUsage);
  EXPECT_THAT(std::string(none.status().message()),
              HasSubstr("stdin is not a terminal"));
  options.interactive = true;
  EXPECT_EQ(*ChooseAnswerMode(options, false), AnswerMode::kInteractive);
  options.model = "m";
  EXPECT_EQ(*ChooseAnswerMode(options, false), AnswerMode::kInteractive);
}

TEST(ChooseAnswerModeTest, ContradictionsAreUsageErrors) {
  std::vector<RespondOptions> bad(6);
  bad[0].decline = true;
  bad[0].cancel = true;
  bad[1].json = "{}";
  bad[1].fields = {"a=1"};
  bad[2].text = "x";
  bad[2].reject = "r";
  bad[3].accept_defaults = true;
  bad[3].decline = true;
  bad[4].interactive = true;
  bad[4].fields = {"a=1"};
  bad[5].decline = true;
  bad[5].model = "m";
  for (size_t i = 0; i < bad.size(); ++i) {
    absl::StatusOr<AnswerMode> mode = ChooseAnswerMode(bad[i], true);
    ASSERT_FALSE(mode.ok()) << i;
    EXPECT_EQ(ExitCode(mode.status()), kExitUsage) << i;
  }
  absl::StatusOr<AnswerMode> both = ChooseAnswerMode(bad[0], true);
  EXPECT_THAT(std::string(both.status().message()),
              HasSubstr("--decline and --cancel"));
}

TEST(BuildAnswerTest, DeclineCancelReject) {
  RespondOptions options;
  v1::PendingRequest item = Elicitation();
  absl::StatusOr<Answer> answer =
      BuildAnswer(AnswerMode::kDecline, options, &item);
  ASSERT_TRUE(answer.ok());
  EXPECT_TRUE(answer->reject);
  EXPECT_EQ(answer->action, v1::REJECT_ACTION_DECLINE);
  answer = BuildAnswer(AnswerMode::kCancel, options, nullptr);
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->action, v1::REJECT_ACTION_CANCEL);
  options.reject = "busy";
  v1::PendingRequest sampling = Sampling();
  answer = BuildAnswer(AnswerMode::kReject, options, &sampling);
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->action, v1::REJECT_ACTION_ERROR);
  EXPECT_EQ(answer->reason, "busy");
  // Decline is for elicitations.
  answer = BuildAnswer(AnswerMode::kDecline, RespondOptions(), &sampling);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(ExitCode(answer.status()), kExitUsage);
  EXPECT_THAT(std::string(answer.status().message()),
              HasSubstr("a sampling request"));
}

TEST(BuildAnswerTest, FieldsAreTypedAndChecked) {
  v1::PendingRequest item = Elicitation();
  RespondOptions options;
  options.fields = {"name=007", "age=41", "color=2"};
  absl::StatusOr<Answer> answer =
      BuildAnswer(AnswerMode::kFields, options, &item);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_FALSE(answer->reject);
  EXPECT_FALSE(answer->apply_defaults);
  EXPECT_EQ(
      answer->result,
      json({{"action", "accept"},
            {"content", {{"name", "007"}, {"age", 41}, {"color", "blue"}}}}));

  options.fields = {"name=Ada", "nickname=x"};
  answer = BuildAnswer(AnswerMode::kFields, options, &item);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(ExitCode(answer.status()), kExitInvalidInput);
  EXPECT_THAT(std::string(answer.status().message()),
              HasSubstr("\"nickname\" is not in the form"));
  EXPECT_THAT(DescribeError(answer.status(), ErrorContext()).hint,
              HasSubstr("nothing was sent"));

  options.fields = {"age=old"};
  answer = BuildAnswer(AnswerMode::kFields, options, &item);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(ExitCode(answer.status()), kExitInvalidInput);
  EXPECT_THAT(DescribeError(answer.status(), ErrorContext()).hint,
              HasSubstr("nothing was sent"));

  options.fields = {"age=3"};  // name is required
  answer = BuildAnswer(AnswerMode::kFields, options, &item);
  ASSERT_FALSE(answer.ok());
  EXPECT_THAT(std::string(answer.status().message()), HasSubstr("(required)"));
}

TEST(BuildAnswerTest, AcceptDefaults) {
  v1::PendingRequest item = Elicitation();
  RespondOptions options;
  options.accept_defaults = true;
  options.fields = {"name=Ada"};
  absl::StatusOr<Answer> answer =
      BuildAnswer(AnswerMode::kFields, options, &item);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->apply_defaults);
  EXPECT_EQ(answer->result["content"], json({{"name", "Ada"}, {"age", 30}}));
  // Without a value for the required name, defaults are not enough.
  options.fields.clear();
  answer = BuildAnswer(AnswerMode::kFields, options, &item);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(ExitCode(answer.status()), kExitInvalidInput);
  // Unknown items are left to the daemon.
  answer = BuildAnswer(AnswerMode::kFields, options, nullptr);
  ASSERT_TRUE(answer.ok());
  EXPECT_TRUE(answer->apply_defaults);
  EXPECT_EQ(answer->result,
            json({{"action", "accept"}, {"content", json::object()}}));
}

TEST(BuildAnswerTest, FieldsWithoutAKnownRequestAreSentAsCallArguments) {
  RespondOptions options;
  options.fields = {"n=3", "s=text"};
  absl::StatusOr<Answer> answer =
      BuildAnswer(AnswerMode::kFields, options, nullptr);
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->result["content"], json({{"n", 3}, {"s", "text"}}));
}

TEST(BuildAnswerTest, JsonIsCheckedByKind) {
  v1::PendingRequest item = Elicitation();
  RespondOptions options;
  options.json = R"({"name": "Ada", "age": 30.0})";
  absl::StatusOr<Answer> answer =
      BuildAnswer(AnswerMode::kJson, options, &item);
  ASSERT_TRUE(answer.ok()) << answer.status();
  // A bare content object is an accept; 30.0 goes out as 30.
  EXPECT_EQ(answer->result.dump(),
            R"({"action":"accept","content":{"age":30,"name":"Ada"}})");

  options.json = R"({"action": "accept", "content": {"age": 30}})";
  EXPECT_EQ(ExitCode(BuildAnswer(AnswerMode::kJson, options, &item).status()),
            kExitInvalidInput);
  options.json = "{nope";
  EXPECT_EQ(ExitCode(BuildAnswer(AnswerMode::kJson, options, &item).status()),
            kExitUsage);
  options.json = "[1]";
  EXPECT_EQ(ExitCode(BuildAnswer(AnswerMode::kJson, options, &item).status()),
            kExitUsage);

  v1::PendingRequest sampling = Sampling();
  options.json = R"({"role": "assistant", "content": {"type": "text"}})";
  absl::StatusOr<Answer> bad =
      BuildAnswer(AnswerMode::kJson, options, &sampling);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(ExitCode(bad.status()), kExitInvalidInput);
  // Unknown requests: sent as given.
  answer = BuildAnswer(AnswerMode::kJson, options, nullptr);
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->result["role"], "assistant");
}

TEST(BuildAnswerTest, TextForSampling) {
  v1::PendingRequest sampling = Sampling();
  RespondOptions options;
  options.text = "Hello";
  absl::StatusOr<Answer> answer =
      BuildAnswer(AnswerMode::kText, options, &sampling);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->result["model"], "inspectorctl");
  EXPECT_EQ(answer->result["content"]["text"], "Hello");
  options.model = "gpt-test";
  answer = BuildAnswer(AnswerMode::kText, options, &sampling);
  EXPECT_EQ(answer->result["model"], "gpt-test");
  v1::PendingRequest elicitation = Elicitation();
  EXPECT_EQ(
      ExitCode(BuildAnswer(AnswerMode::kText, options, &elicitation).status()),
      kExitUsage);
}

TEST(AnswerFromElicitResultTest, DeclineAndCancelAreRejects) {
  Answer decline = AnswerFromElicitResult({{"action", "decline"}});
  EXPECT_TRUE(decline.reject);
  EXPECT_EQ(decline.action, v1::REJECT_ACTION_DECLINE);
  Answer cancel = AnswerFromElicitResult({{"action", "cancel"}});
  EXPECT_EQ(cancel.action, v1::REJECT_ACTION_CANCEL);
  json accepted = {{"action", "accept"}, {"content", {{"a", 1}}}};
  Answer accept = AnswerFromElicitResult(accepted);
  EXPECT_FALSE(accept.reject);
  EXPECT_EQ(accept.result, accepted);
}

}  // namespace respond_args_test
}  // namespace inspector::cli
