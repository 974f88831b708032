#include "store/copy_store.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace paceline::store {
namespace {

// Events or audit records per write batch: bounds the size of one batch, not of the
// transaction.
constexpr size_t kEventsPerBatch = 10'000;
// Audit records per read (ListAudit pages back by seq).
constexpr size_t kAuditPage = 10'000;

absl::StatusOr<std::vector<records::TaskEvent>> AllEvents(Store& s) {
  std::vector<records::TaskEvent> out;
  RETURN_IF_ERROR(s.ForEachEvent([&](const records::TaskEvent& e) {
    out.push_back(e);
    return absl::OkStatus();
  }));
  return out;
}

// The whole audit log, oldest first.
absl::StatusOr<std::vector<records::AuditRecord>> AllAudit(Store& s) {
  std::vector<records::AuditRecord> out;
  records::AuditQuery page;
  page.limit = kAuditPage;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<records::AuditRecord> newest, s.ListAudit(page));
    if (!newest.empty() && page.before_seq != 0 && newest.back().seq >= page.before_seq) {
      return absl::InternalError(absl::StrCat(s.Describe(), " listed audit record ",
                                              newest.back().seq, " before seq ", page.before_seq));
    }
    std::move(newest.begin(), newest.end(), std::back_inserter(out));
    if (newest.size() < kAuditPage || out.back().seq <= 1) break;
    page.before_seq = out.back().seq;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// Moves `rows` into write batches of at most kEventsPerBatch each, appended to `batches`.
template <typename T>
void AppendInBatches(std::vector<T>& rows, std::vector<T> records::WriteBatch::*field,
                     std::vector<records::WriteBatch>& batches) {
  for (size_t i = 0; i < rows.size(); i += kEventsPerBatch) {
    records::WriteBatch b;
    size_t end = std::min(rows.size(), i + kEventsPerBatch);
    (b.*field).assign(std::make_move_iterator(rows.begin() + static_cast<ptrdiff_t>(i)),
                      std::make_move_iterator(rows.begin() + static_cast<ptrdiff_t>(end)));
    batches.push_back(std::move(b));
  }
}

template <typename T>
absl::Status SameList(const std::vector<T>& a, const std::vector<T>& b, const char* what,
                      const Store& sa, const Store& sb) {
  if (a.size() != b.size()) {
    return absl::FailedPreconditionError(absl::StrCat(sa.Describe(), " has ", a.size(), " ", what,
                                                      ", ", sb.Describe(), " has ", b.size()));
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i])) {
      return absl::FailedPreconditionError(
          absl::StrCat(what, " differ at the ", i + 1, "th of ", a.size()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CopyReport> CopyStore(Store& from, Store& to) {
  ASSIGN_OR_RETURN(records::StoreContents existing, to.Load());
  bool has_events = false;
  absl::Status scan = to.ForEachEvent([&](const records::TaskEvent&) {
    has_events = true;
    return absl::CancelledError("one is enough");  // stops the scan
  });
  if (!scan.ok() && !has_events) return scan;
  records::AuditQuery newest;
  newest.limit = 1;
  ASSIGN_OR_RETURN(std::vector<records::AuditRecord> audited, to.ListAudit(newest));
  if (!existing.pools.empty() || !existing.jobs.empty() || !existing.tasks.empty() ||
      !existing.hosts.empty() || !existing.tokens.empty() || !existing.secrets.empty() ||
      existing.next_job_id != 1 || has_events || !audited.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the target ", to.Describe(), " is not empty; migrate only into a new database"));
  }
  ASSIGN_OR_RETURN(records::StoreContents c, from.Load());
  ASSIGN_OR_RETURN(std::vector<records::TaskEvent> events, AllEvents(from));
  ASSIGN_OR_RETURN(std::vector<records::AuditRecord> audit, AllAudit(from));
  ASSIGN_OR_RETURN(std::vector<records::UsageRecord> usage, from.ListUsage({}));

  CopyReport report{c.pools.size(), c.jobs.size(),   c.tasks.size(),   c.hosts.size(),
                    events.size(),  c.tokens.size(), c.secrets.size(), audit.size()};
  std::vector<records::WriteBatch> batches(1);
  records::WriteBatch& records = batches[0];
  records.put_pools = std::move(c.pools);
  records.put_jobs = std::move(c.jobs);
  records.put_tasks = std::move(c.tasks);
  records.put_hosts = std::move(c.hosts);
  records.put_tokens = std::move(c.tokens);
  records.put_secrets = std::move(c.secrets);
  records.next_job_id = c.next_job_id;
  records.cluster_id = c.cluster_id;  // the same cluster, in another store
  AppendInBatches(events, &records::WriteBatch::events, batches);
  AppendInBatches(audit, &records::WriteBatch::audit, batches);  // oldest first: seq grows alike
  AppendInBatches(usage, &records::WriteBatch::add_usage, batches);
  std::vector<const records::WriteBatch*> all;
  for (const records::WriteBatch& b : batches) all.push_back(&b);
  RETURN_IF_ERROR(WithContext(to.CommitAll(all), absl::StrCat("writing ", to.Describe())));
  return report;
}

absl::Status CompareStores(Store& a, Store& b) {
  ASSIGN_OR_RETURN(records::StoreContents ca, a.Load());
  ASSIGN_OR_RETURN(records::StoreContents cb, b.Load());
  RETURN_IF_ERROR(SameList(ca.pools, cb.pools, "pools", a, b));
  RETURN_IF_ERROR(SameList(ca.jobs, cb.jobs, "jobs", a, b));
  RETURN_IF_ERROR(SameList(ca.tasks, cb.tasks, "tasks", a, b));
  RETURN_IF_ERROR(SameList(ca.hosts, cb.hosts, "hosts", a, b));
  RETURN_IF_ERROR(SameList(ca.tokens, cb.tokens, "tokens", a, b));
  RETURN_IF_ERROR(SameList(ca.secrets, cb.secrets, "secrets", a, b));
  if (ca.cluster_id != cb.cluster_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("the cluster id differs: ", ca.cluster_id, " and ", cb.cluster_id));
  }
  if (ca.next_job_id != cb.next_job_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("the next job id differs: ", ca.next_job_id, " and ", cb.next_job_id));
  }
  ASSIGN_OR_RETURN(std::vector<records::TaskEvent> ea, AllEvents(a));
  ASSIGN_OR_RETURN(std::vector<records::TaskEvent> eb, AllEvents(b));
  RETURN_IF_ERROR(SameList(ea, eb, "events", a, b));
  ASSIGN_OR_RETURN(std::vector<records::UsageRecord> ua, a.ListUsage({}));
  ASSIGN_OR_RETURN(std::vector<records::UsageRecord> ub, b.ListUsage({}));
  RETURN_IF_ERROR(SameList(ua, ub, "usage rows", a, b));
  ASSIGN_OR_RETURN(std::vector<records::AuditRecord> aa, AllAudit(a));
  ASSIGN_OR_RETURN(std::vector<records::AuditRecord> ab, AllAudit(b));
  // A copy numbers the log again: records are the same whatever their seq.
  for (records::AuditRecord& r : aa) r.seq = 0;
  for (records::AuditRecord& r : ab) r.seq = 0;
  return SameList(aa, ab, "audit records", a, b);
}

}  // namespace paceline::store
