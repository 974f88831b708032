#include "placement/explanation.h"

#include "absl/strings/str_cat.h"
#include "common/units.h"

namespace paceline::placement {
namespace {

std::string Render(const std::vector<RejectionCount>& rs, absl::string_view best_word) {
  std::string out;
  for (size_t i = 0; i < rs.size(); ++i) {
    const RejectionCount& r = rs[i];
    if (i > 0) absl::StrAppend(&out, ", ");
    absl::StrAppend(&out, WithThousands(r.hosts), " ", r.reason);
    if (r.dimension && r.filter == "resource_fit") {
      absl::StrAppend(&out, " (asked ", FormatAmount(*r.dimension, r.asked), ", ", best_word, " ",
                      FormatAmount(*r.dimension, r.best_available), ")");
    }
  }
  return out;
}

}  // namespace

std::string WithThousands(int64_t n) {
  std::string digits = absl::StrCat(n < 0 ? -n : n);
  std::string out;
  int lead = static_cast<int>(digits.size()) % 3;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (static_cast<int>(i) - lead) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return n < 0 ? "-" + out : out;
}

std::string FormatAmount(Dim d, int64_t v) {
  switch (d) {
    case Dim::kCpu:
      return FormatCpu(v);
    case Dim::kGpu:
      return FormatGpu(v);
    case Dim::kMemory:
    case Dim::kDisk:
      return FormatBytesApprox(v);
  }
  return absl::StrCat(v);
}

const RejectionCount* Explanation::ShortestResource() const {
  const RejectionCount* best = nullptr;
  for (const RejectionCount& r : rejections) {
    if (r.filter == "resource_fit" && (best == nullptr || r.hosts > best->hosts)) best = &r;
  }
  return best;
}

std::string Explanation::OneLine() const {
  std::string out;
  if (gang_size > 1) {
    absl::StrAppend(&out, "gang of ", WithThousands(gang_size));
    if (gang_placed > 0)
      absl::StrAppend(&out, " (", WithThousands(gang_placed), " placed, released)");
    absl::StrAppend(&out, ": ");
  }
  if (never_fits) {
    absl::StrAppend(&out, "never fits any of ", WithThousands(hosts_considered), " hosts");
    if (!never_fits_reasons.empty()) {
      absl::StrAppend(&out, ": ", Render(never_fits_reasons, "largest"));
    }
    return out;
  }
  absl::StrAppend(&out, WithThousands(hosts_feasible), "/", WithThousands(hosts_considered),
                  " hosts");
  if (!rejections.empty()) absl::StrAppend(&out, ": ", Render(rejections, "best"));
  return out;
}

}  // namespace paceline::placement
