// LoadDocument: one YAML document, a map at the top (see yaml_reader.h).

#include <exception>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "spec/yaml_reader.h"

namespace paceline::yaml_internal {
namespace {

// The 1-based line of the "---" that starts the second document (the first marker after the
// first document's root), or 0 when there is none (e.g. documents separated by "...").
int SecondDocumentLine(absl::string_view text, int first_root_line) {
  int line = 0;
  int seen = 0;
  for (absl::string_view l : absl::StrSplit(text, '\n')) {
    ++line;
    bool marker = absl::StartsWith(l, "---") && (l.size() == 3 || l[3] == ' ' || l[3] == '\r');
    if (!marker) continue;
    ++seen;
    if ((first_root_line > 0 && line > first_root_line) || (first_root_line <= 0 && seen == 2)) {
      return line;
    }
  }
  return 0;
}

}  // namespace

std::optional<Field> LoadDocument(absl::string_view text, absl::string_view what,
                                  Diagnostics& diag) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    diag.Error(ToLocation(e.mark), "", absl::StrCat("YAML syntax error: ", e.msg));
    return std::nullopt;
  } catch (const std::exception& e) {
    diag.Error(Location{}, "", absl::StrCat("cannot read the YAML: ", e.what()));
    return std::nullopt;
  }
  std::string expected = absl::StrCat("expected a ", what, ": a YAML map of keys to values");
  if (docs.empty()) {
    diag.Error(Location{}, "", absl::StrCat("the file is empty; ", expected));
    return std::nullopt;
  }
  const YAML::Node& root = docs[0];
  if (docs.size() > 1) {
    int first_line = root.Mark().line < 0 ? 0 : root.Mark().line + 1;
    int line = SecondDocumentLine(text, first_line);
    Location second = line > 0 ? Location{line, 1} : ToLocation(docs[1].Mark());
    diag.Error(
        second, "",
        absl::StrCat("the file holds ", docs.size(), " YAML documents; expected exactly one ", what,
                     " (remove the '---' separators)"));
    return std::nullopt;
  }
  Field field{root, ToLocation(root.Mark()), ""};
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
