#pragma once
// Parsing the stored job specs of a whole load on a thread of its own, while the loader goes on
// reading the tasks: at a restart, parsing every job's spec (YAML) is about a third of the
// load's CPU, and the two overlap on two cores.
//
//   std::vector<std::string> texts;                 // texts[i] is jobs[i]'s spec
//   ... read the jobs, leaving their spec empty, and their texts ...
//   SpecParsing parsing(std::move(texts), &jobs);   // starts
//   absl::Status tasks = ReadTasks(...);            // meanwhile
//   RETURN_IF_ERROR(parsing.Wait());                // jobs[i].spec is set
//   RETURN_IF_ERROR(tasks);
//
// Wait() answers DATA_LOSS naming the first job whose spec does not parse (BadRow), as a
// loader that parses each row as it reads it would. Fewer than kThreadFrom specs (one job read
// back, a follower's small batch of changes) are parsed at once, on the caller's thread: a
// thread is not worth it for them.
//
// Thread-safety: `jobs` must not be touched (nor resized) until Wait() returns; the destructor
// waits too.

#include <future>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "records/records.h"

namespace paceline::store {

// Parses texts[i] into jobs[i].spec, on this thread; DATA_LOSS (BadRow) at the first that does
// not parse.
absl::Status ParseStoredSpecs(const std::vector<std::string>& texts,
                              std::vector<records::JobRecord>& jobs);

class SpecParsing {
 public:
  static constexpr size_t kThreadFrom = 256;

  // `threads`: 1, or 2 to parse the two halves at once (when the caller has nothing to do
  // meanwhile on the second core).
  SpecParsing(std::vector<std::string> texts, std::vector<records::JobRecord>* jobs,
              int threads = 1);
  ~SpecParsing();
  SpecParsing(const SpecParsing&) = delete;
  SpecParsing& operator=(const SpecParsing&) = delete;

  // Waits for the parsing; its result (OK the first time only; later calls answer OK).
  absl::Status Wait();

 private:
  std::vector<std::future<absl::Status>> done_;  // when parsed on threads
  absl::Status parsed_;                          // when parsed at once
};

}  // namespace paceline::store
