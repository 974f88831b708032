#include "secrets/keyring.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace paceline::secrets {
namespace {

using ::testing::HasSubstr;
using namespace std::string_literals;

std::string TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "pl-keyring-XXXXXX").string();
  return ::mkdtemp(tmpl.data());
}

Keyring OneKey() {
  absl::StatusOr<std::string> line = Keyring::NewKeyLine();
  EXPECT_TRUE(line.ok());
  absl::StatusOr<Keyring> k = Keyring::Parse(*line);
  EXPECT_TRUE(k.ok()) << k.status();
  return *k;
}

TEST(Keyring, SealedValuesOpenOnlyAtTheirOwnPathAndUnaltered) {
  Keyring k = OneKey();
  const std::string value = "hunter2\n\0binary"s;
  absl::StatusOr<Sealed> s = k.Seal("/ads/pw", value);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->key_id, k.current_id());
  EXPECT_FALSE(absl::StrContains(s->sealed, absl::BytesToHexString(value)));
  absl::StatusOr<std::string> open = k.Open("/ads/pw", *s);
  ASSERT_TRUE(open.ok()) << open.status();
  EXPECT_EQ(*open, value);
  // Two seals of one value differ (a fresh nonce each).
  EXPECT_NE(k.Seal("/ads/pw", value)->sealed, s->sealed);
  // Moved to another path: refused.
  EXPECT_EQ(k.Open("/search/pw", *s).status().code(), absl::StatusCode::kDataLoss);
  // Altered: refused.
  Sealed altered = *s;
  altered.sealed[30] = altered.sealed[30] == '0' ? '1' : '0';
  EXPECT_EQ(k.Open("/ads/pw", altered).status().code(), absl::StatusCode::kDataLoss);
  Sealed cut = *s;
  cut.sealed.resize(10);
  EXPECT_EQ(k.Open("/ads/pw", cut).status().code(), absl::StatusCode::kDataLoss);
  // Another keyring's key: says which key is missing.
  Keyring other = OneKey();
  absl::Status missing = other.Open("/ads/pw", *s).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.message(), HasSubstr(s->key_id));
}

TEST(Keyring, AFileIsCreatedPrivateAndANewKeyGoesFirst) {
  std::string dir = TempDir();
  std::string path = dir + "/secrets.key";
  absl::StatusOr<Keyring> first = Keyring::LoadOrCreate(path);
  ASSERT_TRUE(first.ok()) << first.status();
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  // Loading again reads the same key.
  absl::StatusOr<Keyring> again = Keyring::LoadOrCreate(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->current_id(), first->current_id());
  absl::StatusOr<Sealed> old = first->Seal("/pw", "v1");
  ASSERT_TRUE(old.ok());
  // Rotation: the new key seals, the old one still opens.
  absl::StatusOr<std::string> id = Keyring::AddKeyToFile(path);
  ASSERT_TRUE(id.ok()) << id.status();
  absl::StatusOr<Keyring> rotated = Keyring::LoadOrCreate(path);
  ASSERT_TRUE(rotated.ok()) << rotated.status();
  EXPECT_EQ(rotated->current_id(), *id);
  EXPECT_NE(*id, first->current_id());
  EXPECT_EQ(*rotated->Open("/pw", *old), "v1");
  EXPECT_EQ(rotated->Seal("/pw", "v2")->key_id, *id);
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  std::filesystem::remove_all(dir);
}

TEST(Keyring, AKeyFileOthersMayReadIsRefused) {
  std::string dir = TempDir();
  std::string path = dir + "/secrets.key";
  ASSERT_TRUE(Keyring::LoadOrCreate(path).ok());
  ::chmod(path.c_str(), 0644);
  absl::Status s = Keyring::LoadOrCreate(path).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("chmod 600 " + path));
  std::filesystem::remove_all(dir);
}

TEST(Keyring, BadFilesNameTheLine) {
  EXPECT_THAT(Keyring::Parse("# only a comment\n").status().message(), HasSubstr("no key"));
  EXPECT_THAT(Keyring::Parse("# c\nabcd1234 00\n").status().message(), HasSubstr("line 2"));
  std::string line = *Keyring::NewKeyLine();
  EXPECT_THAT(Keyring::Parse(line + line).status().message(), HasSubstr("again"));
}

}  // namespace
}  // namespace paceline::secrets
