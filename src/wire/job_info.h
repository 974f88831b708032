#pragma once
// Wire, the master's side: the job API's views of the job manager's records (rolling updates).
// To* and *Of functions cannot fail.
//
// Thread-safety: pure functions.

#include "common/ids.h"
#include "paceline/v1/job.pb.h"
#include "records/records.h"
#include "spec/job_spec.h"

namespace paceline::wire {

v1::Update::State ToProto(records::UpdateState s);
// An update record as the API shows it: its state, options, and counts of done, in-flight and
// failed instances.
v1::UpdateInfo UpdateInfoOf(JobId job, const records::UpdateRecord& u);

// A job's shape as GetJob shows it, into `resp`: its roles in order with the first instance of
// each, its gang (only when sla.min_running_instances > 1: the size, rendezvous, restart policy
// and restart budget) and, for batch jobs, its completion policy.
void SetRolesAndGang(const JobSpec& spec, v1::GetJobResponse& resp);

}  // namespace paceline::wire
