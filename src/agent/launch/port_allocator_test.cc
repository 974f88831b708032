#include "agent/launch/port_allocator.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <set>

#include "agent/file_util.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

TEST(PortAllocatorTest, NeverHandsOutAPortTwiceUntilReleased) {
  PortAllocator ports(41000, 41009, /*probe_bind=*/false);
  std::set<uint16_t> seen;
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<uint16_t> p = ports.Allocate();
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE(seen.insert(*p).second) << *p;
    EXPECT_GE(*p, 41000);
    EXPECT_LE(*p, 41009);
  }
  absl::StatusOr<uint16_t> none = ports.Allocate();
  EXPECT_EQ(none.status().code(), absl::StatusCode::kResourceExhausted);
  ports.Release(41003);
  EXPECT_EQ(ports.Allocate().value(), 41003);
}

TEST(PortAllocatorTest, ReleasedPortsAreReusedLast) {
  PortAllocator ports(41000, 41004, false);
  uint16_t first = ports.Allocate().value();
  ports.Release(first);
  for (int i = 0; i < 4; ++i) EXPECT_NE(ports.Allocate().value(), first);
  EXPECT_EQ(ports.Allocate().value(), first);
}

TEST(PortAllocatorTest, ReserveChecksRangeAndUse) {
  PortAllocator ports(41000, 41004, false);
  EXPECT_TRUE(ports.Reserve(41002).ok());
  EXPECT_EQ(ports.Reserve(41002).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ports.Reserve(40999).code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(ports.IsUsed(41002));
  EXPECT_EQ(ports.used_count(), 1u);
  for (int i = 0; i < 4; ++i) EXPECT_NE(ports.Allocate().value(), 41002);
}

TEST(PortAllocatorTest, SkipsPortsOtherProgramsListenOn) {
  UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(s.get(), 1), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  uint16_t busy = ntohs(addr.sin_port);
  EXPECT_FALSE(TcpPortBindable(busy));
  PortAllocator ports(busy, busy, /*probe_bind=*/true);
  EXPECT_EQ(ports.Allocate().status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(PortsHookTest, AllocatesEachNamedPortAndExportsIt) {
  PortAllocator ports(41000, 41009, false);
  PortsHook hook(ports);
  RunContext ctx;
  ctx.request.spec.ports = {"http", "admin-api"};
  ctx.request.ports = {{"admin-api", 41007}};
  ASSERT_TRUE(hook.Prepare(ctx).ok());
  EXPECT_EQ(ctx.ports.at("admin-api"), 41007);
  EXPECT_EQ(ctx.env.at("PACELINE_PORT_ADMIN_API"), "41007");
  EXPECT_EQ(ctx.env.at("PACELINE_PORT_HTTP"), std::to_string(ctx.ports.at("http")));
  EXPECT_EQ(ports.used_count(), 2u);

  RunContext other;
  other.request.spec.ports = {"x"};
  other.request.ports = {{"x", 41007}};  // taken
  EXPECT_EQ(hook.Prepare(other).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ports.used_count(), 2u);

  hook.Cleanup(ctx, CleanupKind::kFinished);
  EXPECT_EQ(ports.used_count(), 0u);
  ctx.ports = {{"http", 41001}};
  ASSERT_TRUE(hook.Recover(ctx).ok());
  EXPECT_TRUE(ports.IsUsed(41001));
}

}  // namespace
}  // namespace paceline::agent
