#pragma once
// Task rows: how the SQLite store keeps a task record. The key (job, instance) is the row's
// primary key; everything else is one blob, so that reading a row at a restart is three column
// reads instead of seventeen (at 10 million tasks that is most of the start's time).
//
// Format (little-endian base-128 varints, "v"; "z" a zigzag varint; strings a varint length
// and the bytes; the bracketed times are present when their flag is set):
//   row   := 0x01 (format) u8:flags v:run u8:state str:host [z:started_us] [z:finished_us]
//            z:exit_code z:signal str:reason str:message v:failures [z:not_before_us]
//            v:spec_version v:next_spec_version str:volume_host [v:gang_attempt]
//            [str:health str:readiness] [v:count v:port...]
//   flags := 1 started_at set | 2 finished_at set | 4 not_before set | 8 restart_requested |
//            16 gang_attempt set (not zero; rows written before gang restarts never have it) |
//            32 checks set (health or readiness not empty) | 64 ports set (not empty)
// Rows written before a flag existed never have it set, so they read back as before.
// A time that is not set is absl::InfinitePast(), as in TaskRecord. DecodeTaskRow validates
// everything (format, flags, widths, state, lengths, trailing bytes) and answers DATA_LOSS
// naming the task and what is wrong: a row that does not decode cannot be trusted.
//
// Thread-safety: pure functions.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/ids.h"
#include "records/records.h"

namespace paceline::store {

// Everything of `task` but its id.
std::string EncodeTaskRow(const records::TaskRecord& task);
// Replaces `out` with the task `id` that `row` holds; on error `out` is unspecified.
absl::Status DecodeTaskRow(TaskId id, absl::string_view row, records::TaskRecord& out);

}  // namespace paceline::store
