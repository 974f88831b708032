#include "spec/yaml_tree.h"

#include <gtest/gtest.h>

namespace paceline::yaml_internal {
namespace {

TEST(YamlTreeTest, ReadsScalarsListsAndMapsInDocumentOrder) {
  YamlText t = ReadYaml("b: 1\na: [x, 'y', \"z\"]\nb: 2\n");
  ASSERT_FALSE(t.error.has_value());
  ASSERT_EQ(t.documents, 1);
  const Node& root = t.root;
  ASSERT_TRUE(root.IsMap());
  ASSERT_EQ(root.size(), 3u);  // the duplicate key is kept, for the readers to report
  EXPECT_EQ(root.key(0).Scalar(), "b");
  EXPECT_EQ(root.value(2).Scalar(), "2");
  EXPECT_EQ(root["b"].Scalar(), "1");  // the first of duplicates
  const Node list = root["a"];
  ASSERT_TRUE(list.IsSequence());
  ASSERT_EQ(list.size(), 3u);
  EXPECT_FALSE(list.item(0).quoted());
  EXPECT_TRUE(list.item(1).quoted());
  EXPECT_TRUE(list.item(2).quoted());
  EXPECT_EQ(list.item(2).Scalar(), "z");
  EXPECT_EQ(list.mark().line, 1);
  EXPECT_EQ(list.mark().column, 3);
  EXPECT_FALSE(root["missing"].IsDefined());
}

TEST(YamlTreeTest, NullIsAPlainEmptyTildeOrNullScalarOnly) {
  YamlText t = ReadYaml("a:\nb: ~\nc: null\nd: NULL\ne: 'null'\nf: \"\"\ng: nil\n");
  ASSERT_FALSE(t.error.has_value());
  for (const char* k : {"a", "b", "c", "d"}) EXPECT_TRUE(t.root[k].IsNull()) << k;
  for (const char* k : {"e", "f", "g"}) EXPECT_TRUE(t.root[k].IsScalar()) << k;
  EXPECT_EQ(t.root["e"].Scalar(), "null");
}

TEST(YamlTreeTest, TagsAndTheNonSpecificTag) {
  YamlText t = ReadYaml("a: !!str 5\nb: ! 5\nc: !custom x\nd: |\n  text\n");
  ASSERT_FALSE(t.error.has_value());
  EXPECT_EQ(t.root["a"].Tag(), "tag:yaml.org,2002:str");
  EXPECT_EQ(t.root["b"].Tag(), "");
  EXPECT_TRUE(t.root["b"].quoted());  // '!' makes it a string
  EXPECT_EQ(t.root["c"].Tag(), "!custom");
  EXPECT_TRUE(t.root["d"].quoted());  // a block scalar is a string
  EXPECT_EQ(t.root["d"].Scalar(), "text\n");
}

TEST(YamlTreeTest, AnAliasIsItsAnchorsNodeAndCannotHoldItself) {
  YamlText t = ReadYaml("a: &r {cpu: 1}\nb: *r\n");
  ASSERT_FALSE(t.error.has_value());
  EXPECT_EQ(t.root["b"]["cpu"].Scalar(), "1");
  EXPECT_EQ(t.root["b"].mark().line, 0);  // the anchor's place

  YamlText undefined = ReadYaml("x: *nope\n");
  ASSERT_TRUE(undefined.error.has_value());
  EXPECT_EQ(undefined.error->message, "the referenced anchor is not defined");

  YamlText cycle = ReadYaml("a: &r [1, *r]\n");
  ASSERT_TRUE(cycle.error.has_value());
  EXPECT_EQ(cycle.error->message, "an alias refers to a list or map that holds it");
}

TEST(YamlTreeTest, CountsDocuments) {
  EXPECT_EQ(ReadYaml("").documents, 0);
  EXPECT_EQ(ReadYaml("# a comment\n").documents, 0);
  YamlText two = ReadYaml("a: 1\n---\nb: 2\n");
  EXPECT_EQ(two.documents, 2);
  EXPECT_EQ(two.second_start.line, 1);
  YamlText empty = ReadYaml("---\n");
  EXPECT_EQ(empty.documents, 1);
  EXPECT_TRUE(empty.root.IsNull());
}

// What libyaml (YAML 1.1) rejects and yaml-cpp reads: a plain scalar that starts with ':' in a
// flow list, as yaml-cpp's emitter prints it (and stored specs hold it).
TEST(YamlTreeTest, ReadsTheYaml12FormsYamlCppPrints) {
  YamlText t = ReadYaml("values: [:KH), b]\n");
  ASSERT_FALSE(t.error.has_value());
  ASSERT_EQ(t.root["values"].size(), 2u);
  EXPECT_EQ(t.root["values"].item(0).Scalar(), ":KH)");
  EXPECT_EQ(t.root["values"].item(0).mark().column, 9);
}

TEST(YamlTreeTest, SyntaxErrorsSayWhere) {
  YamlText t = ReadYaml("a: b: c\n");
  ASSERT_TRUE(t.error.has_value());
  EXPECT_EQ(t.error->mark.line, 0);
  EXPECT_EQ(t.error->mark.column, 4);
  EXPECT_FALSE(t.root.IsDefined());
}

}  // namespace
}  // namespace paceline::yaml_internal
