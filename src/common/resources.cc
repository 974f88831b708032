#include "common/resources.h"

#include "absl/strings/str_cat.h"
#include "common/units.h"

namespace paceline {

absl::string_view DimName(Dim d) {
  switch (d) {
    case Dim::kCpu:
      return "cpu";
    case Dim::kMemory:
      return "memory";
    case Dim::kDisk:
      return "disk";
    case Dim::kGpu:
      return "gpu";
  }
  return "?";
}

std::optional<Dim> DimFromName(absl::string_view name) {
  for (Dim d : kAllDims) {
    if (DimName(d) == name) return d;
  }
  return std::nullopt;
}

std::optional<Dim> Resources::FirstExceeding(const Resources& capacity) const {
  for (Dim d : kAllDims) {
    if ((*this)[d] > capacity[d]) return d;
  }
  return std::nullopt;
}

std::optional<Resources> CheckedAdd(const Resources& a, const Resources& b) {
  Resources r;
  for (int i = 0; i < kNumDims; ++i) {
    if (__builtin_add_overflow(a.v_[i], b.v_[i], &r.v_[i])) return std::nullopt;
  }
  return r;
}

std::optional<Resources> CheckedMultiply(const Resources& a, int64_t n) {
  if (n < 0) return std::nullopt;
  Resources r;
  for (int i = 0; i < kNumDims; ++i) {
    if (__builtin_mul_overflow(a.v_[i], n, &r.v_[i])) return std::nullopt;
  }
  return r;
}

std::string Resources::ToString() const {
  return absl::StrCat("cpu=", FormatCpu(cpu_milli()), " memory=", FormatBytes(memory_bytes()),
                      " disk=", FormatBytes(disk_bytes()), " gpu=", FormatGpu(gpu_milli()));
}

}  // namespace paceline
