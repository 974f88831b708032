#include "jobmgr/dependency_names.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"

namespace paceline::jobmgr {
namespace {

// The newest job named `name` in `pool`.
std::optional<JobId> Newest(const JobManager& jobs, const std::string& name,
                            const std::string& pool) {
  std::optional<JobId> found;
  jobs.ForEachJobAfter(JobId(0), [&](const Job& job) {
    if (job.spec().name == name && job.pool() == pool) found = job.id();
    return true;
  });
  return found;
}

}  // namespace

absl::Status ResolveDependencies(JobSpec& spec, const std::string& pool, const JobManager& jobs,
                                 const JobSpec* current) {
  std::vector<std::string> ids;
  ids.reserve(spec.depends_on.size());
  for (size_t i = 0; i < spec.depends_on.size(); ++i) {
    const std::string& entry = spec.depends_on[i].job;
    const std::string field = absl::StrCat("depends_on[", i, "].job");
    if (std::optional<JobId> id = DependencyId(entry); id.has_value()) {
      if (jobs.GetJob(*id) == nullptr) {
        return absl::NotFoundError(
            absl::StrCat(field, ": job ", entry,
                         " not found; a job can depend only on jobs that exist (which is also "
                         "why dependencies cannot form a cycle)"));
      }
      ids.push_back(entry);
      continue;
    }
    if (current != nullptr && i < current->depends_on.size()) {
      std::optional<JobId> kept = DependencyId(current->depends_on[i].job);
      const Job* job = kept.has_value() ? jobs.GetJob(*kept) : nullptr;
      if (job != nullptr && job->spec().name == entry) {
        ids.push_back(current->depends_on[i].job);
        continue;
      }
    }
    std::optional<JobId> newest = Newest(jobs, entry, pool);
    if (!newest.has_value()) {
      return absl::NotFoundError(absl::StrCat(field, ": no job named '", entry, "' in pool ", pool,
                                              "; name a job of the same pool, or give a job id"));
    }
    ids.push_back(std::to_string(newest->value()));
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    for (size_t k = 0; k < i; ++k) {
      if (ids[k] == ids[i]) {
        return absl::InvalidArgumentError(
            absl::StrCat("depends_on[", i, "].job: '", spec.depends_on[i].job, "' is job ", ids[i],
                         ", which depends_on[", k, "] names already; expected each job once"));
      }
    }
  }
  for (size_t i = 0; i < ids.size(); ++i) spec.depends_on[i].job = std::move(ids[i]);
  return absl::OkStatus();
}

}  // namespace paceline::jobmgr
