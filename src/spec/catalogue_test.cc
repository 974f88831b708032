// The spec catalogue under tests/specs (PACELINE_SPEC_DIR):
//   malformed/pool-*.yaml, malformed/job-*.yaml  must fail; each file starts with one or more
//       "# expect: FRAGMENT" lines, and every fragment must occur in the error message, which
//       must start with the file's path and a line:column;
//   valid/pool-*.yaml, valid/job-*.yaml          must parse and round-trip through printing.
// Each file is its own test case, named after the file.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "spec/yaml_spec.h"

namespace paceline {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kSpecDir = PACELINE_SPEC_DIR;

std::vector<std::string> ListYaml(const std::string& subdir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(kSpecDir + ("/" + subdir), ec)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string Basename(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = std::filesystem::path(info.param).stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool IsPool(const std::string& path) { return absl::StartsWith(Basename(path), "pool-"); }

TEST(CatalogueTest, HasEnoughFiles) {
  std::vector<std::string> malformed = ListYaml("malformed");
  EXPECT_GE(malformed.size(), 50u);
  EXPECT_GE(ListYaml("valid").size(), 4u);
  for (const std::string& path : malformed) {
    std::string base = Basename(path);
    EXPECT_TRUE(absl::StartsWith(base, "pool-") || absl::StartsWith(base, "job-")) << base;
  }
}

class MalformedSpecTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MalformedSpecTest, FailsWithTheExpectedError) {
  const std::string& path = GetParam();
  std::string text = ReadAll(path);
  std::vector<std::string> fragments;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "# expect: ")) break;
    fragments.emplace_back(absl::StripAsciiWhitespace(line));
  }
  ASSERT_FALSE(fragments.empty()) << path << " must start with '# expect: <error fragment>'";

  absl::Status status =
      IsPool(path) ? LoadPoolSpecFile(path).status() : LoadJobSpecFile(path).status();
  ASSERT_FALSE(status.ok()) << path << " parsed, but it should not";
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  std::string message(status.message());
  for (const std::string& f : fragments) EXPECT_THAT(message, HasSubstr(f));
  for (absl::string_view line : absl::StrSplit(message, '\n')) {
    EXPECT_THAT(std::string(line), StartsWith(path + ":"));
    std::string rest(line.substr(std::min(line.size(), path.size() + 1)));
    EXPECT_TRUE(std::regex_search(rest, std::regex("^[0-9]+:[0-9]+: "))) << line;
  }
}

INSTANTIATE_TEST_SUITE_P(Catalogue, MalformedSpecTest, ::testing::ValuesIn(ListYaml("malformed")),
                         TestName);

class ValidSpecTest : public ::testing::TestWithParam<std::string> {};

template <typename Spec>
void ExpectRoundTrip(const std::string& path, absl::StatusOr<Spec> (*load)(const std::string&),
                     absl::StatusOr<Spec> (*parse)(absl::string_view, absl::string_view),
                     std::string (*print)(const Spec&)) {
  absl::StatusOr<Spec> spec = load(path);
  ASSERT_TRUE(spec.ok()) << spec.status();
  std::string printed = print(*spec);
  absl::StatusOr<Spec> back = parse(printed, "printed.yaml");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << printed;
  EXPECT_TRUE(*back == *spec) << printed;
  EXPECT_EQ(print(*back), printed);
}

TEST_P(ValidSpecTest, ParsesAndRoundTrips) {
  const std::string& path = GetParam();
  if (IsPool(path)) {
    ExpectRoundTrip<PoolSpec>(path, LoadPoolSpecFile, ParsePoolSpec, PrintPoolSpec);
  } else {
    ExpectRoundTrip<JobSpec>(path, LoadJobSpecFile, ParseJobSpec, PrintJobSpec);
  }
}

INSTANTIATE_TEST_SUITE_P(Catalogue, ValidSpecTest, ::testing::ValuesIn(ListYaml("valid")),
                         TestName);

}  // namespace
}  // namespace paceline
