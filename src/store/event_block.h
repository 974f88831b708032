#pragma once
// Event blocks: how the SQLite store keeps task events. One block holds the events of one job
// that one commit wrote, in the order they were written, so that a cycle launching 5,000 tasks
// of a job writes one row of events instead of 5,000 rows and their index entries.
//
// Format (little-endian base-128 varints, "v"; strings are a varint length and the bytes):
//   block := 0x01 (format) v:count event*count
//   event := v:instance v:run v:zigzag(at_us) u8:state str:host str:reason str:message
// DecodeEventBlock validates everything (format, counts, lengths, states, trailing bytes) and
// answers DATA_LOSS naming what is wrong: a block that does not decode cannot be trusted.
//
// Thread-safety: pure functions.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/ids.h"
#include "records/records.h"

namespace paceline::store {

// The events, all of one job, in order.
std::string EncodeEventBlock(const std::vector<const records::TaskEvent*>& events);
// Appends the block's events (of job `job`) to `out`; on error `out` is unchanged.
absl::Status DecodeEventBlock(JobId job, absl::string_view block,
                              std::vector<records::TaskEvent>& out);

// What the backends that keep blocks share when they read them:
// Moves the events of `instance` in `block` (decoded, in commit order) to `newest_first`,
// newest first, until it holds `limit` (0: no limit); returns whether it wants more.
bool TakeNewestOfInstance(std::vector<records::TaskEvent>& block, uint32_t instance, size_t limit,
                          std::vector<records::TaskEvent>& newest_first);
// Orders events[from..] by instance, keeping commit order within one.
void SortEventsByInstance(std::vector<records::TaskEvent>& events, size_t from = 0);

}  // namespace paceline::store
