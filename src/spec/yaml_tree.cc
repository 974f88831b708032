// ReadYaml: libyaml's events into an immutable tree (see yaml_tree.h).

#include "spec/yaml_tree.h"

#include <yaml.h>

#include <algorithm>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/yaml.h"

namespace paceline::yaml_internal {

struct Node::Tree {
  struct Entry {
    Kind kind = Kind::kNull;
    bool quoted = false;
    bool open = false;  // a collection whose end has not been read yet (building only)
    Mark mark;
    std::string text;  // a scalar's
    std::string tag;
    uint32_t first = 0;  // children[first, first + count): items, or key, value, key, value...
    uint32_t count = 0;
  };
  std::vector<Entry> nodes;
  std::vector<uint32_t> children;
};

namespace {

const std::string& Empty() {
  static const std::string* empty = new std::string();
  return *empty;
}

bool IsNullText(absl::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

}  // namespace

// Builds one document's tree from either parser's events. Tags are "" for none.
class TreeBuilder {
 public:
  void Scalar(Mark mark, std::string text, std::string tag, bool quoted, bool null,
              const std::string& anchor) {
    Add({null ? Node::Kind::kNull : Node::Kind::kScalar, quoted, false, mark,
         null ? "" : std::move(text), std::move(tag)},
        anchor);
  }
  void Start(Node::Kind kind, Mark mark, std::string tag, const std::string& anchor) {
    open_.push_back(Add({kind, false, true, mark, "", std::move(tag)}, anchor));
    open_from_.push_back(pending_.size());
  }
  void End() {
    if (open_.empty()) return;
    Node::Tree::Entry& e = tree_->nodes[open_.back()];
    e.first = static_cast<uint32_t>(tree_->children.size());
    e.count = static_cast<uint32_t>(pending_.size() - open_from_.back());
    e.open = false;
    tree_->children.insert(tree_->children.end(), pending_.begin() + open_from_.back(),
                           pending_.end());
    pending_.resize(open_from_.back());
    open_.pop_back();
    open_from_.pop_back();
  }
  // An error message, or nullopt.
  std::optional<std::string> Alias(const std::string& anchor) {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) return "the referenced anchor is not defined";
    if (tree_->nodes[it->second].open) return "an alias refers to a list or map that holds it";
    Attach(it->second);
    return std::nullopt;
  }
  Node Root() const { return root_ ? Node(tree_, *root_) : Node(); }

 private:
  uint32_t Add(Node::Tree::Entry e, const std::string& anchor) {
    auto index = static_cast<uint32_t>(tree_->nodes.size());
    tree_->nodes.push_back(std::move(e));
    if (!anchor.empty()) anchors_[anchor] = index;
    Attach(index);
    return index;
  }
  void Attach(uint32_t index) {
    if (open_.empty()) {
      root_ = index;
    } else {
      pending_.push_back(index);
    }
  }

  std::shared_ptr<Node::Tree> tree_ = std::make_shared<Node::Tree>();
  std::vector<uint32_t> pending_;  // children of the open collections, innermost last
  std::vector<uint32_t> open_;     // the open collections
  std::vector<size_t> open_from_;  // where each one's children start in pending_
  absl::flat_hash_map<std::string, uint32_t> anchors_;
  std::optional<uint32_t> root_;
};

namespace {

// ---------------------------------------------------------------------------------------------
// libyaml

Mark MarkOf(const yaml_mark_t& m) {
  return Mark{static_cast<int>(m.line), static_cast<int>(m.column)};
}

std::string Text(const yaml_char_t* s) {
  return s == nullptr ? "" : std::string(reinterpret_cast<const char*>(s));
}

// Owns a libyaml parser and its current event.
class Parser {
 public:
  explicit Parser(absl::string_view text) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                 text.size());
  }
  ~Parser() {
    if (has_event_) yaml_event_delete(&event_);
    yaml_parser_delete(&parser_);
  }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  // The next event, or nullptr after a syntax error.
  const yaml_event_t* Next() {
    if (has_event_) yaml_event_delete(&event_);
    has_event_ = yaml_parser_parse(&parser_, &event_) != 0;
    return has_event_ ? &event_ : nullptr;
  }

 private:
  yaml_parser_t parser_;
  yaml_event_t event_;
  bool has_event_ = false;
};

// An error message, or nullopt.
std::optional<std::string> Feed(const yaml_event_t& e, TreeBuilder& b) {
  switch (e.type) {
    case YAML_SCALAR_EVENT: {
      const auto& s = e.data.scalar;
      std::string text(reinterpret_cast<const char*>(s.value), s.length);
      std::string tag = Text(s.tag);
      const bool plain = s.style == YAML_PLAIN_SCALAR_STYLE;
      const bool null = plain && s.tag == nullptr && IsNullText(text);
      b.Scalar(MarkOf(e.start_mark), std::move(text), tag == "!" ? "" : tag, !plain || tag == "!",
               null, Text(s.anchor));
      return std::nullopt;
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
      const bool seq = e.type == YAML_SEQUENCE_START_EVENT;
      std::string tag = Text(seq ? e.data.sequence_start.tag : e.data.mapping_start.tag);
      b.Start(seq ? Node::Kind::kSequence : Node::Kind::kMap, MarkOf(e.start_mark),
              tag == "!" ? "" : tag,
              Text(seq ? e.data.sequence_start.anchor : e.data.mapping_start.anchor));
      return std::nullopt;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
      b.End();
      return std::nullopt;
    case YAML_ALIAS_EVENT:
      return b.Alias(Text(e.data.alias.anchor));
    default:
      return std::nullopt;
  }
}

// nullopt when libyaml does not read the text (a syntax error, or a YAML 1.2 form it lacks).
std::optional<YamlText> ReadWithLibyaml(absl::string_view text) {
  YamlText out;
  Parser parser(text);
  TreeBuilder builder;
  bool in_first = false;
  while (true) {
    const yaml_event_t* e = parser.Next();
    if (e == nullptr) return std::nullopt;
    switch (e->type) {
      case YAML_STREAM_END_EVENT:
        return out;
      case YAML_DOCUMENT_START_EVENT:
        if (++out.documents == 2) {
          out.second_start = MarkOf(e->start_mark);
          return out;
        }
        in_first = true;
        break;
      case YAML_DOCUMENT_END_EVENT:
        in_first = false;
        out.root = builder.Root();
        break;
      default:
        if (in_first && Feed(*e, builder)) return std::nullopt;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// yaml-cpp: what libyaml does not read
//
// yaml-cpp 0.7's LoadAll() loops forever, allocating, on some malformed input (a stray ','
// makes its parser return the same empty document again and again without consuming the
// token; upstream issue jbeder/yaml-cpp#1040, fixed after 0.7 by PR #1319). So its events are
// walked for at most three documents, stopping when the parser makes no progress.

Mark MarkOf(const YAML::Mark& m) { return Mark{m.line, m.column}; }

// Builds the first document and remembers where each one starts.
class YamlCppEvents : public YAML::EventHandler {
 public:
  struct Document {
    YAML::Mark start;
    YAML::Mark first_node;
    int events = 0;
    bool only_null = true;
  };
  const std::vector<Document>& documents() const { return documents_; }
  TreeBuilder& builder() { return builder_; }
  const std::optional<YamlText::Error>& error() const { return error_; }

  void OnDocumentStart(const YAML::Mark& mark) override { documents_.push_back({mark, mark}); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (Count(mark, true)) builder_.Scalar(MarkOf(mark), "", "", false, true, Anchor(anchor));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (!Count(mark, false)) return;
    if (std::optional<std::string> bad = builder_.Alias(Anchor(anchor)); bad && !error_) {
      error_ = YamlText::Error{MarkOf(mark), *std::move(bad)};
    }
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (Count(mark, false)) {
      builder_.Scalar(MarkOf(mark), value, Tag(tag), tag == "!", false, Anchor(anchor));
    }
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(Node::Kind::kSequence, mark, tag, anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(Node::Kind::kMap, mark, tag, anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  void Open(Node::Kind kind, const YAML::Mark& mark, const std::string& tag,
            YAML::anchor_t anchor) {
    if (Count(mark, false)) builder_.Start(kind, MarkOf(mark), Tag(tag), Anchor(anchor));
  }
  void Close() {
    if (documents_.size() == 1) builder_.End();
  }
  // Counts a node of the current document; true when it belongs to the first (to be built).
  bool Count(const YAML::Mark& mark, bool null) {
    if (documents_.empty()) return false;
    Document& d = documents_.back();
    if (d.events++ == 0) d.first_node = mark;
    d.only_null &= null;
    return documents_.size() == 1;
  }
  static std::string Anchor(YAML::anchor_t a) { return a == 0 ? "" : absl::StrCat(a); }
  // yaml-cpp gives "?" to plain scalars and untagged collections, "!" to quoted scalars.
  static std::string Tag(const std::string& t) { return t == "?" || t == "!" ? "" : t; }

  std::vector<Document> documents_;
  TreeBuilder builder_;
  std::optional<YamlText::Error> error_;
};

YamlText ReadWithYamlCpp(absl::string_view text) {
  YamlText out;
  const std::string input(text);
  std::istringstream in(input);
  YamlCppEvents events;
  try {
    YAML::Parser parser(in);
    // Three documents: a stray ',' after a first one shows as a second that moves on, then a
    // third that does not.
    while (out.documents < 3 && parser.HandleNextDocument(events)) {
      const auto& docs = events.documents();
      if (docs.size() >= 2) {
        const YamlCppEvents::Document& prev = docs[docs.size() - 2];
        const YamlCppEvents::Document& cur = docs.back();
        if (cur.only_null && cur.start.pos == cur.first_node.pos &&
            cur.start.pos <= prev.start.pos) {
          const auto pos = static_cast<size_t>(cur.start.pos);
          std::string what = pos < input.size()
                                 ? absl::StrCat("'", absl::CHexEscape(input.substr(pos, 1)), "'")
                                 : "end of input";
          out.error = YamlText::Error{MarkOf(cur.start), absl::StrCat("unexpected ", what)};
          return out;
        }
      }
      ++out.documents;
    }
  } catch (const YAML::Exception& e) {
    out.error = YamlText::Error{MarkOf(e.mark), e.msg};
    return out;
  }
  if (events.error()) {
    out.error = events.error();
    return out;
  }
  out.documents = std::min(out.documents, 2);
  if (events.documents().size() >= 2) out.second_start = MarkOf(events.documents()[1].start);
  if (out.documents >= 1) out.root = events.builder().Root();
  return out;
}

}  // namespace

YamlText ReadYaml(absl::string_view text) {
  if (std::optional<YamlText> read = ReadWithLibyaml(text)) return *std::move(read);
  return ReadWithYamlCpp(text);
}

// ---------------------------------------------------------------------------------------------
// Node

Node::Kind Node::kind() const {
  return tree_ == nullptr ? Kind::kUndefined : tree_->nodes[index_].kind;
}

const std::string& Node::Scalar() const {
  return tree_ == nullptr ? Empty() : tree_->nodes[index_].text;
}

const std::string& Node::Tag() const {
  return tree_ == nullptr ? Empty() : tree_->nodes[index_].tag;
}

bool Node::quoted() const { return tree_ != nullptr && tree_->nodes[index_].quoted; }

Mark Node::mark() const { return tree_ == nullptr ? Mark{} : tree_->nodes[index_].mark; }

size_t Node::size() const {
  if (tree_ == nullptr) return 0;
  const Tree::Entry& e = tree_->nodes[index_];
  return e.kind == Kind::kMap ? e.count / 2 : e.kind == Kind::kSequence ? e.count : 0;
}

Node Node::item(size_t i) const {
  return Node(tree_, tree_->children[tree_->nodes[index_].first + i]);
}

Node Node::key(size_t i) const {
  return Node(tree_, tree_->children[tree_->nodes[index_].first + 2 * i]);
}

Node Node::value(size_t i) const {
  return Node(tree_, tree_->children[tree_->nodes[index_].first + 2 * i + 1]);
}

Node Node::operator[](absl::string_view k) const {
  if (!IsMap()) return Node();
  for (size_t i = 0; i < size(); ++i) {
    Node candidate = key(i);
    if (candidate.IsScalar() && candidate.Scalar() == k) return value(i);
  }
  return Node();
}

}  // namespace paceline::yaml_internal
