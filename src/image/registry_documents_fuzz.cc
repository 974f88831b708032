// Fuzzes what a registry sends that is parsed before anything about it is trusted: manifests,
// indexes and image configs (oci_types.h), WWW-Authenticate challenges, error bodies and token
// answers (registry_protocol.h). Any input gives a value or INVALID_ARGUMENT, never a crash;
// a value that parses holds only valid digests and sizes >= 0.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "image/oci_types.h"
#include "image/registry_protocol.h"
#include "spec/image_ref.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "registry_documents_fuzz: %s\n", what);
  std::abort();
}

void CheckDescriptor(const paceline::image::Descriptor& d) {
  if (!paceline::spec::IsSha256Digest(d.digest)) Fail("a parsed descriptor has a bad digest");
  if (d.size < 0) Fail("a parsed descriptor has a negative size");
  if (d.media_type.empty()) Fail("a parsed descriptor has no media type");
}

template <typename T>
void CheckError(const T& result) {
  if (!result.ok() && result.status().code() != absl::StatusCode::kInvalidArgument) {
    Fail("a parse error is not INVALID_ARGUMENT");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paceline::image;
  absl::string_view input(reinterpret_cast<const char*>(data), size);

  auto manifest = ParseManifest(input);
  CheckError(manifest);
  if (manifest.ok()) {
    if (!IsManifestMediaType(manifest->media_type)) Fail("a manifest of another media type");
    CheckDescriptor(manifest->config);
    for (const Descriptor& d : manifest->layers) CheckDescriptor(d);
  }
  auto index = ParseIndex(input);
  CheckError(index);
  if (index.ok()) {
    for (const Descriptor& d : index->manifests) CheckDescriptor(d);
    auto chosen = SelectPlatform(*index);
    if (!chosen.ok() && chosen.status().code() != absl::StatusCode::kNotFound) {
      Fail("SelectPlatform failed with another code than NOT_FOUND");
    }
  }
  auto config = ParseImageConfig(input);
  CheckError(config);
  if (config.ok()) {
    for (const std::string& id : config->diff_ids) {
      if (!paceline::spec::IsSha256Digest(id)) Fail("a parsed diff_id is not a digest");
    }
  }

  (void)ParseAuthChallenge(input);
  if (DescribeErrorBody(input).size() > 100'000) Fail("an error description is unbounded");
  auto token = ParseTokenResponse(input);
  if (token.ok() && token->empty()) Fail("an empty token");
  (void)MediaTypeOf(input);
  return 0;
}
