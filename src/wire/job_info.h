#pragma once
// Wire, the master's side: the job API's views of the job manager's records (rolling updates).
// To* and *Of functions cannot fail.
//
// Thread-safety: pure functions.

#include "common/ids.h"
#include "paceline/v1/job.pb.h"
#include "records/records.h"

namespace paceline::wire {

v1::Update::State ToProto(records::UpdateState s);
// An update record as the API shows it: its state, options, and counts of done, in-flight and
// failed instances.
v1::UpdateInfo UpdateInfoOf(JobId job, const records::UpdateRecord& u);

}  // namespace paceline::wire
