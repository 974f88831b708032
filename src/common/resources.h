#pragma once
// Resources: the fixed-size resource vector, the hottest type in Paceline.
//
// A Resources value holds one signed 64-bit integer per dimension, in the dimension's base unit:
//   cpu     millicores          (1 core = 1000)
//   memory  bytes
//   disk    bytes
//   gpu     milli-GPUs          (1 whole device = 1000; 0.5 = 500 = half of one device)
// Arithmetic is plain integer arithmetic on all four lanes; there is no heap allocation and no
// branching on units, so adding and comparing vectors costs a few instructions. Values may go
// negative through subtraction (e.g. "free = capacity - allocated" on an over-committed host);
// IsNonNegative() tells. Parsing and printing of human units lives in units.h.
//
// Thread-safety: a value type; no shared state.

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"

namespace paceline {

enum class Dim : uint8_t { kCpu = 0, kMemory = 1, kDisk = 2, kGpu = 3 };
inline constexpr int kNumDims = 4;
inline constexpr std::array<Dim, kNumDims> kAllDims = {Dim::kCpu, Dim::kMemory, Dim::kDisk,
                                                       Dim::kGpu};

// "cpu", "memory", "disk", "gpu".
absl::string_view DimName(Dim d);
// The inverse of DimName; nullopt for an unknown name.
std::optional<Dim> DimFromName(absl::string_view name);

inline constexpr int64_t kMilliPerUnit = 1000;  // cpu millicores per core, milli-GPUs per GPU.

class Resources {
 public:
  constexpr Resources() = default;
  static constexpr Resources Of(int64_t cpu_milli, int64_t memory_bytes, int64_t disk_bytes = 0,
                                int64_t gpu_milli = 0) {
    Resources r;
    r.v_ = {cpu_milli, memory_bytes, disk_bytes, gpu_milli};
    return r;
  }
  // Every dimension set to `value` (e.g. Resources::Filled(kUnlimited)).
  static constexpr Resources Filled(int64_t value) {
    Resources r;
    r.v_.fill(value);
    return r;
  }

  constexpr int64_t operator[](Dim d) const { return v_[static_cast<int>(d)]; }
  constexpr int64_t& operator[](Dim d) { return v_[static_cast<int>(d)]; }
  constexpr int64_t at(int i) const { return v_[i]; }
  constexpr int64_t& at(int i) { return v_[i]; }

  constexpr int64_t cpu_milli() const { return v_[0]; }
  constexpr int64_t memory_bytes() const { return v_[1]; }
  constexpr int64_t disk_bytes() const { return v_[2]; }
  constexpr int64_t gpu_milli() const { return v_[3]; }

  constexpr Resources& operator+=(const Resources& o) {
    for (int i = 0; i < kNumDims; ++i) v_[i] += o.v_[i];
    return *this;
  }
  constexpr Resources& operator-=(const Resources& o) {
    for (int i = 0; i < kNumDims; ++i) v_[i] -= o.v_[i];
    return *this;
  }
  friend constexpr Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend constexpr Resources operator-(Resources a, const Resources& b) { return a -= b; }
  // Scales every dimension by an integer count (n identical tasks).
  friend constexpr Resources operator*(Resources a, int64_t n) {
    for (int i = 0; i < kNumDims; ++i) a.v_[i] *= n;
    return a;
  }
  friend constexpr bool operator==(const Resources&, const Resources&) = default;

  // True when every dimension of *this is <= the same dimension of `capacity`.
  constexpr bool FitsIn(const Resources& capacity) const {
    bool ok = true;
    for (int i = 0; i < kNumDims; ++i) ok &= v_[i] <= capacity.v_[i];
    return ok;
  }
  // True when every dimension of *this is >= the same dimension of `other`.
  constexpr bool Dominates(const Resources& other) const { return other.FitsIn(*this); }
  // True when every dimension is zero.
  constexpr bool IsZero() const { return *this == Resources(); }
  constexpr bool IsNonNegative() const {
    bool ok = true;
    for (int i = 0; i < kNumDims; ++i) ok &= v_[i] >= 0;
    return ok;
  }
  // The first dimension where *this exceeds `capacity`, if any.
  std::optional<Dim> FirstExceeding(const Resources& capacity) const;

  friend constexpr Resources Min(const Resources& a, const Resources& b) {
    Resources r;
    for (int i = 0; i < kNumDims; ++i) r.v_[i] = std::min(a.v_[i], b.v_[i]);
    return r;
  }
  friend constexpr Resources Max(const Resources& a, const Resources& b) {
    Resources r;
    for (int i = 0; i < kNumDims; ++i) r.v_[i] = std::max(a.v_[i], b.v_[i]);
    return r;
  }
  // max(a - b, 0) per dimension.
  friend constexpr Resources SubtractClamped(const Resources& a, const Resources& b) {
    Resources r;
    for (int i = 0; i < kNumDims; ++i) r.v_[i] = std::max<int64_t>(a.v_[i] - b.v_[i], 0);
    return r;
  }

  // Overflow-checked sum; nullopt when any dimension would overflow int64.
  friend std::optional<Resources> CheckedAdd(const Resources& a, const Resources& b);
  // Overflow-checked scaling by a non-negative count; nullopt on overflow.
  friend std::optional<Resources> CheckedMultiply(const Resources& a, int64_t n);

  // "cpu=1.5 memory=2Gi disk=0 gpu=0.5" (see units.h for the formats).
  std::string ToString() const;

 private:
  std::array<int64_t, kNumDims> v_{};
};

// The largest representable amount; used for "no limit".
inline constexpr int64_t kUnlimited = INT64_MAX;

}  // namespace paceline
