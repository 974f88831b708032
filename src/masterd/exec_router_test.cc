// ExecRouter: sessions opened on a link, outputs routed by session and link, the end of a
// session by exit, by the API side, and by the loss of the link.

#include "masterd/exec_router.h"

#include <vector>

#include "gtest/gtest.h"

namespace paceline::masterd {
namespace {

class FakeLink final : public api::AgentLink {
 public:
  explicit FakeLink(std::string host) : host_(std::move(host)) {}
  const std::string& host() const override { return host_; }
  const std::string& address() const override { return address_; }
  void Send(v1::MasterMessage msg) override {
    if (!closed_) sent.push_back(std::move(msg));
  }
  void Close() override { closed_ = true; }
  bool closed() const override { return closed_; }
  void Abort() override { closed_ = true; }
  std::vector<v1::MasterMessage> sent;

 private:
  std::string host_, address_;
  bool closed_ = false;
};

struct Got {
  std::vector<absl::StatusOr<v1::ExecOutput>> outputs;
  api::ExecSink Sink() {
    return [this](absl::StatusOr<v1::ExecOutput> out) { outputs.push_back(std::move(out)); };
  }
};

v1::ExecOutput Output(uint64_t session, const std::string& out) {
  v1::ExecOutput o;
  o.set_session(session);
  o.set_stdout(out);
  return o;
}

TEST(ExecRouterTest, AStartGoesToTheLinkAndOutputsComeBackByTheirSession) {
  ExecRouter router;
  auto link = std::make_shared<FakeLink>("h1");
  Got a, b;
  v1::ExecStart start;
  start.add_argv("true");
  auto ca = router.Open(link, start, a.Sink());
  auto cb = router.Open(link, start, b.Sink());
  ASSERT_TRUE(ca.ok() && cb.ok());
  ASSERT_EQ(link->sent.size(), 2u);
  const uint64_t ida = link->sent[0].exec_start().session();
  const uint64_t idb = link->sent[1].exec_start().session();
  EXPECT_NE(ida, idb);
  EXPECT_EQ(link->sent[0].exec_start().argv(0), "true");

  router.Deliver(link.get(), Output(idb, "to b"));
  router.Deliver(link.get(), Output(ida, "to a"));
  ASSERT_EQ(a.outputs.size(), 1u);
  EXPECT_EQ(a.outputs[0]->stdout(), "to a");
  ASSERT_EQ(b.outputs.size(), 1u);
  EXPECT_EQ(b.outputs[0]->stdout(), "to b");

  // Another link's output for the session is not the agent's that runs it: dropped.
  FakeLink other("h2");
  router.Deliver(&other, Output(ida, "spoofed"));
  EXPECT_EQ(a.outputs.size(), 1u);

  // Input is stamped with the session.
  v1::ExecInput in;
  in.set_stdin("x");
  EXPECT_TRUE((*ca)->Send(in));
  EXPECT_EQ(link->sent.back().exec_input().session(), ida);
  EXPECT_EQ(link->sent.back().exec_input().stdin(), "x");
}

TEST(ExecRouterTest, AnExitEndsTheSessionWithoutACancel) {
  ExecRouter router;
  auto link = std::make_shared<FakeLink>("h1");
  Got a;
  auto ca = router.Open(link, v1::ExecStart(), a.Sink());
  const uint64_t id = link->sent[0].exec_start().session();
  v1::ExecOutput exit = Output(id, "");
  exit.set_exited(true);
  router.Deliver(link.get(), exit);
  EXPECT_EQ(router.open_sessions(), 0u);
  router.Deliver(link.get(), Output(id, "late"));  // nothing after the exit
  EXPECT_EQ(a.outputs.size(), 1u);
  ca->reset();
  EXPECT_EQ(link->sent.size(), 1u);  // no cancel for a session the agent ended
}

TEST(ExecRouterTest, DroppingTheChannelCancelsTheCommandAtTheAgent) {
  ExecRouter router;
  auto link = std::make_shared<FakeLink>("h1");
  Got a;
  auto ca = router.Open(link, v1::ExecStart(), a.Sink());
  const uint64_t id = link->sent[0].exec_start().session();
  ca->reset();
  ASSERT_EQ(link->sent.size(), 2u);
  EXPECT_TRUE(link->sent[1].exec_input().cancel());
  EXPECT_EQ(link->sent[1].exec_input().session(), id);
  EXPECT_EQ(router.open_sessions(), 0u);
}

TEST(ExecRouterTest, TheLossOfTheLinkEndsItsSessionsOnly) {
  ExecRouter router;
  auto l1 = std::make_shared<FakeLink>("h1");
  auto l2 = std::make_shared<FakeLink>("h2");
  Got a, b;
  auto ca = router.Open(l1, v1::ExecStart(), a.Sink());
  auto cb = router.Open(l2, v1::ExecStart(), b.Sink());
  l1->Close();
  router.LinkGone(l1.get());
  ASSERT_EQ(a.outputs.size(), 1u);
  EXPECT_EQ(a.outputs[0].status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(b.outputs.empty());
  EXPECT_EQ(router.open_sessions(), 1u);
  EXPECT_FALSE((*ca)->Send(v1::ExecInput()));  // the link is closed

  // A closed link takes no new session.
  EXPECT_EQ(router.Open(l1, v1::ExecStart(), a.Sink()).status().code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace paceline::masterd
