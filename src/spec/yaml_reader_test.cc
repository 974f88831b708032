#include "spec/yaml_reader.h"

#include <array>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace paceline::yaml_internal {
namespace {

using ::testing::HasSubstr;

constexpr std::array<absl::string_view, 1> kKeys = {"v"};
constexpr std::array<absl::string_view, 2> kNameKeys = {"name", "v"};

// Loads "v: <value>" and returns the field v (which the test then reads).
class ReaderTest : public ::testing::Test {
 protected:
  Field Value(const std::string& value) {
    std::optional<Field> root = LoadDocument("v: " + value + "\n", "test spec", diag_);
    EXPECT_TRUE(root.has_value());
    MapReader m(*root, kKeys, "a map", diag_);
    std::optional<Field> f = m.Get("v");
    EXPECT_TRUE(f.has_value());
    return *f;
  }
  std::string Errors() const { return std::string(diag_.ToStatus("t.yaml").message()); }

  Diagnostics diag_;
};

TEST_F(ReaderTest, BoolsAreExactlyTrueOrFalse) {
  EXPECT_EQ(ReadBool(Value("true"), diag_), true);
  EXPECT_EQ(ReadBool(Value("false"), diag_), false);
  EXPECT_TRUE(diag_.ok());
  EXPECT_EQ(ReadBool(Value("yes"), diag_), std::nullopt);
  EXPECT_THAT(Errors(), HasSubstr("t.yaml:1:4: v: 'yes' is not a boolean; expected true or false"));
}

TEST_F(ReaderTest, QuotedBoolIsAString) {
  EXPECT_EQ(ReadBool(Value("\"true\""), diag_), std::nullopt);
  EXPECT_THAT(Errors(), HasSubstr("is quoted, which makes it a string"));
}

TEST_F(ReaderTest, IntegersArePlainDecimal) {
  EXPECT_EQ(ReadInt(Value("42"), 0, 100, diag_), 42);
  EXPECT_EQ(ReadInt(Value("-7"), -10, 10, diag_), -7);
  EXPECT_EQ(ReadInt(Value("0"), 0, 10, diag_), 0);
  EXPECT_TRUE(diag_.ok());
  for (const char* bad : {"010", "0x10", "1e3", "+5", "1_000", "abc", "1.0", "--1", "''"}) {
    Diagnostics d;
    std::optional<Field> root = LoadDocument(absl::StrCat("v: ", bad, "\n"), "t", d);
    ASSERT_TRUE(root);
    MapReader m(*root, kKeys, "a map", d);
    EXPECT_EQ(ReadInt(*m.Get("v"), 0, 100000, d), std::nullopt) << bad;
    EXPECT_FALSE(d.ok()) << bad;
  }
}

TEST_F(ReaderTest, IntegerRange) {
  EXPECT_EQ(ReadInt(Value("101"), 0, 100, diag_), std::nullopt);
  EXPECT_THAT(Errors(), HasSubstr("101 is out of range; expected a whole number from 0 to 100"));
  Diagnostics d;
  std::optional<Field> root = LoadDocument("v: 99999999999999999999\n", "t", d);
  MapReader m(*root, kKeys, "a map", d);
  EXPECT_EQ(ReadInt(*m.Get("v"), INT64_MIN, INT64_MAX, d), std::nullopt);
}

TEST_F(ReaderTest, Numbers) {
  EXPECT_EQ(ReadNumber(Value("2.5"), diag_), 2.5);
  EXPECT_EQ(ReadNumber(Value("-3"), diag_), -3);
  EXPECT_TRUE(diag_.ok());
  EXPECT_EQ(ReadNumber(Value(".inf"), diag_), std::nullopt);
  EXPECT_EQ(ReadNumber(Value("nan"), diag_), std::nullopt);
  EXPECT_EQ(ReadNumber(Value("1e999"), diag_), std::nullopt);
  EXPECT_THAT(Errors(), HasSubstr("'nan' is not a number"));
}

TEST_F(ReaderTest, FormatNumberRoundTrips) {
  for (double v : {0.5, 1.0, 1e-5, 123456.789, 0.1 + 0.2, -42.0, 1e300}) {
    EXPECT_EQ(ParseNumberText(FormatNumber(v)), v) << FormatNumber(v);
  }
  EXPECT_EQ(FormatNumber(10), "10");
}

TEST_F(ReaderTest, NullIsAnError) {
  EXPECT_EQ(ReadString(Value(""), diag_), std::nullopt);
  EXPECT_EQ(ReadString(Value("~"), diag_), std::nullopt);
  EXPECT_THAT(Errors(), HasSubstr("t.yaml:1:1: v: has no value; expected a string"));
}

TEST_F(ReaderTest, ScalarsMayBeAnyPlainOrQuotedText) {
  EXPECT_EQ(ReadString(Value("yes"), diag_), "yes");
  EXPECT_EQ(ReadString(Value("'5'"), diag_), "5");
  EXPECT_EQ(ReadString(Value("\"a\\tb\""), diag_), "a\tb");
  EXPECT_TRUE(diag_.ok());
}

TEST_F(ReaderTest, WrongShape) {
  EXPECT_EQ(ReadString(Value("{a: 1}"), diag_), std::nullopt);
  EXPECT_EQ(ReadStringList(Value("abc"), diag_), std::nullopt);
  EXPECT_THAT(Errors(), HasSubstr("v: is a map; expected a string"));
  EXPECT_THAT(Errors(), HasSubstr("v: is a single value; expected a list of strings"));
}

TEST_F(ReaderTest, TagsAreRejected) {
  EXPECT_EQ(ReadString(Value("!!str 5"), diag_), std::nullopt);
  EXPECT_THAT(Errors(),
              HasSubstr("has the YAML tag 'tag:yaml.org,2002:str'; tags are not supported"));
}

TEST_F(ReaderTest, Quantities) {
  EXPECT_EQ(ReadQuantity(Value("500m"), Dim::kCpu, diag_), 500);
  EXPECT_EQ(ReadQuantity(Value("'2Gi'"), Dim::kMemory, diag_), int64_t{2} << 30);
  EXPECT_EQ(ReadQuantity(Value("0.5"), Dim::kGpu, diag_), 500);
  EXPECT_TRUE(diag_.ok());
  EXPECT_EQ(ReadQuantity(Value("2GB"), Dim::kMemory, diag_), std::nullopt);
  // The unit parser's "size: " prefix is replaced by the field path.
  EXPECT_THAT(Errors(), HasSubstr("v: unknown unit 'GB' in '2GB' (did you mean Gi or G?)"));
}

TEST_F(ReaderTest, Durations) {
  EXPECT_EQ(ReadDuration(Value("1h30m"), diag_), absl::Minutes(90));
  EXPECT_EQ(ReadDuration(Value("0"), diag_), absl::ZeroDuration());
  EXPECT_EQ(ReadDuration(Value("30"), diag_), std::nullopt);
  EXPECT_THAT(Errors(), HasSubstr("v: '30' has no unit; write e.g. 30s or 30m"));
}

TEST_F(ReaderTest, EnumWithHint) {
  constexpr std::array<absl::string_view, 2> kNames = {"elastic", "static"};
  EXPECT_EQ(ReadEnum(Value("static"), kNames, diag_), 1u);
  EXPECT_EQ(ReadEnum(Value("statc"), kNames, diag_), std::nullopt);
  EXPECT_THAT(Errors(), HasSubstr("'statc' is not valid (did you mean 'static'?); expected one of: "
                                  "elastic, static"));
}

TEST(MapReaderTest, UnknownAndDuplicateKeys) {
  Diagnostics diag;
  std::optional<Field> root = LoadDocument("v: 1\nnmae: 2\nv: 3\n<<: {}\n", "t", diag);
  ASSERT_TRUE(root);
  MapReader m(*root, kNameKeys, "a map", diag);
  EXPECT_TRUE(m.ok());
  ASSERT_EQ(m.entries().size(), 1u);
  EXPECT_EQ(m.Get("v")->node.Scalar(), "1");  // the first of duplicates
  std::string errors(diag.ToStatus("t.yaml").message());
  EXPECT_THAT(errors, HasSubstr("t.yaml:2:1: nmae: unknown key 'nmae' (did you mean 'name'?); "
                                "expected one of: name, v"));
  EXPECT_THAT(errors, HasSubstr("t.yaml:3:1: v: duplicate key 'v' (first at line 1)"));
  EXPECT_THAT(errors, HasSubstr("t.yaml:4:1: [\"<<\"]: unknown key '<<' (YAML merge keys are not "
                                "supported"));
}

TEST(MapReaderTest, RequireReportsAtTheMap) {
  Diagnostics diag;
  std::optional<Field> root = LoadDocument("x:\n  a: 1\n", "t", diag);
  constexpr std::array<absl::string_view, 1> kX = {"x"};
  MapReader top(*root, kX, "a map", diag);
  constexpr std::array<absl::string_view, 2> kAB = {"a", "b"};
  MapReader x(*top.Get("x"), kAB, "a map", diag);
  EXPECT_TRUE(x.Require("a", "expected a").has_value());
  EXPECT_FALSE(x.Require("b", "expected b").has_value());
  EXPECT_EQ(diag.ToStatus("t.yaml").message(), "t.yaml:2:3: x.b: is required; expected b");
}

TEST(LoadDocumentTest, DocumentLevelErrors) {
  struct Case {
    const char* text;
    const char* error;
  };
  for (const Case& c : {
           Case{"", "t.yaml:1:1: the file is empty; expected a job spec"},
           Case{"# only a comment\n", "t.yaml:1:1: the file is empty"},
           Case{"---\n", "t.yaml:2:1: the document is empty"},
           Case{"- a\n- b\n", "t.yaml:1:1: the top level is a list; expected a job spec"},
           Case{"hello\n", "t.yaml:1:1: the top level is a single value"},
           Case{"a: 1\n---\nb: 2\n", "t.yaml:2:1: the file holds more than one YAML document"},
           Case{"a: 1\n...\nb: 2\n", "t.yaml:3:1: the file holds more than one YAML document"},
           // yaml-cpp 0.7's LoadAll would loop forever on these.
           Case{",", "t.yaml:1:1: YAML syntax error: unexpected ','"},
           Case{"- a\n,\n", "t.yaml:2:1: YAML syntax error: unexpected ','"},
           Case{"~\n", "t.yaml:1:1: the document is empty"},
           Case{"a: 1\n---\n", "t.yaml:2:1: the file holds more than one YAML document"},
           Case{"a: [1, 2\nb: 3\n",
                "t.yaml:2:2: YAML syntax error: end of sequence flow not found"},
           Case{"a: b: c\n", "t.yaml:1:5: YAML syntax error: illegal map value"},
           Case{"x: *nope\n",
                "t.yaml:1:4: YAML syntax error: the referenced anchor is not defined"},
       }) {
    Diagnostics diag;
    EXPECT_FALSE(LoadDocument(c.text, "job spec", diag).has_value()) << c.text;
    EXPECT_THAT(std::string(diag.ToStatus("t.yaml").message()), HasSubstr(c.error)) << c.text;
  }
}

TEST(DiagnosticsTest, SortsByPositionAndCaps) {
  Diagnostics diag;
  for (int i = 200; i > 0; --i) diag.Error(Location{i, 1}, "p", "bad");
  std::string message(diag.ToStatus("f").message());
  EXPECT_EQ(message.substr(0, 15), "f:1:1: p: bad\nf");
  EXPECT_THAT(message, HasSubstr("f: too many errors; stopped after 100"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("f:101:1")));
}

TEST(DiagnosticsTest, ValidationErrorsAreLocatedAndDeduplicated) {
  Diagnostics diag;
  diag.Record("", Location{1, 1});
  diag.Record("task", Location{3, 3});
  diag.Record("task.resources", Location{4, 5});
  diag.Record("instances", Location{2, 12});
  diag.Error(Location{4, 12}, "task.resources.cpu", "bad unit");
  diag.AddValidationErrors({
      {"task.resources.cpu", "is 0", {}},                       // same field: dropped
      {"task.resources.memory", "is 0", {}},                    // located at its parent
      {"sla.min_running_instances", "too big", {"instances"}},  // instances fine: kept
      {"task.gpu_models", "no gpu", {"task.resources.cpu"}},    // depends on a bad field: dropped
  });
  EXPECT_EQ(diag.ToStatus("f").message(),
            "f:1:1: sla.min_running_instances: too big\n"
            "f:4:5: task.resources.memory: is 0\n"
            "f:4:12: task.resources.cpu: bad unit");
}

}  // namespace
}  // namespace paceline::yaml_internal
