#include "cli/table.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "common/check.h"

namespace paceline::cli {

void Table::AddRow(std::vector<std::string> cells) {
  PL_CHECK(cells.size() == headers_.size())
      << "row has " << cells.size() << " cells, table has " << headers_.size() << " columns";
  rows_.push_back(std::move(cells));
}

std::string Table::Render() const {
  std::vector<size_t> width(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  auto emit = [&](const std::vector<std::string>& cells, bool upper) {
    std::string line;
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string cell = upper ? absl::AsciiStrToUpper(cells[c]) : cells[c];
      line += cell;
      if (c + 1 < cells.size()) line += std::string(width[c] - cell.size() + 2, ' ');
    }
    out += line + "\n";
  };
  emit(headers_, true);
  for (const auto& row : rows_) emit(row, false);
  return out;
}

}  // namespace paceline::cli
