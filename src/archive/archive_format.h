#pragma once
// The archive of retired jobs: what it holds and how it is laid out on disk. The format is
// documented for users in docs/operations.md ("Retention and archive"); keep the two in step.
//
// A directory holds, per UTC day on which jobs finished:
//   YYYY-MM-DD.jsonl.gz  JSON lines, one job per line (ArchiveLine), gzip. The file is a
//                        series of gzip members, one per batch the master archived; every gzip
//                        reader (zcat, Python's gzip, DuckDB, Spark) reads them as one stream.
//   YYYY-MM-DD.idx       one text line per archived job: "JOB OFFSET LENGTH FINISHED_MS POOL",
//                        the member of the .gz that holds it (byte offset and length), when it
//                        finished (Unix ms) and its pool. Readers use it to find a job without
//                        reading the day; it is also the record of which members are complete.
//
// A job can be archived twice (the master stopped after archiving it and before removing it
// from the store): the later line wins.
//
// Thread-safety: pure functions.

#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "records/records.h"

namespace paceline::archive {

inline constexpr int kFormatVersion = 1;

// One job as a JSON object on one line (no newline): its id first ({"job_id":N,...}), then
// format, pool, name, type, state, owner, owner_group, created_at, finished_at, archived_at
// (RFC 3339, UTC, milliseconds), version, goal, instances, spec (its YAML), tasks (the current
// run of each instance that ran: instance, run, state, host, started_at, finished_at,
// exit_code, signal, reason, message, failures) and events (instance, run, at, state, host,
// reason, message), in the order of the store.
std::string ArchiveLine(const records::JobHistory& job, absl::Time archived_at);

// When a job finished: the latest end of its tasks' runs, or its creation when none ran.
absl::Time FinishedAt(const records::JobHistory& job);

// "2026-11-26": the UTC day of `t`, which names the files that hold the jobs finished then.
std::string DayOf(absl::Time t);

// The start of "id":N, that begins the line of job N.
std::string LinePrefix(JobId id);

// Whether `pool` is `under` or in its subtree ("/" holds every pool).
bool InPool(absl::string_view pool, absl::string_view under);

}  // namespace paceline::archive
