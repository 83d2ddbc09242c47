// The Watch filters (EventsService::Matches) for the event kinds of their
// own: progress and resources/updated are chosen by kind and by server like
// the others, and are not messages.
#include <gtest/gtest.h>

#include "server/services/events_service.h"

namespace inspector::services {
namespace {

v1::Event Progress(const std::string& server_id) {
  v1::Event event;
  event.mutable_progress()->set_server_id(server_id);
  event.mutable_progress()->set_progress(1);
  return event;
}

v1::Event ResourceUpdated(const std::string& server_id) {
  v1::Event event;
  event.mutable_resource_updated()->set_server_id(server_id);
  event.mutable_resource_updated()->set_uri("file:///a");
  return event;
}

v1::Event Message(const std::string& server_id) {
  v1::Event event;
  event.mutable_message()->set_server_id(server_id);
  event.mutable_message()->set_method("notifications/progress");
  return event;
}

v1::Event OAuth(const std::string& server_id) {
  v1::Event event;
  event.mutable_oauth()->set_server_id(server_id);
  event.mutable_oauth()->mutable_transition()->set_to(v1::CLIENT_REGISTRATION);
  return event;
}

TEST(EventsFilterTest, OAuthFlowsAreAKindOfTheirOwnChosenByServer) {
  v1::WatchRequest oauth_only;
  oauth_only.add_kinds(v1::EVENT_KIND_OAUTH);
  EXPECT_TRUE(EventsService::Matches(oauth_only, "", OAuth("s1")));
  EXPECT_FALSE(EventsService::Matches(oauth_only, "", Progress("s1")));
  EXPECT_FALSE(EventsService::Matches(oauth_only, "", Message("s1")));
  v1::WatchRequest messages_only;
  messages_only.add_kinds(v1::EVENT_KIND_MESSAGE);
  EXPECT_FALSE(EventsService::Matches(messages_only, "", OAuth("s1")));
  EXPECT_TRUE(EventsService::Matches(oauth_only, "s1", OAuth("s1")));
  EXPECT_FALSE(EventsService::Matches(oauth_only, "s1", OAuth("s2")));
}

TEST(EventsFilterTest, ProgressAndResourceUpdatesAreKindsOfTheirOwn) {
  v1::WatchRequest progress_only;
  progress_only.add_kinds(v1::EVENT_KIND_PROGRESS);
  EXPECT_TRUE(EventsService::Matches(progress_only, "", Progress("s1")));
  EXPECT_FALSE(
      EventsService::Matches(progress_only, "", ResourceUpdated("s1")));
  EXPECT_FALSE(EventsService::Matches(progress_only, "", Message("s1")));

  v1::WatchRequest updates_only;
  updates_only.add_kinds(v1::EVENT_KIND_RESOURCE_UPDATED);
  EXPECT_TRUE(EventsService::Matches(updates_only, "", ResourceUpdated("s1")));
  EXPECT_FALSE(EventsService::Matches(updates_only, "", Progress("s1")));

  v1::WatchRequest messages_only;
  messages_only.add_kinds(v1::EVENT_KIND_MESSAGE);
  EXPECT_FALSE(EventsService::Matches(messages_only, "", Progress("s1")));
  EXPECT_FALSE(
      EventsService::Matches(messages_only, "", ResourceUpdated("s1")));
  EXPECT_TRUE(EventsService::Matches(messages_only, "", Message("s1")));

  // No kinds: everything.
  v1::WatchRequest all;
  EXPECT_TRUE(EventsService::Matches(all, "", Progress("s1")));
  EXPECT_TRUE(EventsService::Matches(all, "", ResourceUpdated("s1")));
}

TEST(EventsFilterTest, ProgressAndResourceUpdatesAreFilteredByServer) {
  v1::WatchRequest request;
  EXPECT_TRUE(EventsService::Matches(request, "s1", Progress("s1")));
  EXPECT_FALSE(EventsService::Matches(request, "s1", Progress("s2")));
  EXPECT_TRUE(EventsService::Matches(request, "s1", ResourceUpdated("s1")));
  EXPECT_FALSE(EventsService::Matches(request, "s1", ResourceUpdated("s2")));
}

}  // namespace
}  // namespace inspector::services
