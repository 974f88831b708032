#include "scheduler/accounting.h"

#include <utility>

#include "absl/container/flat_hash_map.h"

namespace paceline::scheduler {

std::vector<records::UsageRecord> UsageOfEndedRuns(const jobmgr::JobManager& jobs,
                                                   const records::WriteBatch& batch) {
  std::vector<records::UsageRecord> out;
  absl::flat_hash_map<RunId, const records::TaskRecord*> ended;  // terminal records by run
  for (const records::TaskEvent& e : batch.events) {
    if (IsTerminal(e.state)) ended.try_emplace(e.run, nullptr);
  }
  if (ended.empty()) return out;
  for (const records::TaskRecord& r : batch.put_tasks) {
    if (!IsTerminal(r.state)) continue;
    auto it = ended.find(RunId{r.id, r.run});
    if (it != ended.end()) it->second = &r;
  }
  for (const records::TaskEvent& e : batch.events) {
    if (!IsTerminal(e.state)) continue;
    auto it = ended.find(e.run);
    if (it == ended.end() || it->second == nullptr) continue;
    const records::TaskRecord& r = *it->second;
    ended.erase(it);  // one terminal event per run; a repeat is not counted again
    const jobmgr::Job* job = jobs.GetJob(r.id.job);
    if (job == nullptr) continue;
    const JobSpec* spec = job->SpecOf(r.spec_version == 0 ? job->version() : r.spec_version);
    if (spec == nullptr) spec = &job->spec();
    records::RunUsage run;
    run.pool = job->pool();
    run.job = job->id();
    run.job_name = job->spec().name;
    run.owner = job->spec().owner;
    run.user = job->origin().owner.user;
    run.held = spec->TaskRef(r.id.instance).resources;
    run.started = r.started_at;
    run.ended = r.finished_at;
    std::vector<records::UsageRecord> hours = records::SplitByHour(run);
    out.insert(out.end(), std::make_move_iterator(hours.begin()),
               std::make_move_iterator(hours.end()));
  }
  return out;
}

}  // namespace paceline::scheduler
