// RegistryClient against Debian's docker-registry on 127.0.0.1 over TLS (RegistryServer):
// manifests by tag and digest, an index resolved to this machine's manifest, blobs verified,
// and each failure the header promises, with its code.
#include "image/registry_client.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "image/digest.h"
#include "image/testing/image_builder.h"
#include "image/testing/registry_push.h"
#include "image/testing/registry_server.h"
#include "image/testing/tar_builder.h"
#include "tls/certificates.h"

namespace paceline::image {
namespace {

using testing::Blob;
using ::testing::HasSubstr;
using testing::Image;
using testing::ImageBuilder;
using testing::PushTarget;
using testing::RegistryServer;

std::string MakeTempDir() {
  std::string tmpl = ::testing::TempDir() + "registry-client-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
  return tmpl;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::symlink_status(path, ec));
}

// One registry for the suite (starting one takes a moment), with the busybox image pushed as
// test/busybox:v1.
class RegistryClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    suite_dir_ = new std::string(MakeTempDir());
    auto certs = tls::EnsureMasterCertificates(*suite_dir_ + "/tls", {"127.0.0.1"});
    ASSERT_TRUE(certs.ok()) << certs.status();
    certs_ = new tls::CertificateFiles(*certs);
    auto server = RegistryServer::Start({.cert_file = certs->cert, .key_file = certs->key});
    ASSERT_TRUE(server.ok()) << server.status();
    registry_ = server->release();
    auto busybox = testing::BusyboxImage();
    ASSERT_TRUE(busybox.ok()) << busybox.status();
    busybox_ = new Image(*std::move(busybox));
    absl::Status pushed = testing::PushImage(Target("test/busybox"), *busybox_, "v1");
    ASSERT_TRUE(pushed.ok()) << pushed << "\n" << registry_->Log();
  }

  static void TearDownTestSuite() {
    delete registry_;
    delete busybox_;
    delete certs_;
    std::filesystem::remove_all(*suite_dir_);
    delete suite_dir_;
  }

  void SetUp() override {
    ASSERT_NE(registry_, nullptr) << "the registry did not start";
    dir_ = MakeTempDir();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static PushTarget Target(const std::string& repository) {
    return PushTarget{
        .registry = registry_->address(), .repository = repository, .ca_file = certs_->ca};
  }
  static RegistryOptions Options() {
    return RegistryOptions{.ca_file = certs_->ca,
                           .connect_timeout = absl::Seconds(5),
                           .stall_timeout = absl::Seconds(5)};
  }
  static spec::ImageRef Ref(const std::string& repository_and_tag) {
    auto ref = spec::ParseImageRef(absl::StrCat(registry_->address(), "/", repository_and_tag));
    EXPECT_TRUE(ref.ok()) << ref.status();
    return *ref;
  }
  // A small image whose content no other test pushes.
  static Image UniqueImage(const std::string& name, const std::string& arch = "") {
    testing::TarBuilder tar;
    tar.File(name, absl::StrCat("content of ", name, "\n"));
    ImageBuilder b;
    b.Layer(tar.Finish(false));
    if (!arch.empty()) b.Architecture(arch);
    return b.Build();
  }

  static inline std::string* suite_dir_ = nullptr;
  static inline tls::CertificateFiles* certs_ = nullptr;
  static inline RegistryServer* registry_ = nullptr;
  static inline Image* busybox_ = nullptr;
  std::string dir_;
};

TEST_F(RegistryClientTest, FetchesAManifestByTagAndByDigest) {
  RegistryClient client(Options());
  auto by_tag = client.FetchManifest(Ref("test/busybox:v1"));
  ASSERT_TRUE(by_tag.ok()) << by_tag.status();
  EXPECT_EQ(by_tag->body, busybox_->manifest.data);
  EXPECT_EQ(by_tag->digest, busybox_->manifest.digest);
  EXPECT_EQ(by_tag->media_type, kOciManifest);
  auto parsed = ParseManifest(by_tag->body);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->layers.size(), 1u);

  auto by_digest = client.FetchManifest(Ref("test/busybox@" + busybox_->manifest.digest));
  ASSERT_TRUE(by_digest.ok()) << by_digest.status();
  EXPECT_EQ(by_digest->body, busybox_->manifest.data);
  EXPECT_EQ(by_digest->digest, busybox_->manifest.digest);

  auto resolved = client.ResolveManifest(Ref("test/busybox:v1"));  // not an index: itself
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->digest, busybox_->manifest.digest);
}

TEST_F(RegistryClientTest, ResolvesAnIndexToThisMachinesManifest) {
  const std::string other_arch = HostArchitecture() == "s390x" ? "riscv64" : "s390x";
  Image other = UniqueImage("other", other_arch);
  PushTarget to = Target("test/multi");
  ASSERT_TRUE(testing::PushImage(to, *busybox_, busybox_->manifest.digest).ok());
  ASSERT_TRUE(testing::PushImage(to, other, other.manifest.digest).ok());
  Blob index = testing::MakeIndex({{other.manifest, {"linux", other_arch, ""}},
                                   {busybox_->manifest, {"linux", HostArchitecture(), ""}}});
  absl::Status pushed = testing::PushManifest(to, index, "multi");
  ASSERT_TRUE(pushed.ok()) << pushed;
  Blob only_other = testing::MakeIndex({{other.manifest, {"linux", other_arch, ""}}});
  ASSERT_TRUE(testing::PushManifest(to, only_other, "foreign").ok());

  RegistryClient client(Options());
  auto top = client.FetchManifest(Ref("test/multi:multi"));
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_EQ(top->media_type, kOciIndex);
  EXPECT_EQ(top->digest, index.digest);

  auto resolved = client.ResolveManifest(Ref("test/multi:multi"));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->digest, busybox_->manifest.digest);
  EXPECT_EQ(resolved->media_type, kOciManifest);
  EXPECT_EQ(resolved->body, busybox_->manifest.data);

  auto pinned = client.ResolveManifest(Ref("test/multi@" + index.digest));
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_EQ(pinned->digest, busybox_->manifest.digest);

  auto foreign = client.ResolveManifest(Ref("test/multi:foreign"));
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kNotFound) << foreign.status();
  EXPECT_THAT(foreign.status().message(), HasSubstr("linux/" + other_arch));
}

TEST_F(RegistryClientTest, FetchesBlobsVerifiedAndRenamed) {
  RegistryClient client(Options());
  for (const Blob* b : busybox_->blobs()) {
    std::string path = dir_ + "/" + DigestHex(b->digest);
    absl::Status s = client.FetchBlob(Ref("test/busybox:v1"), b->descriptor(), path);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(ReadAll(path), b->data);
    EXPECT_FALSE(Exists(path + ".partial"));
  }
}

TEST_F(RegistryClientTest, MissingTagIsNotFoundWithTheRegistrysMessage) {
  RegistryClient client(Options());
  auto m = client.FetchManifest(Ref("test/busybox:nope"));
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound) << m.status();
  EXPECT_THAT(m.status().message(), HasSubstr("MANIFEST_UNKNOWN"));
  EXPECT_THAT(m.status().message(), HasSubstr("HTTP 404"));

  auto repo = client.FetchManifest(Ref("test/no-such-repository:v1"));
  EXPECT_EQ(repo.status().code(), absl::StatusCode::kNotFound) << repo.status();
}

TEST_F(RegistryClientTest, MissingBlobIsNotFoundAndLeavesNothing) {
  RegistryClient client(Options());
  Descriptor missing{std::string(kOciLayerGzip), Sha256Digest("never pushed"), 12, std::nullopt};
  std::string path = dir_ + "/missing";
  absl::Status s = client.FetchBlob(Ref("test/busybox:v1"), missing, path);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(s.message(), HasSubstr("BLOB_UNKNOWN"));
  EXPECT_FALSE(Exists(path));
  EXPECT_FALSE(Exists(path + ".partial"));
}

TEST_F(RegistryClientTest, WrongSizeIsDataLossAndLeavesNothing) {
  RegistryClient client(Options());
  const Blob& layer = busybox_->layers[0];
  for (int64_t delta : {-1, 1}) {
    Descriptor d = layer.descriptor();
    d.size += delta;
    std::string path = absl::StrCat(dir_, "/layer", delta);
    absl::Status s = client.FetchBlob(Ref("test/busybox:v1"), d, path);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
    EXPECT_THAT(s.message(), HasSubstr("bytes"));
    EXPECT_FALSE(Exists(path));
    EXPECT_FALSE(Exists(path + ".partial"));
  }
}

TEST_F(RegistryClientTest, CorruptedBlobIsDataLossAndLeavesNothing) {
  Image image = UniqueImage("corrupt-blob");
  ASSERT_TRUE(testing::PushImage(Target("test/corrupt"), image, "v1").ok());
  const Blob& layer = image.layers[0];
  std::string stored = registry_->BlobDataPath(layer.digest);
  std::string bytes = ReadAll(stored);
  ASSERT_EQ(bytes, layer.data) << stored;
  bytes[bytes.size() / 2] ^= 0x55;  // same size, other content
  std::ofstream(stored, std::ios::binary | std::ios::trunc) << bytes;

  RegistryClient client(Options());
  std::string path = dir_ + "/layer";
  absl::Status s = client.FetchBlob(Ref("test/corrupt:v1"), layer.descriptor(), path);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(s.message(), HasSubstr("digest"));
  EXPECT_FALSE(Exists(path));
  EXPECT_FALSE(Exists(path + ".partial"));
}

TEST_F(RegistryClientTest, CorruptedManifestIsDataLoss) {
  Image image = UniqueImage("corrupt-manifest");
  ASSERT_TRUE(testing::PushImage(Target("test/corrupt-manifest"), image, "v1").ok());
  std::string stored = registry_->BlobDataPath(image.manifest.digest);
  std::string bytes = ReadAll(stored);
  ASSERT_EQ(bytes, image.manifest.data);
  // Still a valid manifest, with other bytes: the config's size 1 digit off.
  std::string size = absl::StrCat("\"size\":", image.config.data.size());
  size_t at = bytes.find(size);
  ASSERT_NE(at, std::string::npos);
  bytes[at + size.size() - 1] = bytes[at + size.size() - 1] == '1' ? '2' : '1';
  std::ofstream(stored, std::ios::binary | std::ios::trunc) << bytes;

  RegistryClient client(Options());
  auto by_digest = client.FetchManifest(Ref("test/corrupt-manifest@" + image.manifest.digest));
  EXPECT_EQ(by_digest.status().code(), absl::StatusCode::kDataLoss) << by_digest.status();
  auto by_tag = client.FetchManifest(Ref("test/corrupt-manifest:v1"));
  EXPECT_EQ(by_tag.status().code(), absl::StatusCode::kDataLoss) << by_tag.status();
}

TEST_F(RegistryClientTest, FullDiskIsResourceExhaustedAndLeavesNothing) {
  // The partial file is a symlink to /dev/full: every write fails with ENOSPC.
  std::string path = dir_ + "/layer";
  ASSERT_EQ(::symlink("/dev/full", (path + ".partial").c_str()), 0);
  RegistryClient client(Options());
  absl::Status s = client.FetchBlob(Ref("test/busybox:v1"), busybox_->layers[0].descriptor(), path);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("no space left"));
  EXPECT_FALSE(Exists(path));
  EXPECT_FALSE(Exists(path + ".partial"));
}

TEST_F(RegistryClientTest, UntrustedCertificateIsUnavailable) {
  auto other = tls::EnsureMasterCertificates(dir_ + "/other-ca", {"127.0.0.1"});
  ASSERT_TRUE(other.ok()) << other.status();
  RegistryOptions options = Options();
  options.ca_file = other->ca;
  RegistryClient client(options);
  auto m = client.FetchManifest(Ref("test/busybox:v1"));
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnavailable) << m.status();
  EXPECT_THAT(m.status().message(), HasSubstr("certificate"));
}

TEST_F(RegistryClientTest, NothingListeningIsUnavailable) {
  auto hung = RegistryServer::Start({.hung = true});
  ASSERT_TRUE(hung.ok()) << hung.status();
  std::string address = (*hung)->address();
  hung->reset();  // the port is closed now
  RegistryClient client(Options());
  auto ref = spec::ParseImageRef(address + "/test/busybox:v1");
  ASSERT_TRUE(ref.ok());
  auto m = client.FetchManifest(*ref);
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnavailable) << m.status();
}

// A registry that accepts connections and never answers: the TLS handshake is bounded by the
// connect timeout, a plain-HTTP answer by the stall timeout.
TEST_F(RegistryClientTest, HungRegistryIsDeadlineExceeded) {
  auto hung = RegistryServer::Start({.hung = true});
  ASSERT_TRUE(hung.ok()) << hung.status();
  auto ref = spec::ParseImageRef((*hung)->address() + "/test/busybox:v1");
  ASSERT_TRUE(ref.ok());
  {
    RegistryOptions options = Options();
    options.connect_timeout = absl::Seconds(1);
    options.stall_timeout = absl::Seconds(1);
    RegistryClient client(options);
    absl::Time start = absl::Now();
    auto m = client.FetchManifest(*ref);
    EXPECT_EQ(m.status().code(), absl::StatusCode::kDeadlineExceeded) << m.status();
    EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  }
  {
    RegistryOptions options = Options();
    options.scheme = "http";
    options.connect_timeout = absl::Seconds(60);
    options.stall_timeout = absl::Seconds(1);
    RegistryClient client(options);
    absl::Time start = absl::Now();
    absl::Status s = client.FetchBlob(*ref, busybox_->layers[0].descriptor(), dir_ + "/blob");
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_LT(absl::Now() - start, absl::Seconds(5));
    EXPECT_FALSE(Exists(dir_ + "/blob.partial"));
  }
}

TEST_F(RegistryClientTest, BasicAuth) {
  if (!RegistryServer::HtpasswdAvailable()) GTEST_SKIP() << "htpasswd (apache2-utils) missing";
  auto server = RegistryServer::Start({.cert_file = certs_->cert,
                                       .key_file = certs_->key,
                                       .username = "puller",
                                       .password = "s3cret pass"});
  ASSERT_TRUE(server.ok()) << server.status();
  auto& registry = **server;
  Image image = UniqueImage("private");
  PushTarget to{.registry = registry.address(),
                .repository = "team/private",
                .ca_file = certs_->ca,
                .username = "puller",
                .password = "s3cret pass"};
  absl::Status pushed = testing::PushImage(to, image, "v1");
  ASSERT_TRUE(pushed.ok()) << pushed << "\n" << registry.Log();
  auto ref = spec::ParseImageRef(registry.address() + "/team/private:v1");
  ASSERT_TRUE(ref.ok());

  RegistryClient anonymous(Options());
  auto m = anonymous.FetchManifest(*ref);
  EXPECT_EQ(m.status().code(), absl::StatusCode::kPermissionDenied) << m.status();
  EXPECT_THAT(m.status().message(), HasSubstr("no credentials"));

  RegistryOptions wrong = Options();
  wrong.username = "puller";
  wrong.password = "guess";
  RegistryClient refused(wrong);
  m = refused.FetchManifest(*ref);
  EXPECT_EQ(m.status().code(), absl::StatusCode::kPermissionDenied) << m.status();
  EXPECT_THAT(m.status().message(), HasSubstr("refused"));

  RegistryOptions right = Options();
  right.username = "puller";
  right.password = "s3cret pass";
  RegistryClient client(right);
  m = client.FetchManifest(*ref);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->digest, image.manifest.digest);
  std::string path = dir_ + "/layer";
  absl::Status s = client.FetchBlob(*ref, image.layers[0].descriptor(), path);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ReadAll(path), image.layers[0].data);
}

}  // namespace
}  // namespace paceline::image
