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

TEST(EventLoop, AReadRunsAheadOfTheQueuedBacklogBetweenTwoClosures) {
  EventLoop loop(absl::Hours(1), [] {});
  loop.Start();
  absl::Notification gate_running, release_gate;
  std::vector<int> order;
  loop.Post([&] {
    gate_running.Notify();
    release_gate.WaitForNotification();
  });
  gate_running.WaitForNotification();
  for (int i = 0; i < 100; ++i) loop.Post([&, i] { order.push_back(i); });
  size_t seen = 999;
  std::thread reader([&] { loop.Read([&] { seen = order.size(); }); });
  while (!loop.ReadWaiting()) std::this_thread::yield();
  release_gate.Notify();
  reader.join();
  EXPECT_EQ(seen, 0u);  // the 100 closures queued before it had not run
  EXPECT_EQ(loop.Call<int>([&] { return static_cast<int>(order.size()); }), 100);
  loop.Stop();
}

TEST(EventLoop, AReadIsAnsweredWhileTheLoopIsIdle) {
  EventLoop loop(absl::Hours(1), [] {});
  loop.Start();
  int value = 0;
  loop.Read([&] { value = 7; });
  EXPECT_EQ(value, 7);
  loop.Stop();
}

}  // namespace
}  // namespace paceline::masterd
