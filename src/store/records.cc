#include "store/records.h"

namespace paceline::store {

bool WriteBatch::empty() const { return size() == 0 && !next_job_id.has_value(); }

size_t WriteBatch::size() const {
  return put_pools.size() + delete_pools.size() + put_jobs.size() + delete_jobs.size() +
         put_tasks.size() + events.size() + put_hosts.size();
}

}  // namespace paceline::store
