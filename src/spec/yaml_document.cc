// LoadDocument: one YAML document, a map at the top (see yaml_reader.h).
//
// yaml-cpp 0.7's LoadAll() loops forever, allocating, on some malformed input (a stray ','
// makes its parser return the same empty document again and again without consuming the
// token; upstream issue jbeder/yaml-cpp#1040, fixed after 0.7 by PR #1319). So documents are
// counted with a bounded walk over parser events that stops when the parser makes no
// progress, and only then is the single document loaded with YAML::Load.

#include <exception>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "spec/yaml_reader.h"
#include "yaml-cpp/eventhandler.h"

namespace paceline::yaml_internal {
namespace {

// Remembers where each document starts and whether it holds only an empty node.
class DocumentScanner : public YAML::EventHandler {
 public:
  struct Document {
    YAML::Mark start;
    YAML::Mark first_node;
    int events = 0;
    bool only_null = true;
  };
  const std::vector<Document>& documents() const { return documents_; }

  void OnDocumentStart(const YAML::Mark& mark) override { documents_.push_back({mark, mark}); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark, true); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark, false); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Node(mark, false);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Node(mark, false);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Node(mark, false);
  }
  void OnMapEnd() override {}

 private:
  void Node(const YAML::Mark& mark, bool null) {
    if (documents_.empty()) return;
    Document& d = documents_.back();
    if (d.events++ == 0) d.first_node = mark;
    d.only_null &= null;
  }
  std::vector<Document> documents_;
};

// What the document count tells.
struct Scan {
  int documents = 0;
  YAML::Mark second_start;  // where the second document starts, if any
  bool stuck = false;       // the parser stopped consuming input at `stuck_at`
  YAML::Mark stuck_at;
};

// Walks at most three documents (enough to tell 0, 1 or "several").
Scan ScanDocuments(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentScanner scanner;
  Scan scan;
  while (scan.documents < 3 && parser.HandleNextDocument(scanner)) {
    const auto& docs = scanner.documents();
    if (docs.size() >= 2) {
      const DocumentScanner::Document& prev = docs[docs.size() - 2];
      const DocumentScanner::Document& cur = docs.back();
      if (cur.only_null && cur.start.pos == cur.first_node.pos && cur.start.pos <= prev.start.pos) {
        scan.stuck = true;
        scan.stuck_at = cur.start;
        return scan;
      }
    }
    ++scan.documents;
  }
  if (scanner.documents().size() >= 2) scan.second_start = scanner.documents()[1].start;
  return scan;
}

}  // namespace

std::optional<Field> LoadDocument(absl::string_view text, absl::string_view what,
                                  Diagnostics& diag) {
  std::string input(text);
  std::string expected = absl::StrCat("expected a ", what, ": a YAML map of keys to values");
  YAML::Node root;
  try {
    Scan scan = ScanDocuments(input);
    if (scan.stuck) {
      size_t pos = static_cast<size_t>(scan.stuck_at.pos);
      std::string what_char = pos < input.size() ? Quote(input.substr(pos, 1)) : "end of input";
      diag.Error(ToLocation(scan.stuck_at), "",
                 absl::StrCat("YAML syntax error: unexpected ", what_char));
      return std::nullopt;
    }
    if (scan.documents == 0) {
      diag.Error(Location{}, "", absl::StrCat("the file is empty; ", expected));
      return std::nullopt;
    }
    if (scan.documents > 1) {
      diag.Error(ToLocation(scan.second_start), "",
                 absl::StrCat("the file holds more than one YAML document; expected exactly one ",
                              what, " (remove the '---' separators)"));
      return std::nullopt;
    }
    root = YAML::Load(input);
  } catch (const YAML::Exception& e) {
    diag.Error(ToLocation(e.mark), "", absl::StrCat("YAML syntax error: ", e.msg));
    return std::nullopt;
  } catch (const std::exception& e) {
    diag.Error(Location{}, "", absl::StrCat("cannot read the YAML: ", e.what()));
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
