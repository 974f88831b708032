// The conformance suite (store_conformance_test.cc instantiates it for every backend), on what
// access control keeps: API tokens, the owners of jobs and the audit log; and how the whole
// audit log is copied by `paceline store migrate`.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "store/copy_store.h"
#include "store/fault_injecting_store.h"
#include "store/memory_store.h"
#include "store/sqlite/sqlite_store.h"
#include "store/testing/store_conformance.h"

namespace paceline::store {
namespace {

using conformance::Audit;
using conformance::StoreConformance;
using conformance::Token;
using conformance::ValidJobSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The audit records `q` selects, failing the test on an error.
std::vector<records::AuditRecord> List(Store& s, const records::AuditQuery& q) {
  absl::StatusOr<std::vector<records::AuditRecord>> out = s.ListAudit(q);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : std::vector<records::AuditRecord>{};
}

std::vector<std::string> Targets(const std::vector<records::AuditRecord>& records) {
  std::vector<std::string> out;
  for (const records::AuditRecord& r : records) out.push_back(r.target);
  return out;
}

std::vector<int64_t> Seqs(const std::vector<records::AuditRecord>& records) {
  std::vector<int64_t> out;
  for (const records::AuditRecord& r : records) out.push_back(r.seq);
  return out;
}

TEST_P(StoreConformance, TokensRoundTripThroughLoadWithInfiniteTimesAndRevocation) {
  records::TokenRecord forever = Token("tok-b", "svc-ci");
  forever.expires_at = absl::InfiniteFuture();
  records::TokenRecord expiring = Token("tok-a", "alice");
  records::TokenRecord agent = Token("tok-c", "*");
  agent.group = "";
  agent.role = "agent";
  agent.scope = "*";
  records::WriteBatch b;
  b.put_tokens = {forever, expiring, agent};
  ASSERT_TRUE(store_->Commit(b).ok());
  EXPECT_THAT(MustLoad().tokens, ElementsAre(expiring, forever, agent));  // by id

  // Revoking keeps the row: the same token, put again with its revocation time.
  records::TokenRecord revoked = forever;
  revoked.revoked_at = absl::FromUnixMicros(3'000'000'456);
  records::WriteBatch revoke;
  revoke.put_tokens.push_back(revoked);
  ASSERT_TRUE(store_->Commit(revoke).ok());
  EXPECT_THAT(MustLoad().tokens, ElementsAre(expiring, revoked, agent));
  if (GetParam().durable) {
    store_.reset();
    store_ = GetParam().open(dir_);
    ASSERT_NE(store_, nullptr);
    EXPECT_THAT(MustLoad().tokens, ElementsAre(expiring, revoked, agent));
  }
}

TEST_P(StoreConformance, JobOwnersRoundTripThroughLoad) {
  records::JobRecord owned{JobId(1),
                           "/ads",
                           ValidJobSpec("etl", 1),
                           1,
                           records::JobGoal::kRun,
                           absl::FromUnixSeconds(10)};
  owned.owner = "alice";
  owned.owner_group = "ads-team";
  records::JobRecord anonymous{JobId(2),
                               "/ads",
                               ValidJobSpec("web", 2),
                               1,
                               records::JobGoal::kRun,
                               absl::FromUnixSeconds(20)};
  records::WriteBatch b;
  b.put_jobs = {owned, anonymous};
  ASSERT_TRUE(store_->Commit(b).ok());
  EXPECT_THAT(MustLoad().jobs, ElementsAre(owned, anonymous));
  owned.owner_group = "web-team";
  anonymous.owner = "bob";
  records::WriteBatch again;
  again.put_jobs = {owned, anonymous};
  ASSERT_TRUE(store_->Commit(again).ok());
  EXPECT_THAT(MustLoad().jobs, ElementsAre(owned, anonymous));
}

TEST_P(StoreConformance, AuditAppendAssignsGrowingSeqAcrossCommits) {
  records::WriteBatch one;
  one.audit = {Audit(10, "alice", "/ads", "job 1"), Audit(11, "", "", "job 2")};
  one.audit[0].seq = 99;  // ignored: the store numbers
  one.audit[1].seq = 5;
  ASSERT_TRUE(store_->Commit(one).ok());
  records::WriteBatch two, three;
  two.audit = {Audit(12, "bob", "/web", "job 3")};
  three.audit = {Audit(13, "bob", "/web", "job 4"), Audit(14, "alice", "/ads/x", "job 5")};
  ASSERT_TRUE(store_->CommitAll({&two, &three}).ok());
  std::vector<records::AuditRecord> all = List(*store_, {});
  EXPECT_THAT(Seqs(all), ElementsAre(5, 4, 3, 2, 1));
  EXPECT_THAT(Targets(all), ElementsAre("job 5", "job 4", "job 3", "job 2", "job 1"));
  ASSERT_EQ(all.size(), 5u);
  records::AuditRecord want = one.audit[1];
  want.seq = 2;
  EXPECT_EQ(all[3], want);  // every field comes back
  want = three.audit[1];
  want.seq = 5;
  EXPECT_EQ(all[0], want);
}

TEST_P(StoreConformance, ListAuditFiltersByUserPoolSubtreeTimeAndSeqNewestFirst) {
  records::WriteBatch b;
  b.audit = {Audit(100, "alice", "/ads", "a1"),     Audit(110, "bob", "/ads/x", "b1"),
             Audit(120, "alice", "/adsx", "a2"),    Audit(130, "", "", "anon"),
             Audit(140, "alice", "/ads/x/y", "a3"), Audit(150, "bob", "/web", "b2")};
  ASSERT_TRUE(store_->Commit(b).ok());
  auto targets = [&](records::AuditQuery q) { return Targets(List(*store_, q)); };
  EXPECT_THAT(targets({}), ElementsAre("b2", "a3", "anon", "a2", "b1", "a1"));
  EXPECT_THAT(targets({.user = "alice"}), ElementsAre("a3", "a2", "a1"));
  EXPECT_THAT(targets({.user = "carol"}), IsEmpty());
  // A pool holds the pools below it, not those whose name only starts the same.
  EXPECT_THAT(targets({.pool = "/ads"}), ElementsAre("a3", "b1", "a1"));
  EXPECT_THAT(targets({.pool = "/ads/x"}), ElementsAre("a3", "b1"));
  EXPECT_THAT(targets({.pool = "/adsx"}), ElementsAre("a2"));
  EXPECT_THAT(targets({.pool = "/"}), ElementsAre("b2", "a3", "a2", "b1", "a1"));
  EXPECT_THAT(targets({.since = absl::FromUnixSeconds(120)}),
              ElementsAre("b2", "a3", "anon", "a2"));
  EXPECT_THAT(targets({.before_seq = 4}), ElementsAre("a2", "b1", "a1"));
  EXPECT_THAT(targets({.limit = 2}), ElementsAre("b2", "a3"));
  EXPECT_THAT(targets({.user = "alice", .pool = "/ads", .limit = 1}), ElementsAre("a3"));
  EXPECT_THAT(targets({.user = "alice", .pool = "/ads", .before_seq = 5}), ElementsAre("a1"));
  EXPECT_THAT(targets({.user = "bob", .since = absl::FromUnixSeconds(111), .before_seq = 6}),
              IsEmpty());
}

TEST_P(StoreConformance, PruneAuditBeforeDeletesOnlyOlderRecordsAndSeqNeverRepeats) {
  records::WriteBatch b;
  b.audit = {Audit(100, "u", "/p", "t100"), Audit(200, "u", "/p", "t200"),
             Audit(300, "u", "/p", "t300")};
  ASSERT_TRUE(store_->Commit(b).ok());
  records::WriteBatch prune;
  prune.prune_audit_before = absl::FromUnixSeconds(200);
  ASSERT_TRUE(store_->Commit(prune).ok());
  EXPECT_THAT(Targets(List(*store_, {})), ElementsAre("t300", "t200"));
  // In one batch the pruning comes after the appends.
  records::WriteBatch both;
  both.audit = {Audit(50, "u", "/p", "t50"), Audit(400, "u", "/p", "t400")};
  both.prune_audit_before = absl::FromUnixSeconds(250);
  ASSERT_TRUE(store_->Commit(both).ok());
  std::vector<records::AuditRecord> left = List(*store_, {});
  EXPECT_THAT(Targets(left), ElementsAre("t400", "t300"));
  EXPECT_THAT(Seqs(left), ElementsAre(5, 3));
  // Once everything is pruned, numbering goes on from where it was.
  records::WriteBatch all;
  all.prune_audit_before = absl::FromUnixSeconds(1000);
  ASSERT_TRUE(store_->Commit(all).ok());
  EXPECT_THAT(List(*store_, {}), IsEmpty());
  records::WriteBatch next;
  next.audit = {Audit(500, "u", "/p", "t500")};
  ASSERT_TRUE(store_->Commit(next).ok());
  EXPECT_THAT(Seqs(List(*store_, {})), ElementsAre(6));
}

TEST_P(StoreConformance, AFailedCommitLeavesNeitherTokensNorAuditRecords) {
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());  // a token and an audit record
  records::StoreContents before = MustLoad();
  std::vector<records::AuditRecord> audit_before = List(*store_, {});
  ASSERT_EQ(audit_before.size(), 1u);
  FaultInjectingStore faulty(store_.get());
  faulty.FailNextCommits(1);
  records::WriteBatch b;
  records::TokenRecord revoked = before.tokens.at(0);
  revoked.revoked_at = absl::FromUnixSeconds(5000);
  b.put_tokens = {Token("tok-2", "bob"), revoked};
  b.audit = {Audit(1000, "bob", "/ads", "job 8")};
  b.prune_audit_before = absl::FromUnixSeconds(950);
  EXPECT_EQ(faulty.Commit(b).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(MustLoad().tokens, before.tokens);
  EXPECT_EQ(List(faulty, {}), audit_before);
  // The same batch commits later, whole.
  ASSERT_TRUE(faulty.Commit(b).ok());
  EXPECT_THAT(MustLoad().tokens, ElementsAre(revoked, Token("tok-2", "bob")));
  std::vector<records::AuditRecord> after = List(faulty, {});
  EXPECT_THAT(Targets(after), ElementsAre("job 8"));
  EXPECT_THAT(Seqs(after), ElementsAre(2));
}

TEST_P(StoreConformance, CopiesTokensAndTheWholeAuditLogInOrder) {
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());
  // More records than one page of the copy's reads, the oldest pruned: the source's numbers
  // start above 1, the copy's at 1, in the same order.
  constexpr int kRecords = 10'050;
  records::WriteBatch log;
  for (int i = 0; i < kRecords; ++i) {
    log.audit.push_back(
        Audit(1000 + i, i % 3 == 0 ? "bob" : "alice", "/ads", "job " + std::to_string(i)));
  }
  log.prune_audit_before = absl::FromUnixSeconds(1010);
  ASSERT_TRUE(store_->Commit(log).ok());
  MemoryStore copy;
  absl::StatusOr<CopyReport> r = CopyStore(*store_, copy);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tokens, 1u);
  EXPECT_EQ(r->audit, static_cast<uint64_t>(kRecords - 10));
  EXPECT_EQ(r->jobs, 1u);
  EXPECT_TRUE(CompareStores(*store_, copy).ok());
  EXPECT_EQ(copy.Load()->tokens, MustLoad().tokens);
  EXPECT_EQ(copy.Load()->jobs, MustLoad().jobs);  // with their owners
  std::vector<records::AuditRecord> newest = List(copy, {.limit = 2});
  EXPECT_THAT(Targets(newest), ElementsAre("job 10049", "job 10048"));
  EXPECT_THAT(Seqs(newest), ElementsAre(kRecords - 10, kRecords - 11));
  EXPECT_THAT(Targets(List(copy, {.before_seq = 2})), ElementsAre("job 10"));
  EXPECT_THAT(Targets(List(*store_, {.before_seq = 13})), ElementsAre("job 10"));  // seq 12

  // A store that holds only an audit record is not empty.
  MemoryStore audited;
  records::WriteBatch one;
  one.audit = {Audit(1, "root", "", "token tok-1")};
  ASSERT_TRUE(audited.Commit(one).ok());
  absl::StatusOr<CopyReport> refused = CopyStore(*store_, audited);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("not empty"));
  // A difference in the audit log or the tokens is named.
  ASSERT_TRUE(copy.Commit(one).ok());
  absl::Status diff = CompareStores(*store_, copy);
  EXPECT_EQ(diff.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(diff.message(), HasSubstr("audit"));
  MemoryStore other;
  ASSERT_TRUE(CopyStore(*store_, other).ok());
  records::WriteBatch token;
  token.put_tokens = {Token("tok-9", "carol")};
  ASSERT_TRUE(other.Commit(token).ok());
  absl::Status tokens_differ = CompareStores(*store_, other);
  EXPECT_EQ(tokens_differ.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(tokens_differ.message(), HasSubstr("tokens"));
}

// A failure in the middle of a transaction, after the tokens and some audit records were
// written, takes them all back.
TEST(SqliteStoreFaults, AFailureAmongTheAuditRecordsRollsBackTokensAndAudit) {
  std::string dir =
      (std::filesystem::temp_directory_path() / ("pl-sqlite-audit-" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(dir);
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  records::WriteBatch b;
  b.put_tokens = {Token("tok-1", "alice"), Token("tok-2", "bob")};
  for (int i = 0; i < 4; ++i) b.audit.push_back(Audit(i, "alice", "/a", std::to_string(i)));
  (*store)->FailAfterWritesForTesting(4);  // both tokens and two audit records, then a failure
  EXPECT_EQ((*store)->Commit(b).code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE((*store)->Load()->tokens.empty());
  EXPECT_THAT(List(**store, {}), IsEmpty());
  ASSERT_TRUE((*store)->Commit(b).ok());
  EXPECT_EQ((*store)->Load()->tokens.size(), 2u);
  EXPECT_THAT(Seqs(List(**store, {})), ElementsAre(4, 3, 2, 1));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace paceline::store
