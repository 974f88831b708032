#include "agent/isolation/gpu_hook.h"

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paceline::agent {

namespace {

// The name CUDA_VISIBLE_DEVICES gives slot `slot` (gpu_hook.h).
std::string VisibleName(const GpuDevice* d, int slot) {
  if (d == nullptr) return absl::StrCat(slot);
  if (d->parent >= 0 && !d->uuid.empty()) return d->uuid;
  if (!d->cdi_name.empty() && absl::c_all_of(d->cdi_name, absl::ascii_isdigit)) return d->cdi_name;
  return absl::StrCat(slot);
}

}  // namespace

GpuAllocator::GpuAllocator(const std::vector<GpuDevice>& devices) : devices_(devices) {
  for (const GpuDevice& d : devices) used_[d.index] = 0;
}

const GpuDevice* GpuAllocator::device(int index) const {
  for (const GpuDevice& d : devices_) {
    if (d.index == index) return &d;
  }
  return nullptr;
}

int64_t GpuAllocator::used_milli(int device) const {
  auto it = used_.find(device);
  return it == used_.end() ? 0 : it->second;
}

int64_t GpuAllocator::PerDevice(int64_t milli, size_t n) {
  return milli >= 1000 ? 1000 : (n == 0 ? 0 : milli);
}

absl::StatusOr<std::vector<int>> GpuAllocator::Allocate(int64_t milli) {
  if (milli <= 0) return std::vector<int>{};
  std::vector<int> picked;
  if (milli >= 1000) {
    if (milli % 1000 != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("gpu ", milli, "m: ask for whole GPUs or a share of one GPU"));
    }
    size_t want = static_cast<size_t>(milli / 1000);
    for (const auto& [index, used] : used_) {
      if (used == 0 && picked.size() < want) picked.push_back(index);
    }
    if (picked.size() < want) {
      return absl::ResourceExhaustedError(
          absl::StrCat("need ", want, " free GPU(s), ", picked.size(), " free on this host"));
    }
  } else {
    int best = -1;
    int64_t best_room = 1001;
    for (const auto& [index, used] : used_) {
      int64_t room = 1000 - used;
      if (room >= milli && room < best_room) {
        best = index;
        best_room = room;
      }
    }
    if (best < 0) {
      return absl::ResourceExhaustedError(
          absl::StrCat("no GPU has ", milli, " milli-GPUs free on this host"));
    }
    picked.push_back(best);
  }
  for (int d : picked) used_[d] += PerDevice(milli, picked.size());
  return picked;
}

absl::Status GpuAllocator::Reserve(const std::vector<int>& devices, int64_t milli) {
  int64_t each = PerDevice(milli, devices.size());
  for (int d : devices) {
    auto it = used_.find(d);
    if (it == used_.end()) {
      return absl::NotFoundError(absl::StrCat("GPU ", d, " does not exist on this host"));
    }
    if (it->second + each > 1000) {
      return absl::ResourceExhaustedError(
          absl::StrCat("GPU ", d, " has ", 1000 - it->second, " milli-GPUs free, need ", each));
    }
  }
  for (int d : devices) used_[d] += each;
  return absl::OkStatus();
}

void GpuAllocator::Release(const std::vector<int>& devices, int64_t milli) {
  int64_t each = PerDevice(milli, devices.size());
  for (int d : devices) {
    auto it = used_.find(d);
    if (it != used_.end()) it->second = std::max<int64_t>(0, it->second - each);
  }
}

absl::Status GpuHook::Prepare(RunContext& ctx) {
  int64_t milli = ctx.request.spec.resources.gpu_milli();
  if (milli > 0 || !ctx.request.gpu_devices.empty()) {
    if (!ctx.request.gpu_devices.empty()) {
      absl::Status s = gpus_.Reserve(ctx.request.gpu_devices, std::max<int64_t>(milli, 1));
      if (!s.ok()) return s;
      ctx.gpus = ctx.request.gpu_devices;
    } else {
      absl::StatusOr<std::vector<int>> d = gpus_.Allocate(milli);
      if (!d.ok()) return d.status();
      ctx.gpus = *d;
    }
  }
  if (!ctx.gpus.empty() || !gpus_.empty()) {
    ctx.env["CUDA_VISIBLE_DEVICES"] = absl::StrJoin(
        ctx.gpus, ",",
        [this](std::string* out, int slot) { out->append(VisibleName(gpus_.device(slot), slot)); });
  }
  return absl::OkStatus();
}

absl::Status GpuHook::Recover(RunContext& ctx) {
  if (ctx.gpus.empty()) return absl::OkStatus();
  return gpus_.Reserve(ctx.gpus, std::max<int64_t>(ctx.request.spec.resources.gpu_milli(), 1));
}

void GpuHook::Cleanup(RunContext& ctx, CleanupKind) {
  if (ctx.gpus.empty()) return;
  gpus_.Release(ctx.gpus, std::max<int64_t>(ctx.request.spec.resources.gpu_milli(), 1));
  ctx.gpus.clear();
}

}  // namespace paceline::agent
