// The Peloton catalogue (PACELINE_SOURCE_DIR):
//   examples/peloton/*.yaml: each converts, and its printed spec is the one kept in
//       examples/peloton/converted/ (the output of `paceline convert peloton`, whose comment
//       header is not compared);
//   tests/peloton/job-*.yaml, tests/peloton/pool-*.yaml: each fails, with every "# expect:
//       FRAGMENT" line of the file in the message, which starts with the path and a line:column.

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
#include "peloton/peloton.h"
#include "spec/yaml_spec.h"

namespace paceline::peloton {
namespace {

const std::string kSource = PACELINE_SOURCE_DIR;

std::vector<std::string> ListYaml(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/" + dir, ec)) {
    if (e.path().extension() == ".yaml") files.push_back(dir + "/" + e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadAll(const std::string& relative) {
  std::ifstream in(kSource + "/" + relative, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string WithoutComments(const std::string& text) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, "#")) continue;
    absl::StrAppend(&out, line, "\n");
  }
  while (absl::EndsWith(out, "\n\n")) out.pop_back();
  return out;
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = std::filesystem::path(info.param).stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

TEST(PelotonCatalogueTest, HasEnoughFiles) {
  EXPECT_GE(ListYaml("examples/peloton").size(), 8u);
  EXPECT_GE(ListYaml("tests/peloton").size(), 20u);
}

class PelotonExampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PelotonExampleTest, ConvertsToTheKeptSpec) {
  const std::string& path = GetParam();
  const std::string text = ReadAll(path);
  std::string printed;
  if (GuessKind(text) == ConfigKind::kPool) {
    auto r = ConvertPool(text, path);
    ASSERT_TRUE(r.ok()) << r.status();
    printed = PrintPoolSpec(r->spec);
    ASSERT_TRUE(ParsePoolSpec(printed, "printed").ok());
  } else {
    auto r = ConvertJob(text, path);
    ASSERT_TRUE(r.ok()) << r.status();
    printed = PrintJobSpec(r->spec);
    ASSERT_TRUE(ParseJobSpec(printed, "printed").ok());
  }
  const std::string kept_path =
      "examples/peloton/converted/" + std::filesystem::path(path).filename().string();
  EXPECT_EQ(printed, WithoutComments(ReadAll(kept_path)))
      << "regenerate with: paceline convert peloton " << path << " --out " << kept_path;
}

INSTANTIATE_TEST_SUITE_P(Examples, PelotonExampleTest,
                         ::testing::ValuesIn(ListYaml("examples/peloton")), TestName);

class PelotonMalformedTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PelotonMalformedTest, FailsSayingWhereAndWhy) {
  const std::string& path = GetParam();
  const std::string text = ReadAll(path);
  std::vector<std::string> expects;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, "# expect: ")) expects.emplace_back(line);
  }
  ASSERT_FALSE(expects.empty()) << path << " has no '# expect:' line";
  const bool pool = absl::StartsWith(std::filesystem::path(path).filename().string(), "pool-");
  absl::Status s = pool ? ConvertPool(text, path).status() : ConvertJob(text, path).status();
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  const std::string message(s.message());
  EXPECT_TRUE(std::regex_search(message, std::regex("^" + path + ":[0-9]+:[0-9]+: "))) << message;
  for (const std::string& e : expects) EXPECT_THAT(message, ::testing::HasSubstr(e));
}

INSTANTIATE_TEST_SUITE_P(Malformed, PelotonMalformedTest,
                         ::testing::ValuesIn(ListYaml("tests/peloton")), TestName);

}  // namespace
}  // namespace paceline::peloton
