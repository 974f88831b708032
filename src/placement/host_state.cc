#include "placement/host_state.h"

#include <algorithm>

#include "common/check.h"

namespace paceline::placement {

absl::string_view HostStatusName(HostStatus s) {
  switch (s) {
    case HostStatus::kUp:
      return "UP";
    case HostStatus::kDraining:
      return "DRAINING";
    case HostStatus::kDrained:
      return "DRAINED";
    case HostStatus::kDown:
      return "DOWN";
    case HostStatus::kLost:
      return "LOST";
  }
  return "?";
}

HostState::HostState(HostSpec spec)
    : id_(spec.id),
      name_(std::move(spec.name)),
      status_(spec.status),
      capacity_(spec.capacity),
      port_ranges_(std::move(spec.ports)) {
  SetLabels(std::move(spec.labels));
  gpus_.reserve(spec.gpu_models.size());
  for (std::string& m : spec.gpu_models) gpus_.push_back(GpuDevice{std::move(m), 0});
  capacity_[Dim::kGpu] = static_cast<int64_t>(gpus_.size()) * kMilliPerGpu;
  for (const PortRange& r : port_ranges_) port_capacity_ += r.size();
  RecomputeGpuSummary();
  RecomputeFree();
}

void HostState::SetLabels(std::vector<std::pair<std::string, std::string>> labels) {
  std::sort(labels.begin(), labels.end());
  // Keep the first value of a duplicated key (the snapshot rejects duplicates before this).
  labels.erase(std::unique(labels.begin(), labels.end(),
                           [](const auto& a, const auto& b) { return a.first == b.first; }),
               labels.end());
  labels_ = std::move(labels);
  std::optional<absl::string_view> ex = Label(kExclusiveLabel);
  exclusive_ = ex ? std::string(*ex) : std::string();
}

std::optional<absl::string_view> HostState::Label(absl::string_view key) const {
  auto it = std::lower_bound(labels_.begin(), labels_.end(), key,
                             [](const auto& kv, absl::string_view k) { return kv.first < k; });
  if (it == labels_.end() || it->first != key) return std::nullopt;
  return absl::string_view(it->second);
}

bool HostState::PortInRange(uint32_t port) const {
  for (const PortRange& r : port_ranges_) {
    if (port >= r.first && port <= r.last) return true;
  }
  return false;
}

std::vector<uint32_t> HostState::PickPorts(uint32_t n) const {
  std::vector<uint32_t> out;
  out.reserve(n);
  for (const PortRange& r : port_ranges_) {
    for (uint64_t p = r.first; p <= r.last && out.size() < n; ++p) {
      if (!used_ports_.contains(static_cast<uint32_t>(p))) out.push_back(static_cast<uint32_t>(p));
    }
    if (out.size() == n) break;
  }
  return out;
}

uint32_t HostState::JobCount(JobId job) const {
  auto it = job_counts_.find(job);
  return it == job_counts_.end() ? 0 : it->second;
}

uint32_t HostState::LabelPairCount(uint32_t label_pair) const {
  auto it = label_pair_counts_.find(label_pair);
  return it == label_pair_counts_.end() ? 0 : it->second;
}

void HostState::RecomputeGpuSummary() {
  full_free_gpus_ = 0;
  max_partial_free_gpu_ = 0;
  withheld_gpu_milli_ = 0;
  for (const GpuDevice& d : gpus_) {
    if (!d.healthy) {
      withheld_gpu_milli_ += kMilliPerGpu - d.milli_allocated;
    } else if (d.milli_allocated == 0) {
      ++full_free_gpus_;
    } else {
      max_partial_free_gpu_ = std::max(max_partial_free_gpu_, d.free_milli());
    }
  }
}

void HostState::RecomputeFree() {
  for (int d = 0; d < kNumDims; ++d) {
    const int64_t all = allocated_.at(d);
    const int64_t regular = all - revocable_allocated_.at(d);
    free_regular_.at(d) = capacity_.at(d) - regular;
    free_revocable_.at(d) = capacity_.at(d) - all + std::min(slack_.at(d), regular);
  }
  // Devices are never over-committed: the gpu dimension is C − A in both views (the slack has
  // no gpu dimension, so the revocable view already is), less what unhealthy devices have free.
  free_revocable_[Dim::kGpu] -= withheld_gpu_milli_;
  free_regular_[Dim::kGpu] = free_revocable_[Dim::kGpu];
}

Resources HostState::RevocableExcess() const {
  return Max(Resources(), Resources() - FreeFor(true));
}

void HostState::SetGpuHealthy(size_t device, bool healthy) {
  gpus_[device].healthy = healthy;
  RecomputeGpuSummary();
  RecomputeFree();
  ++version_;
}

void HostState::SetSlack(const Resources& slack) {
  slack_ = Max(Resources(), slack);
  slack_[Dim::kGpu] = 0;
  RecomputeFree();
  ++version_;
}

const Usage::Extras Usage::kNone;

void Usage::SetExtras(GpuShares gpus, std::vector<uint32_t> ports, LabelPairs label_pairs) {
  if (gpus.empty() && ports.empty() && label_pairs.empty()) {
    extras_.reset();
    return;
  }
  extras_ = std::make_shared<const Extras>(
      Extras{std::move(gpus), std::move(ports), std::move(label_pairs)});
}

void HostState::AddUsage(const Usage& u) {
  allocated_ += u.resources;
  if (u.revocable) {
    revocable_allocated_ += u.resources;
    ++revocable_tasks_;
  }
  for (const GpuShare& s : u.gpus()) {
    PL_CHECK(s.device < gpus_.size()) << "device " << s.device << " on host " << name_;
    gpus_[s.device].milli_allocated += s.milli;
  }
  if (!u.gpus().empty()) RecomputeGpuSummary();
  RecomputeFree();  // after the summary: it reads what unhealthy devices withhold
  for (uint32_t p : u.ports()) {
    bool inserted = used_ports_.insert(p).second;
    PL_CHECK(inserted) << "port " << p << " already used on host " << name_;
  }
  ++job_counts_[u.job];
  for (uint32_t lp : u.label_pairs()) ++label_pair_counts_[lp];
  ++version_;
}

void HostState::RemoveUsage(const Usage& u) {
  allocated_ -= u.resources;
  if (u.revocable) {
    revocable_allocated_ -= u.resources;
    --revocable_tasks_;
  }
  for (const GpuShare& s : u.gpus()) {
    gpus_[s.device].milli_allocated -= s.milli;
    PL_CHECK(gpus_[s.device].milli_allocated >= 0) << "device " << s.device << " on " << name_;
  }
  if (!u.gpus().empty()) RecomputeGpuSummary();
  RecomputeFree();
  for (uint32_t p : u.ports()) used_ports_.erase(p);
  auto jit = job_counts_.find(u.job);
  PL_CHECK(jit != job_counts_.end() && jit->second > 0) << "job count underflow on " << name_;
  if (--jit->second == 0) job_counts_.erase(jit);
  for (uint32_t lp : u.label_pairs()) {
    auto it = label_pair_counts_.find(lp);
    PL_CHECK(it != label_pair_counts_.end() && it->second > 0) << "label count underflow";
    if (--it->second == 0) label_pair_counts_.erase(it);
  }
  ++version_;
}

}  // namespace paceline::placement
