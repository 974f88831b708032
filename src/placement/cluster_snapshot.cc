#include "placement/cluster_snapshot.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/check.h"

namespace paceline::placement {
namespace {

std::string PairKey(absl::string_view key, absl::string_view value) {
  return absl::StrCat(key, absl::string_view("\0", 1), value);
}

absl::Status NotFound(HostId id) {
  return absl::NotFoundError(absl::StrCat("host ", id.value(), " is not in the snapshot"));
}

}  // namespace

const HostState* ClusterSnapshot::host(HostId id) const {
  return present(id.value()) ? &*hosts_[id.value()] : nullptr;
}

HostState* ClusterSnapshot::mutable_host(HostId id) {
  return present(id.value()) ? &*hosts_[id.value()] : nullptr;
}

std::optional<HostId> ClusterSnapshot::TaskHost(TaskId task) const {
  auto it = tasks_.find(task);
  if (it == tasks_.end()) return std::nullopt;
  return HostId(records_[it->second].slot);
}

const Usage* ClusterSnapshot::TaskUsage(TaskId task) const {
  auto it = tasks_.find(task);
  return it == tasks_.end() ? nullptr : &records_[it->second].usage;
}

const std::vector<uint32_t>* ClusterSnapshot::HostsWithLabel(absl::string_view key,
                                                             absl::string_view value) const {
  auto it = label_index_.find(key);
  if (it == label_index_.end()) return nullptr;
  auto vit = it->second.find(value);
  return vit == it->second.end() ? nullptr : &vit->second;
}

Resources ClusterSnapshot::MaxCapacity() const {
  Resources m;
  for (const auto& h : hosts_) {
    if (h) m = Max(m, h->capacity());
  }
  return m;
}

uint32_t ClusterSnapshot::InternLabelPair(absl::string_view key, absl::string_view value) {
  auto [it, inserted] =
      label_pairs_.try_emplace(PairKey(key, value), static_cast<uint32_t>(label_pairs_.size()));
  return it->second;
}

std::optional<std::span<const uint32_t>> ClusterSnapshot::StaticChangesSince(uint64_t seq) const {
  if (seq < log_base_ || seq > static_seq()) return std::nullopt;
  return std::span<const uint32_t>(log_).subspan(seq - log_base_);
}

void ClusterSnapshot::LogStaticChange(uint32_t slot) {
  LogRelaxed(slot);
  // Keep the log short: once it is longer than the cluster, a full rebuild is as cheap.
  if (log_.size() >= std::max<size_t>(1024, hosts_.size())) {
    log_base_ += log_.size();
    log_.clear();
  }
  log_.push_back(slot);
}

std::optional<std::span<const uint32_t>> ClusterSnapshot::RelaxedSince(uint64_t seq) const {
  if (seq < relax_base_ || seq > relax_seq()) return std::nullopt;
  return std::span<const uint32_t>(relax_log_).subspan(seq - relax_base_);
}

void ClusterSnapshot::LogRelaxed(uint32_t slot) {
  if (relax_log_.size() >= std::max<size_t>(1024, hosts_.size())) MarkRelaxed();
  relax_log_.push_back(slot);
}

void ClusterSnapshot::MarkRelaxed() {
  relax_base_ += relax_log_.size() + 1;  // every earlier sequence number is now truncated
  relax_log_.clear();
}

void ClusterSnapshot::Reindex(uint32_t slot) {
  const HostState& h = *hosts_[slot];
  bool want = h.status() == HostStatus::kUp;
  for (bool revocable : {false, true}) {
    if (revocable && !revocable_indexed_) break;
    FreeIndex& index = revocable ? revocable_index_ : index_;
    if (!want) {
      if (index.Contains(slot)) index.Erase(slot);
      continue;
    }
    Resources f = h.FreeFor(revocable);
    FreeIndex::Keys keys = {f.cpu_milli(), f.memory_bytes(), f.disk_bytes(), h.gpu_key()};
    if (index.Contains(slot)) {
      index.Update(slot, keys);
    } else {
      index.Insert(slot, keys);
    }
  }
}

void ClusterSnapshot::IndexRevocable() {
  if (revocable_indexed_) return;
  revocable_indexed_ = true;
  for (uint32_t slot : index_.members()) Reindex(slot);
}

void ClusterSnapshot::IndexLabels(uint32_t slot, bool add) {
  for (const auto& [k, v] : hosts_[slot]->labels()) {
    std::vector<uint32_t>& hosts = label_index_[k][v];
    if (add) {
      hosts.push_back(slot);
    } else {
      auto it = std::find(hosts.begin(), hosts.end(), slot);
      if (it != hosts.end()) hosts.erase(it);
    }
  }
}

absl::Status ClusterSnapshot::AddHost(HostSpec spec) {
  uint32_t slot = spec.id.value();
  if (present(slot)) {
    return absl::InvalidArgumentError(absl::StrCat("host ", slot, " is already present"));
  }
  absl::flat_hash_set<absl::string_view> keys;
  for (const auto& [k, v] : spec.labels) {
    if (!keys.insert(k).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("host ", spec.name, ": label '", k, "' given twice"));
    }
  }
  if (!spec.capacity.IsNonNegative()) {
    return absl::InvalidArgumentError(absl::StrCat("host ", spec.name, ": negative capacity"));
  }
  int64_t gpu = static_cast<int64_t>(spec.gpu_models.size()) * kMilliPerGpu;
  if (spec.capacity.gpu_milli() != 0 && spec.capacity.gpu_milli() != gpu) {
    return absl::InvalidArgumentError(absl::StrCat("host ", spec.name, ": gpu capacity ",
                                                   spec.capacity.gpu_milli(), " but ",
                                                   spec.gpu_models.size(), " devices"));
  }
  if (spec.gpu_models.size() > 0xffff) {
    return absl::InvalidArgumentError(absl::StrCat("host ", spec.name, ": too many GPUs"));
  }
  for (const PortRange& r : spec.ports) {
    if (r.first == 0 || r.last < r.first || r.last > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("host ", spec.name, ": bad port range ", r.first, "-", r.last));
    }
  }
  if (slot >= hosts_.size()) hosts_.resize(slot + 1);
  for (const std::string& model : spec.gpu_models) ++gpu_devices_by_model_[model];
  hosts_[slot].emplace(std::move(spec));
  // A host added again at a slot starts above every version an earlier one had there.
  hosts_[slot]->version_ = ++hosts_added_ << 32;
  ++num_hosts_;
  IndexLabels(slot, true);
  Reindex(slot);
  LogStaticChange(slot);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TaskId>> ClusterSnapshot::RemoveHost(HostId id) {
  HostState* h = mutable_host(id);
  if (h == nullptr) return NotFound(id);
  std::vector<TaskId> released = h->tasks();
  for (TaskId t : released) ReleaseRecord(t);
  ReleaseHostHold(id);
  if (index_.Contains(id.value())) index_.Erase(id.value());
  if (revocable_index_.Contains(id.value())) revocable_index_.Erase(id.value());
  IndexLabels(id.value(), false);
  for (const GpuDevice& d : h->gpus()) {
    auto it = gpu_devices_by_model_.find(d.model);
    if (--it->second == 0) gpu_devices_by_model_.erase(it);
  }
  hosts_[id.value()].reset();
  unhealthy_gpu_hosts_.erase(id.value());
  --num_hosts_;
  LogStaticChange(id.value());
  return released;
}

absl::Status ClusterSnapshot::HoldHost(HostId id, uint64_t gang, absl::Time until) {
  if (gang == 0) return absl::InvalidArgumentError("a host hold needs a gang (not 0)");
  HostState* h = mutable_host(id);
  if (h == nullptr) return NotFound(id);
  if (h->held_for_ == gang) {  // the same gang's: only a later time lets more in
    if (until > h->held_until_) LogRelaxed(id.value());
    h->held_until_ = until;
    return absl::OkStatus();
  }
  ReleaseHostHold(id);  // another gang's: what it turned away may fit now
  h->held_for_ = gang;
  h->held_until_ = until;
  ++held_gangs_[gang];
  return absl::OkStatus();
}

void ClusterSnapshot::ReleaseHostHold(HostId id) {
  HostState* h = mutable_host(id);
  if (h == nullptr || h->held_for_ == 0) return;
  auto it = held_gangs_.find(h->held_for_);
  if (it != held_gangs_.end() && --it->second == 0) held_gangs_.erase(it);
  h->held_for_ = 0;
  h->held_until_ = absl::InfinitePast();
  LogRelaxed(id.value());  // tasks it turned away may fit now
}

absl::Status ClusterSnapshot::SetHostStatus(HostId id, HostStatus status) {
  HostState* h = mutable_host(id);
  if (h == nullptr) return NotFound(id);
  if (h->status_ == status) return absl::OkStatus();
  h->status_ = status;
  Reindex(id.value());
  LogStaticChange(id.value());
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TaskId>> ClusterSnapshot::FailHost(HostId id, HostStatus status) {
  if (status != HostStatus::kDown && status != HostStatus::kLost) {
    return absl::InvalidArgumentError("a failed host is DOWN or LOST");
  }
  HostState* h = mutable_host(id);
  if (h == nullptr) return NotFound(id);
  std::vector<TaskId> released = h->tasks();
  for (TaskId t : released) ReleaseRecord(t);
  absl::Status s = SetHostStatus(id, status);
  PL_CHECK(s.ok()) << s;
  return released;
}

absl::Status ClusterSnapshot::SetHostLabels(
    HostId id, std::vector<std::pair<std::string, std::string>> labels) {
  HostState* h = mutable_host(id);
  if (h == nullptr) return NotFound(id);
  absl::flat_hash_set<absl::string_view> keys;
  for (const auto& [k, v] : labels) {
    if (!keys.insert(k).second) {
      return absl::InvalidArgumentError(absl::StrCat("label '", k, "' given twice"));
    }
  }
  IndexLabels(id.value(), false);
  h->SetLabels(std::move(labels));
  IndexLabels(id.value(), true);
  LogStaticChange(id.value());
  return absl::OkStatus();
}

absl::Status ClusterSnapshot::SetHostImages(HostId id,
                                            absl::flat_hash_map<std::string, int64_t> images) {
  HostState* h = mutable_host(id);
  if (h == nullptr) return NotFound(id);
  for (const auto& [ref, size] : images) {
    int64_t& known = image_sizes_[ref];
    known = std::max(known, size);
  }
  h->images_ = std::move(images);
  ++h->version_;
  return absl::OkStatus();
}

absl::Status ClusterSnapshot::SetGpuHealth(HostId id, size_t device, bool healthy) {
  HostState* h = mutable_host(id);
  if (h == nullptr) return NotFound(id);
  if (device >= h->gpus().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("host ", h->name(), " has no GPU ", device, " (", h->gpus().size(), ")"));
  }
  if (h->gpus()[device].healthy == healthy) return absl::OkStatus();
  h->SetGpuHealthy(device, healthy);
  if (std::all_of(h->gpus().begin(), h->gpus().end(),
                  [](const GpuDevice& d) { return d.healthy; })) {
    unhealthy_gpu_hosts_.erase(id.value());
  } else {
    unhealthy_gpu_hosts_.insert(id.value());
  }
  Reindex(id.value());
  if (healthy) LogRelaxed(id.value());  // a task that fit nowhere may fit here now
  return absl::OkStatus();
}

int64_t ClusterSnapshot::WithheldGpuMilli() const {
  int64_t withheld = 0;
  for (uint32_t slot : unhealthy_gpu_hosts_) {
    const HostState* h = host(HostId(slot));
    if (h != nullptr && h->status() != HostStatus::kLost) withheld += h->withheld_gpu_milli();
  }
  return withheld;
}

int64_t ClusterSnapshot::ImageSize(const std::string& image) const {
  auto it = image_sizes_.find(image);
  return it == image_sizes_.end() ? 0 : it->second;
}

absl::Status ClusterSnapshot::SetHostSlack(HostId id, const Resources& slack) {
  HostState* h = mutable_host(id);
  if (h == nullptr) return NotFound(id);
  if (!revocable_indexed_ && !Max(slack, Resources()).IsZero()) IndexRevocable();
  const Resources before = h->FreeFor(true);
  h->SetSlack(slack);
  Reindex(id.value());
  // More slack: a revocable task that fit nowhere may fit here now.
  if (!h->FreeFor(true).FitsIn(before)) LogRelaxed(id.value());
  return absl::OkStatus();
}

Usage ClusterSnapshot::MakeUsage(const TaskShape& shape, GpuShares gpus,
                                 std::vector<uint32_t> ports) {
  Usage u;
  u.resources = shape.resources;
  u.revocable = shape.revocable;
  u.job = shape.job;
  LabelPairs label_pairs;
  for (const auto& [k, v] : shape.job_labels) label_pairs.push_back(InternLabelPair(k, v));
  u.SetExtras(std::move(gpus), std::move(ports), std::move(label_pairs));
  return u;
}

absl::Status ClusterSnapshot::CheckFits(const HostState& h, const TaskShape& shape,
                                        const GpuShares& gpus, const std::vector<uint32_t>& ports,
                                        bool adopting) const {
  if (h.status() != HostStatus::kUp) {
    return absl::FailedPreconditionError(
        absl::StrCat("host ", h.name(), " is ", HostStatusName(h.status())));
  }
  Resources free = h.FreeFor(shape.revocable);
  if (adopting && shape.revocable) free = Max(free, shape.resources);  // slack not known yet
  free[Dim::kGpu] = h.FreeFor(false)[Dim::kGpu];                       // devices: always checked
  if (auto d = shape.resources.FirstExceeding(free)) {
    return absl::ResourceExhaustedError(absl::StrCat("host ", h.name(), ": insufficient ",
                                                     DimName(*d), shape.revocable ? " slack" : ""));
  }
  int64_t gpu_sum = 0;
  absl::flat_hash_set<uint16_t> devices;
  for (const GpuShare& s : gpus) {
    if (s.device >= h.gpus().size() || !devices.insert(s.device).second || s.milli <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("bad GPU device ", s.device));
    }
    const GpuDevice& d = h.gpus()[s.device];
    if (!d.healthy && !adopting) {
      return absl::FailedPreconditionError(
          absl::StrCat("host ", h.name(), ": GPU ", s.device, " is unhealthy"));
    }
    if (d.milli_allocated + s.milli > kMilliPerGpu) {
      return absl::ResourceExhaustedError(
          absl::StrCat("host ", h.name(), ": GPU ", s.device, " has ", d.free_milli(), " free"));
    }
    if (shape.gpu_milli() >= kMilliPerGpu && s.milli != kMilliPerGpu) {
      return absl::InvalidArgumentError("whole-GPU tasks take whole devices");
    }
    if (!shape.AcceptsGpuModel(d.model)) {
      return absl::InvalidArgumentError(absl::StrCat("GPU ", s.device, " is a ", d.model));
    }
    gpu_sum += s.milli;
  }
  if (gpu_sum != shape.gpu_milli()) {
    return absl::InvalidArgumentError(
        absl::StrCat("GPU shares sum to ", gpu_sum, ", task asks ", shape.gpu_milli()));
  }
  if (ports.size() != shape.port_names.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ports.size(), " ports for ", shape.port_names.size(), " port names"));
  }
  absl::flat_hash_set<uint32_t> seen;
  for (uint32_t p : ports) {
    if (!h.PortInRange(p) || h.PortUsed(p) || !seen.insert(p).second) {
      return absl::ResourceExhaustedError(
          absl::StrCat("host ", h.name(), ": port ", p, " is not free"));
    }
  }
  return absl::OkStatus();
}

absl::Status ClusterSnapshot::Commit(const Assignment& a) { return Record(a, false); }

absl::Status ClusterSnapshot::Adopt(const Assignment& a) { return Record(a, true); }

absl::Status ClusterSnapshot::Record(const Assignment& a, bool adopting) {
  if (a.shape == nullptr) return absl::InvalidArgumentError("assignment without a shape");
  if (tasks_.contains(a.task)) {
    return absl::AlreadyExistsError(absl::StrCat("task ", a.task.ToString(), " is already placed"));
  }
  HostState* h = mutable_host(a.host);
  if (h == nullptr) return NotFound(a.host);
  absl::Status s = CheckFits(*h, *a.shape, a.gpus, a.ports, adopting);
  if (!s.ok()) return s;
  TaskRecord rec;
  rec.slot = a.host.value();
  rec.pos = static_cast<uint32_t>(h->tasks_.size());
  rec.usage = MakeUsage(*a.shape, a.gpus, a.ports);
  if (rec.usage.revocable) IndexRevocable();
  h->AddUsage(rec.usage);
  revocable_tasks_ += rec.usage.revocable;
  h->tasks_.push_back(a.task);
  Reindex(rec.slot);
  uint32_t index;
  if (free_records_.empty()) {
    index = static_cast<uint32_t>(records_.size());
    records_.push_back(std::move(rec));
  } else {
    index = free_records_.back();
    free_records_.pop_back();
    records_[index] = std::move(rec);
  }
  tasks_.emplace(a.task, index);
  return absl::OkStatus();
}

void ClusterSnapshot::ReleaseRecord(TaskId task) {
  auto it = tasks_.find(task);
  PL_CHECK(it != tasks_.end()) << "release of unknown task " << task.ToString();
  const uint32_t index = it->second;
  TaskRecord& rec = records_[index];
  HostState& h = *hosts_[rec.slot];
  h.RemoveUsage(rec.usage);
  revocable_tasks_ -= rec.usage.revocable;
  TaskId last = h.tasks_.back();
  h.tasks_[rec.pos] = last;
  records_[tasks_[last]].pos = rec.pos;
  h.tasks_.pop_back();
  uint32_t slot = rec.slot;
  tasks_.erase(it);
  records_[index] = TaskRecord();  // frees what the usage held
  free_records_.push_back(index);
  LogRelaxed(slot);
  Reindex(slot);
}

absl::Status ClusterSnapshot::Release(TaskId task) {
  if (!tasks_.contains(task)) {
    return absl::NotFoundError(absl::StrCat("task ", task.ToString(), " is not placed"));
  }
  ReleaseRecord(task);
  return absl::OkStatus();
}

void ClusterSnapshot::Hold(uint32_t slot, const Usage& u) {
  if (u.revocable) IndexRevocable();
  hosts_[slot]->AddUsage(u);
  revocable_tasks_ += u.revocable;
  Reindex(slot);
}

void ClusterSnapshot::Unhold(uint32_t slot, const Usage& u, bool rollback) {
  hosts_[slot]->RemoveUsage(u);
  revocable_tasks_ -= u.revocable;
  Reindex(slot);
  if (rollback) LogRelaxed(slot);
}

absl::Status ClusterSnapshot::Validate() const {
  struct Sum {
    Resources res;
    Resources revocable;
    std::vector<int64_t> gpus;
    absl::flat_hash_set<uint32_t> ports;
    absl::flat_hash_map<JobId, uint32_t> jobs;
    size_t tasks = 0;
  };
  std::vector<Sum> sums(hosts_.size());
  for (const auto& [task, index] : tasks_) {
    const TaskRecord& rec = records_[index];
    if (!present(rec.slot)) return absl::InternalError("task on a missing host");
    const HostState& h = *hosts_[rec.slot];
    if (rec.pos >= h.tasks().size() || h.tasks()[rec.pos] != task) {
      return absl::InternalError(absl::StrCat("task list of ", h.name(), " is inconsistent"));
    }
    Sum& s = sums[rec.slot];
    s.gpus.resize(h.gpus().size());
    s.res += rec.usage.resources;
    if (rec.usage.revocable) s.revocable += rec.usage.resources;
    for (const GpuShare& g : rec.usage.gpus()) s.gpus[g.device] += g.milli;
    for (uint32_t p : rec.usage.ports()) {
      if (!s.ports.insert(p).second) {
        return absl::InternalError(absl::StrCat("port ", p, " used twice on ", h.name()));
      }
    }
    ++s.jobs[rec.usage.job];
    ++s.tasks;
  }
  for (uint32_t slot = 0; slot < hosts_.size(); ++slot) {
    if (!hosts_[slot]) continue;
    const HostState& h = *hosts_[slot];
    Sum& s = sums[slot];
    s.gpus.resize(h.gpus().size());
    if (!(s.res == h.allocated())) {
      return absl::InternalError(absl::StrCat(h.name(), ": allocated ", h.allocated().ToString(),
                                              " but tasks hold ", s.res.ToString()));
    }
    if (!(s.revocable == h.revocable_allocated())) {
      return absl::InternalError(
          absl::StrCat(h.name(), ": revocable allocated ", h.revocable_allocated().ToString(),
                       " but revocable tasks hold ", s.revocable.ToString()));
    }
    const Resources regular = h.regular_allocated();
    if (!regular.FitsIn(h.capacity()) || !regular.IsNonNegative() ||
        !h.revocable_allocated().IsNonNegative()) {
      return absl::InternalError(absl::StrCat(h.name(), " is over-committed: regular work holds ",
                                              regular.ToString(), " of ", h.capacity().ToString()));
    }
    if (h.allocated().gpu_milli() > h.capacity().gpu_milli()) {
      return absl::InternalError(absl::StrCat(h.name(), " has its GPUs over-committed"));
    }
    int64_t gpu_total = 0;
    for (size_t d = 0; d < h.gpus().size(); ++d) {
      int64_t a = h.gpus()[d].milli_allocated;
      if (a != s.gpus[d]) return absl::InternalError(absl::StrCat(h.name(), ": GPU ", d, " sum"));
      if (a < 0 || a > kMilliPerGpu) {
        return absl::InternalError(absl::StrCat(h.name(), ": GPU ", d, " holds ", a));
      }
      gpu_total += a;
    }
    if (gpu_total != h.allocated().gpu_milli()) {
      return absl::InternalError(absl::StrCat(h.name(), ": GPU devices disagree with total"));
    }
    if (s.ports.size() != h.port_capacity() - h.free_ports()) {
      return absl::InternalError(absl::StrCat(h.name(), ": used port count"));
    }
    if (s.tasks != h.tasks().size()) return absl::InternalError("task count");
    for (const auto& [job, n] : s.jobs) {
      if (h.JobCount(job) != n) return absl::InternalError(absl::StrCat(h.name(), ": job count"));
    }
    bool indexed = index_.Contains(slot);
    if (indexed != (h.status() == HostStatus::kUp) ||
        (revocable_indexed_ && indexed != revocable_index_.Contains(slot))) {
      return absl::InternalError(absl::StrCat(h.name(), ": free index membership"));
    }
  }
  return absl::OkStatus();
}

}  // namespace paceline::placement
