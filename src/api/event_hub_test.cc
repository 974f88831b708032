#include "api/event_hub.h"

#include <thread>

#include <gtest/gtest.h>

namespace paceline::api {
namespace {

v1::WatchEvent TaskEventOf(uint64_t job, uint32_t instance) {
  v1::WatchEvent e;
  e.set_job_id(job);
  e.mutable_task()->set_instance(instance);
  return e;
}

TEST(EventHub, DeliversOnlyTheWatchedJob) {
  EventHub hub;
  EXPECT_FALSE(hub.watching());
  auto all = hub.Subscribe(0);
  auto one = hub.Subscribe(7);
  EXPECT_TRUE(hub.watching());
  hub.Publish({TaskEventOf(7, 0), TaskEventOf(8, 1), TaskEventOf(7, 2)});
  EXPECT_EQ(all->Next(absl::ZeroDuration()).size(), 3u);
  std::vector<v1::WatchEvent> got = one->Next(absl::ZeroDuration());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].task().instance(), 0u);
  EXPECT_EQ(got[1].task().instance(), 2u);
  hub.Unsubscribe(all.get());
  hub.Unsubscribe(one.get());
  EXPECT_FALSE(hub.watching());
}

TEST(EventHub, NextWaitsForAnEvent) {
  EventHub hub;
  auto w = hub.Subscribe(0);
  EXPECT_TRUE(w->Next(absl::Milliseconds(1)).empty());
  std::thread publisher([&] { hub.Publish({TaskEventOf(1, 0)}); });
  std::vector<v1::WatchEvent> got;
  while (got.empty()) got = w->Next(absl::Seconds(10));
  publisher.join();
  EXPECT_EQ(got.size(), 1u);
}

TEST(EventHub, ASlowWatcherIsClosedAndKeepsWhatItHad) {
  EventHub hub;
  auto w = hub.Subscribe(0, /*capacity=*/2);
  hub.Publish({TaskEventOf(1, 0), TaskEventOf(1, 1), TaskEventOf(1, 2)});
  EXPECT_EQ(w->status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(w->status().message().find("watch again"), std::string::npos);
  EXPECT_EQ(w->Next(absl::ZeroDuration()).size(), 2u);
  hub.Publish({TaskEventOf(1, 3)});  // nothing more once closed
  EXPECT_TRUE(w->Next(absl::ZeroDuration()).empty());
}

TEST(EventHub, CloseAllWakesWatchers) {
  EventHub hub;
  auto w = hub.Subscribe(0);
  std::thread closer([&] { hub.CloseAll(absl::UnavailableError("stopping")); });
  while (w->status().ok()) w->Next(absl::Seconds(10));
  closer.join();
  EXPECT_EQ(w->status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace paceline::api
