#pragma once
// Random, valid pool and job specs for property tests (test-only code).
//
// Every spec returned passes ValidatePoolSpec / ValidateJobSpec and exercises the corners of
// the YAML form: strings that look like YAML syntax, numbers or booleans, multi-line text,
// non-ASCII text, extreme counts and priorities, fractional GPUs, every constraint kind.
// Deterministic for a given engine state, so a failing seed can be replayed.
//
// Thread-safety: pure functions of the engine passed in.

#include <random>

#include "spec/job_spec.h"
#include "spec/pool_spec.h"

namespace paceline {

PoolSpec RandomPoolSpec(std::mt19937_64& rng);
JobSpec RandomJobSpec(std::mt19937_64& rng);

}  // namespace paceline
