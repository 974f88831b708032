#pragma once
// SeededRandom: the one source of randomness of the FGD protocol runs, specified down to the
// bit so that a seed gives the same runs with every standard library (std::shuffle and
// std::uniform_int_distribution are implementation-defined): std::mt19937_64, a bounded draw
// by rejection (Below), and a Fisher-Yates shuffle from the back (Shuffle).
//
// Thread-safety: none; one per run.

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace paceline::sim::paper {

class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, n); n > 0.
  uint64_t Below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // a multiple of n
    uint64_t x = engine_();
    while (x >= limit) x = engine_();
    return x % n;
  }

  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[Below(i)]);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace paceline::sim::paper
