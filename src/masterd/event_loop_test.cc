#include "masterd/event_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace paceline::masterd {
namespace {

TEST(EventLoop, RunsPostedWorkInOrderOnOneThread) {
  std::atomic<int> ticks{0};
  EventLoop loop(absl::Milliseconds(5), [&] { ++ticks; });
  loop.Start();
  std::vector<int> order;
  std::thread::id loop_thread;
  for (int i = 0; i < 100; ++i) {
    loop.Post([&, i] {
      order.push_back(i);
      loop_thread = std::this_thread::get_id();
    });
  }
  int last = loop.Call<int>([&] { return static_cast<int>(order.size()); });
  EXPECT_EQ(last, 100);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  EXPECT_NE(loop_thread, std::this_thread::get_id());
  // Ticks keep coming while the loop runs.
  int before = ticks.load();
  while (ticks.load() < before + 2) std::this_thread::yield();
  loop.Stop();
}

TEST(EventLoop, StopRunsWhatIsQueued) {
  EventLoop loop(absl::Hours(1), [] {});
  loop.Start();
  std::atomic<int> ran{0};
  for (int i = 0; i < 10; ++i) loop.Post([&] { ++ran; });
  loop.Stop();
  EXPECT_EQ(ran.load(), 10);
}

}  // namespace
}  // namespace paceline::masterd
