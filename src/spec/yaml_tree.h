#pragma once
// A YAML text read with libyaml into a small immutable tree, for the strict spec readers
// (yaml_reader.h). Internal to src/spec and the readers built on it (src/peloton, src/sim, the
// agent's CDI specs in src/agent/devices/cdi.cc).
//
// Two parsers feed the same tree:
//   - libyaml reads every text it can: a ten-line job spec in about 8 us with the readers on top
//     (spec_bench), where yaml-cpp's YAML::Load took 59 us. A restarting master reads one
//     stored spec per job: at 124,600 jobs that was 7 s of CPU.
//   - yaml-cpp reads what libyaml does not: a syntax error, reported with yaml-cpp's message and
//     position as before, and the YAML 1.2 forms libyaml (YAML 1.1) lacks, such as a plain
//     scalar starting with ':' in a flow list, which yaml-cpp's emitter writes (spec_printer.cc
//     prints specs with it, and stores hold such texts).
//
// What a node is, as the readers need it:
//   - a plain scalar that is empty, ~, null, Null or NULL is null; every other scalar (a quoted
//     "null" too) is a scalar;
//   - quoted(): a scalar written in quotes, as a block (| or >), or with the non-specific tag
//     '!': a string, never a number or a boolean;
//   - Tag(): an explicit tag as libyaml resolves it ("tag:yaml.org,2002:str" for !!str); "" for
//     none and for the non-specific '!';
//   - an alias is the very node its anchor names (shared, not copied), with the anchor's mark;
//     an alias to a collection from inside that collection is an error (no cycles);
//   - a map keeps its pairs in document order, duplicate keys included (the readers report
//     them).
// Marks are 0-based: the line and column where a node starts.
//
// Thread-safety: a Node is immutable; copies share the tree (reference counted).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace paceline::yaml_internal {

struct Mark {
  int line = -1;  // 0-based; -1: unknown
  int column = -1;
};

class Node {
 public:
  enum class Kind : uint8_t { kUndefined, kNull, kScalar, kSequence, kMap };

  Node() = default;  // undefined: what a missing key gives
  Kind kind() const;
  bool IsDefined() const { return tree_ != nullptr; }
  explicit operator bool() const { return IsDefined(); }
  bool IsNull() const { return kind() == Kind::kNull; }
  bool IsScalar() const { return kind() == Kind::kScalar; }
  bool IsSequence() const { return kind() == Kind::kSequence; }
  bool IsMap() const { return kind() == Kind::kMap; }

  const std::string& Scalar() const;  // a scalar's text; "" for any other node
  const std::string& Tag() const;
  bool quoted() const;
  Mark mark() const;

  size_t size() const;         // a sequence's items, a map's pairs; 0 otherwise
  Node item(size_t i) const;   // a sequence's i-th item (i < size())
  Node key(size_t i) const;    // a map's i-th pair (i < size())
  Node value(size_t i) const;  //
  // The value of a map's first pair whose key is the scalar `k`; undefined when there is none.
  Node operator[](absl::string_view k) const;

  struct Tree;  // yaml_tree.cc

 private:
  friend class TreeBuilder;
  Node(std::shared_ptr<const Tree> tree, uint32_t index) : tree_(std::move(tree)), index_(index) {}
  std::shared_ptr<const Tree> tree_;
  uint32_t index_ = 0;
};

// What reading a text found. Reading stops at the start of a second document.
struct YamlText {
  int documents = 0;  // 0, 1, or 2 for "more than one"
  Node root;          // the first document's root (when documents >= 1 and no error)
  Mark second_start;  // where the second document starts (documents == 2)
  struct Error {
    Mark mark;
    std::string message;  // e.g. "illegal map value", "the referenced anchor is not defined"
  };
  std::optional<Error> error;  // a syntax error before the second document's start
};
YamlText ReadYaml(absl::string_view text);

}  // namespace paceline::yaml_internal
