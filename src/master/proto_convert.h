#pragma once
// Conversions between the domain types and the protobuf messages of the API. Kept apart so the
// cores never see protobuf.
//
// Thread-safety: pure functions.

#include "absl/time/time.h"
#include "common/ids.h"
#include "common/resources.h"
#include "jobmgr/job_manager.h"
#include "paceline/v1/common.pb.h"
#include "paceline/v1/host.pb.h"
#include "paceline/v1/job.pb.h"
#include "scheduler/actions.h"
#include "spec/job_spec.h"
#include "records/records.h"

namespace paceline::master {

v1::Resources ToProto(const Resources& r);
Resources FromProto(const v1::Resources& r);

v1::RunRef ToProto(const RunId& run);
RunId FromProto(const v1::RunRef& run);

// 0 for "never" (absl::InfinitePast()).
int64_t ToUnixMillis(absl::Time t);

v1::TaskEvent ToProto(const records::TaskEvent& e);

// `job_spec_yaml`: the job's spec as PrintJobSpec prints it (printed once per job by the caller).
v1::MasterMessage ToLaunchMessage(const scheduler::Launch& launch,
                                  const std::string& job_spec_yaml);
v1::MasterMessage ToKillMessage(const jobmgr::KillCommand& kill);

}  // namespace paceline::master
