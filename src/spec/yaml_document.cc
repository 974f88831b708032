// LoadDocument: one YAML document (yaml_tree.h reads it), a map at the top (see yaml_reader.h).

#include "absl/strings/str_cat.h"
#include "spec/yaml_reader.h"

namespace paceline::yaml_internal {

std::optional<Field> LoadDocument(absl::string_view text, absl::string_view what,
                                  Diagnostics& diag) {
  std::string expected = absl::StrCat("expected a ", what, ": a YAML map of keys to values");
  YamlText read = ReadYaml(text);
  if (read.error) {
    diag.Error(ToLocation(read.error->mark), "",
               absl::StrCat("YAML syntax error: ", read.error->message));
    return std::nullopt;
  }
  if (read.documents == 0) {
    diag.Error(Location{}, "", absl::StrCat("the file is empty; ", expected));
    return std::nullopt;
  }
  if (read.documents > 1) {
    diag.Error(ToLocation(read.second_start), "",
               absl::StrCat("the file holds more than one YAML document; expected exactly one ",
                            what, " (remove the '---' separators)"));
    return std::nullopt;
  }
  const Node& root = read.root;
  Field field{root, ToLocation(root.mark()), ""};
  if (root.IsNull()) {
    diag.Error(field.loc, "", absl::StrCat("the document is empty; ", expected));
    return std::nullopt;
  }
  if (!root.IsMap()) {
    diag.Error(field.loc, "",
               absl::StrCat("the top level is a ", root.IsSequence() ? "list" : "single value",
                            "; ", expected));
    return std::nullopt;
  }
  return field;
}

}  // namespace paceline::yaml_internal
