#include "placement/scorers/random_scorer.h"

namespace paceline::placement {
namespace {

// splitmix64 finaliser: a fast, well-mixed hash of one 64-bit word.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

double RandomScorer::Score(const ScoreInput& in) const {
  uint64_t h = Mix(Mix(Mix(in.env.seed) ^ in.env.sequence) ^ in.host.id().value());
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace paceline::placement
