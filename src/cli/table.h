#pragma once
// Table: the readable default output of client commands — left-aligned columns separated by
// two spaces, headers in upper case. `-o json` prints JSON instead (see output.h).
//
// Thread-safety: a value type.

#include <string>
#include <vector>

namespace paceline::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  // A row must have as many cells as there are headers (a programming error otherwise).
  void AddRow(std::vector<std::string> cells);
  std::string Render() const;
  size_t size() const { return rows_.size(); }

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace paceline::cli
