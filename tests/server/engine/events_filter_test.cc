// The Watch filters (EventsService::Matches) for the event kinds of their
// own: progress, resources/updated and OAuth flows are chosen by kind and
// by server like the others, and are not messages.
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

// A filter of one kind passes the events of that kind only; one of no kind
// passes every event.
TEST(EventsFilterTest, ProgressResourceUpdatesAndOAuthAreKindsOfTheirOwn) {
  struct Case {
    v1::EventKind kind;  // UNSPECIFIED: no kinds in the filter
    bool progress, resource_updated, message, oauth;
  };
  const Case cases[] = {
      {v1::EVENT_KIND_PROGRESS, true, false, false, false},
      {v1::EVENT_KIND_RESOURCE_UPDATED, false, true, false, false},
      {v1::EVENT_KIND_MESSAGE, false, false, true, false},
      {v1::EVENT_KIND_OAUTH, false, false, false, true},
      {v1::EVENT_KIND_UNSPECIFIED, true, true, true, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(v1::EventKind_Name(c.kind));
    v1::WatchRequest request;
    if (c.kind != v1::EVENT_KIND_UNSPECIFIED) request.add_kinds(c.kind);
    EXPECT_EQ(EventsService::Matches(request, "", Progress("s1")), c.progress);
    EXPECT_EQ(EventsService::Matches(request, "", ResourceUpdated("s1")),
              c.resource_updated);
    EXPECT_EQ(EventsService::Matches(request, "", Message("s1")), c.message);
    EXPECT_EQ(EventsService::Matches(request, "", OAuth("s1")), c.oauth);
  }
}

TEST(EventsFilterTest, OAuthFlowsAreChosenByServer) {
  v1::WatchRequest oauth_only;
  oauth_only.add_kinds(v1::EVENT_KIND_OAUTH);
  EXPECT_TRUE(EventsService::Matches(oauth_only, "s1", OAuth("s1")));
  EXPECT_FALSE(EventsService::Matches(oauth_only, "s1", OAuth("s2")));
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
