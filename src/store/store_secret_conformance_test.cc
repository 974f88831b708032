// The conformance suite (store_conformance_test.cc instantiates it for every backend), on the
// secrets of pools: put, replaced and deleted by path, loaded by path, kept across a reopen,
// all or nothing with their commit, and copied by `paceline store migrate`.

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

using conformance::Secret;
using conformance::StoreConformance;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> Paths(const std::vector<records::SecretRecord>& secrets) {
  std::vector<std::string> out;
  for (const records::SecretRecord& r : secrets) out.push_back(r.path);
  return out;
}

TEST_P(StoreConformance, SecretsLoadBackEqualSortedByPath) {
  records::SecretRecord web = Secret("/web/api-key", "0123456789abcdef", "k2");
  records::SecretRecord root = Secret("/db-password", "ffee");
  records::SecretRecord ads = Secret("/ads/db-password", "00aa11bb");
  records::SecretRecord below = Secret("/ads/etl/token", "c0ffee");
  records::SecretRecord sibling = Secret("/ads-x/db-password", "beef");
  records::WriteBatch b;
  b.put_secrets = {web, root, ads, below, sibling};
  ASSERT_TRUE(store_->Commit(b).ok());
  EXPECT_THAT(MustLoad().secrets, ElementsAre(sibling, ads, below, root, web));
}

TEST_P(StoreConformance, PuttingASecretAgainReplacesItByPath) {
  records::SecretRecord ads = Secret("/ads/db-password", "00aa11bb");
  records::SecretRecord web = Secret("/web/api-key", "0123");
  records::WriteBatch b;
  b.put_secrets = {ads, web};
  ASSERT_TRUE(store_->Commit(b).ok());
  // Sealed again under another key, by another user, later; the other secret stays as it was.
  records::SecretRecord rotated = Secret("/ads/db-password", "99887766554433221100", "k2");
  rotated.created_by = "bob";
  rotated.updated_at = absl::FromUnixMicros(1'700'000'000'123'456);
  records::WriteBatch again;
  again.put_secrets = {rotated};
  ASSERT_TRUE(store_->Commit(again).ok());
  EXPECT_THAT(MustLoad().secrets, ElementsAre(rotated, web));
}

TEST_P(StoreConformance, DeletedSecretsAreGoneAndDeletingAnAbsentPathChangesNothing) {
  records::SecretRecord a = Secret("/ads/a", "aa");
  records::SecretRecord b = Secret("/ads/b", "bb");
  records::SecretRecord c = Secret("/ads/c", "cc");
  records::WriteBatch put;
  put.put_secrets = {a, b, c};
  ASSERT_TRUE(store_->Commit(put).ok());
  records::WriteBatch del;
  del.delete_secrets = {"/ads/b"};
  ASSERT_TRUE(store_->Commit(del).ok());
  EXPECT_THAT(MustLoad().secrets, ElementsAre(a, c));
  // Absent paths, also one that only starts like a present one, are ignored.
  records::WriteBatch absent;
  absent.delete_secrets = {"/ads/b", "/ads", "/ads/a/x", "/nowhere"};
  ASSERT_TRUE(store_->Commit(absent).ok());
  EXPECT_THAT(MustLoad().secrets, ElementsAre(a, c));
  // In one batch the deletions come before the puts: a secret deleted and put is there.
  records::SecretRecord a2 = Secret("/ads/a", "a2a2");
  records::WriteBatch both;
  both.delete_secrets = {"/ads/a", "/ads/c"};
  both.put_secrets = {a2};
  ASSERT_TRUE(store_->Commit(both).ok());
  EXPECT_THAT(MustLoad().secrets, ElementsAre(a2));
  // Batches of one commit apply in order: put by the first, deleted by the second.
  records::WriteBatch first, second;
  first.put_secrets = {b, c};
  second.delete_secrets = {"/ads/b"};
  ASSERT_TRUE(store_->CommitAll({&first, &second}).ok());
  EXPECT_THAT(MustLoad().secrets, ElementsAre(a2, c));
  records::WriteBatch all;
  all.delete_secrets = {"/ads/a", "/ads/c"};
  ASSERT_TRUE(store_->Commit(all).ok());
  EXPECT_THAT(MustLoad().secrets, IsEmpty());
}

TEST_P(StoreConformance, SecretsSurviveReopenWhenDurable) {
  if (!GetParam().durable) GTEST_SKIP() << GetParam().name << " is not durable by design";
  records::SecretRecord kept = Secret("/ads/kept", "0a0b");
  records::SecretRecord replaced = Secret("/ads/replaced", "1a1b");
  records::WriteBatch b;
  b.put_secrets = {kept, replaced, Secret("/ads/deleted", "2a2b")};
  ASSERT_TRUE(store_->Commit(b).ok());
  replaced.sealed = "3a3b3c";
  replaced.key_id = "k2";
  records::WriteBatch change;
  change.delete_secrets = {"/ads/deleted"};
  change.put_secrets = {replaced};
  ASSERT_TRUE(store_->Commit(change).ok());
  store_.reset();
  store_ = GetParam().open(dir_);
  ASSERT_NE(store_, nullptr);
  EXPECT_THAT(MustLoad().secrets, ElementsAre(kept, replaced));
}

TEST_P(StoreConformance, AFailedCommitLeavesNoSecretAndDeletesNone) {
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());  // one secret
  records::StoreContents before = MustLoad();
  ASSERT_EQ(before.secrets.size(), 1u);
  FaultInjectingStore faulty(store_.get());
  faulty.FailNextCommits(1);
  records::WriteBatch b;
  b.delete_secrets = {before.secrets[0].path};
  b.put_secrets = {Secret("/web/api-key", "abcd"), Secret("/web/other", "ef01")};
  EXPECT_EQ(faulty.Commit(b).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(MustLoad().secrets, before.secrets);
  // The same batch commits later, whole.
  ASSERT_TRUE(faulty.Commit(b).ok());
  EXPECT_THAT(Paths(MustLoad().secrets), ElementsAre("/web/api-key", "/web/other"));
}

TEST_P(StoreConformance, CopiesSecretsAndNamesADifferenceInThem) {
  ASSERT_TRUE(store_->Commit(FullBatch()).ok());
  records::WriteBatch more;
  more.put_secrets = {Secret("/web/api-key", "abcd", "k2"), Secret("/db-password", "ef01")};
  ASSERT_TRUE(store_->Commit(more).ok());
  MemoryStore copy;
  absl::StatusOr<CopyReport> r = CopyStore(*store_, copy);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->secrets, 3u);
  EXPECT_EQ(r->tokens, 1u);
  EXPECT_TRUE(CompareStores(*store_, copy).ok());
  EXPECT_EQ(copy.Load()->secrets, MustLoad().secrets);  // still sealed, as they were
  EXPECT_THAT(Paths(copy.Load()->secrets),
              ElementsAre("/ads/db-password", "/db-password", "/web/api-key"));

  // A store that holds only a secret is not empty.
  MemoryStore holds_a_secret;
  records::WriteBatch one;
  one.put_secrets = {Secret("/x/y", "00")};
  ASSERT_TRUE(holds_a_secret.Commit(one).ok());
  absl::StatusOr<CopyReport> refused = CopyStore(*store_, holds_a_secret);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("not empty"));
  // A secret sealed differently, or one missing, is named.
  records::WriteBatch resealed;
  resealed.put_secrets = {Secret("/web/api-key", "abce", "k2")};
  ASSERT_TRUE(copy.Commit(resealed).ok());
  absl::Status differs = CompareStores(*store_, copy);
  EXPECT_EQ(differs.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(differs.message(), HasSubstr("secrets"));
  records::WriteBatch gone;
  gone.delete_secrets = {"/web/api-key"};
  ASSERT_TRUE(copy.Commit(gone).ok());
  absl::Status missing = CompareStores(*store_, copy);
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.message(), HasSubstr("secrets"));
}

TEST_P(StoreConformance, SecretsAreCopiedIntoAnyBackend) {
  // The backend under test as the target of a copy from memory.
  MemoryStore source;
  records::WriteBatch b;
  b.put_secrets = {Secret("/b/s", "0b"), Secret("/a/s", "0a")};
  b.cluster_id = "cafe0000cafe0000";
  ASSERT_TRUE(source.Commit(b).ok());
  absl::StatusOr<CopyReport> r = CopyStore(source, *store_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->secrets, 2u);
  EXPECT_TRUE(CompareStores(source, *store_).ok());
  EXPECT_THAT(Paths(MustLoad().secrets), ElementsAre("/a/s", "/b/s"));
}

// A failure in the middle of a transaction, after a secret was deleted and another written,
// takes both back.
TEST(SqliteStoreFaults, AFailureAmongTheSecretsRollsThemAllBack) {
  std::string dir =
      (std::filesystem::temp_directory_path() / ("pl-sqlite-secrets-" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(dir);
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  records::WriteBatch first;
  first.put_secrets = {Secret("/a/old", "00")};
  ASSERT_TRUE((*store)->Commit(first).ok());
  records::WriteBatch b;
  b.delete_secrets = {"/a/old"};
  b.put_secrets = {Secret("/a/one", "01"), Secret("/a/two", "02"), Secret("/a/three", "03")};
  (*store)->FailAfterWritesForTesting(2);  // the deletion and one secret, then a failure
  EXPECT_EQ((*store)->Commit(b).code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(Paths((*store)->Load()->secrets), ElementsAre("/a/old"));
  ASSERT_TRUE((*store)->Commit(b).ok());
  EXPECT_THAT(Paths((*store)->Load()->secrets), ElementsAre("/a/one", "/a/three", "/a/two"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace paceline::store
