// NVML through dlopen: GPU discovery (MIG instances as devices) and fault events (nvml.h).

#include "agent/devices/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "agent/devices/nvml_abi.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace paceline::agent {
namespace {

using namespace nvml_abi;  // NOLINT: the ABI's names, as nvml.h spells them

// Well-known XIDs of the hardware (NVIDIA's XID catalogue), for the fault's reason.
absl::string_view XidText(unsigned long long xid) {
  switch (xid) {
    case 48:
      return "double-bit ECC error";
    case 63:
      return "ECC page retirement or row remapping recorded";
    case 64:
      return "ECC page retirement or row remapping failed";
    case 74:
      return "NVLink error";
    case 79:
      return "GPU has fallen off the bus";
    case 92:
      return "high single-bit ECC error rate";
    case 94:
      return "contained ECC error";
    case 95:
      return "uncontained ECC error";
    case 119:
      return "GSP RPC timeout";
    case 120:
      return "GSP error";
    default:
      return "";
  }
}

std::string XidReason(unsigned long long xid) {
  absl::string_view text = XidText(xid);
  return text.empty() ? absl::StrCat("XID ", xid) : absl::StrCat("XID ", xid, ": ", text);
}

bool IsApplicationXid(unsigned long long xid) {
  return std::find(std::begin(kApplicationXids), std::end(kApplicationXids),
                   static_cast<int>(xid)) != std::end(kApplicationXids);
}

// "NVIDIA A100-SXM4-80GB" -> "A100"; "NVIDIA H100 80GB HBM3" -> "H100".
std::string Family(absl::string_view gpu_name) {
  absl::ConsumePrefix(&gpu_name, "NVIDIA ");
  return std::string(gpu_name.substr(0, gpu_name.find_first_of("- ")));
}

// The model of a MIG instance: "NVIDIA A100-SXM4-80GB MIG 1g.10gb" of an A100 -> "A100-1g.10gb".
std::string MigModel(absl::string_view gpu_name, absl::string_view mig_name) {
  size_t at = mig_name.find("MIG ");
  absl::string_view profile = at == absl::string_view::npos ? mig_name : mig_name.substr(at + 4);
  return absl::StrCat(Family(gpu_name), "-", profile);
}

}  // namespace

// The library, its entry points, and the watch's state.
struct Nvml::Api {
  void* lib = nullptr;
  nvmlReturn_t (*Init)() = nullptr;
  nvmlReturn_t (*Shutdown)() = nullptr;
  const char* (*ErrorString)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*GetCount)(unsigned int*) = nullptr;
  nvmlReturn_t (*GetHandleByIndex)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*GetName)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*GetUUID)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*GetMemoryInfo)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*GetMinorNumber)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*GetMigMode)(nvmlDevice_t, unsigned int*, unsigned int*) = nullptr;
  nvmlReturn_t (*GetMaxMigDeviceCount)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*GetMigDeviceHandleByIndex)(nvmlDevice_t, unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*GetGpuInstanceId)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*EventSetCreate)(nvmlEventSet_t*) = nullptr;
  nvmlReturn_t (*RegisterEvents)(nvmlDevice_t, unsigned long long, nvmlEventSet_t) = nullptr;
  nvmlReturn_t (*EventSetWait)(nvmlEventSet_t, nvmlEventData_t*, unsigned int) = nullptr;
  nvmlReturn_t (*EventSetFree)(nvmlEventSet_t) = nullptr;
  nvmlReturn_t (*GetSupportedEventTypes)(nvmlDevice_t, unsigned long long*) = nullptr;

  bool initialized = false;
  bool watching = false;
  nvmlEventSet_t events = nullptr;
  // A watched GPU: its handle and its slots, with their GPU instance ids (-1: a whole GPU).
  struct Watched {
    nvmlDevice_t handle = nullptr;
    std::vector<std::pair<int, int>> slots;  // (slot, gpu instance)
  };
  std::vector<Watched> watched;

  ~Api() {
    if (events != nullptr) EventSetFree(events);
    if (initialized) Shutdown();
    if (lib != nullptr) ::dlclose(lib);
  }

  // An error naming the call and NVML's message.
  absl::Status Error(absl::string_view call, nvmlReturn_t rc) const {
    const char* text = ErrorString != nullptr ? ErrorString(rc) : nullptr;
    std::string message = absl::StrCat(call, ": ", text != nullptr ? text : "unknown error",
                                       " (NVML error ", rc, ")");
    if (rc == kNotFound) return absl::NotFoundError(message);
    if (rc == kNotSupported) return absl::UnimplementedError(message);
    if (rc == kTimeout) return absl::DeadlineExceededError(message);
    return absl::InternalError(message);
  }
  absl::Status Check(absl::string_view call, nvmlReturn_t rc) const {
    return rc == kSuccess ? absl::OkStatus() : Error(call, rc);
  }

  template <typename F>
  absl::Status Resolve(F& fn, const char* symbol) {
    fn = reinterpret_cast<F>(::dlsym(lib, symbol));
    if (fn == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("NVML library has no ", symbol, " (a driver too old?)"));
    }
    return absl::OkStatus();
  }

  absl::Status ResolveAll() {
    RETURN_IF_ERROR(Resolve(Init, "nvmlInit_v2"));
    RETURN_IF_ERROR(Resolve(Shutdown, "nvmlShutdown"));
    RETURN_IF_ERROR(Resolve(ErrorString, "nvmlErrorString"));
    RETURN_IF_ERROR(Resolve(GetCount, "nvmlDeviceGetCount_v2"));
    RETURN_IF_ERROR(Resolve(GetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2"));
    RETURN_IF_ERROR(Resolve(GetName, "nvmlDeviceGetName"));
    RETURN_IF_ERROR(Resolve(GetUUID, "nvmlDeviceGetUUID"));
    RETURN_IF_ERROR(Resolve(GetMemoryInfo, "nvmlDeviceGetMemoryInfo"));
    RETURN_IF_ERROR(Resolve(GetMinorNumber, "nvmlDeviceGetMinorNumber"));
    RETURN_IF_ERROR(Resolve(GetMigMode, "nvmlDeviceGetMigMode"));
    RETURN_IF_ERROR(Resolve(GetMaxMigDeviceCount, "nvmlDeviceGetMaxMigDeviceCount"));
    RETURN_IF_ERROR(Resolve(GetMigDeviceHandleByIndex, "nvmlDeviceGetMigDeviceHandleByIndex"));
    RETURN_IF_ERROR(Resolve(GetGpuInstanceId, "nvmlDeviceGetGpuInstanceId"));
    RETURN_IF_ERROR(Resolve(EventSetCreate, "nvmlEventSetCreate"));
    RETURN_IF_ERROR(Resolve(RegisterEvents, "nvmlDeviceRegisterEvents"));
    RETURN_IF_ERROR(Resolve(EventSetWait, "nvmlEventSetWait_v2"));
    RETURN_IF_ERROR(Resolve(EventSetFree, "nvmlEventSetFree"));
    return Resolve(GetSupportedEventTypes, "nvmlDeviceGetSupportedEventTypes");
  }

  absl::StatusOr<nvmlDevice_t> Handle(unsigned int i) const {
    nvmlDevice_t dev = nullptr;
    RETURN_IF_ERROR(
        Check(absl::StrCat("nvmlDeviceGetHandleByIndex_v2(", i, ")"), GetHandleByIndex(i, &dev)));
    return dev;
  }
  absl::StatusOr<std::string> Name(nvmlDevice_t dev, absl::string_view what) const {
    char buf[kNameSize] = {};
    RETURN_IF_ERROR(
        Check(absl::StrCat("nvmlDeviceGetName(", what, ")"), GetName(dev, buf, sizeof(buf))));
    return std::string(buf);
  }
  absl::StatusOr<std::string> Uuid(nvmlDevice_t dev, absl::string_view what) const {
    char buf[kNameSize] = {};
    RETURN_IF_ERROR(
        Check(absl::StrCat("nvmlDeviceGetUUID(", what, ")"), GetUUID(dev, buf, sizeof(buf))));
    return std::string(buf);
  }
  absl::StatusOr<int64_t> Memory(nvmlDevice_t dev, absl::string_view what) const {
    nvmlMemory_t m{};
    RETURN_IF_ERROR(
        Check(absl::StrCat("nvmlDeviceGetMemoryInfo(", what, ")"), GetMemoryInfo(dev, &m)));
    return static_cast<int64_t>(m.total);
  }

  // The MIG instances of GPU `i` (whose device is `gpu`), appended to `out` as slots.
  absl::Status AppendMig(unsigned int i, nvmlDevice_t dev, const GpuDevice& gpu,
                         std::vector<GpuDevice>& out) const {
    unsigned int max = 0;
    RETURN_IF_ERROR(Check(absl::StrCat("nvmlDeviceGetMaxMigDeviceCount(", i, ")"),
                          GetMaxMigDeviceCount(dev, &max)));
    for (unsigned int j = 0; j < max; ++j) {
      const std::string what = absl::StrCat(i, ":", j);
      nvmlDevice_t mig = nullptr;
      nvmlReturn_t rc = GetMigDeviceHandleByIndex(dev, j, &mig);
      if (rc == kNotFound) continue;  // an empty slot
      RETURN_IF_ERROR(Check(absl::StrCat("nvmlDeviceGetMigDeviceHandleByIndex(", what, ")"), rc));
      GpuDevice d;
      d.index = static_cast<int>(out.size());
      ASSIGN_OR_RETURN(std::string name, Name(mig, what));
      d.model = MigModel(gpu.model, name);
      ASSIGN_OR_RETURN(d.memory_bytes, Memory(mig, what));
      ASSIGN_OR_RETURN(d.uuid, Uuid(mig, what));
      d.cdi_name = what;
      d.minor = gpu.minor;
      d.parent = static_cast<int>(i);
      unsigned int gi = 0;
      RETURN_IF_ERROR(Check(absl::StrCat("nvmlDeviceGetGpuInstanceId(", what, ")"),
                            GetGpuInstanceId(mig, &gi)));
      d.gpu_instance = static_cast<int>(gi);
      out.push_back(std::move(d));
    }
    return absl::OkStatus();
  }
};

Nvml::Nvml(std::unique_ptr<Api> api) : api_(std::move(api)) {}
Nvml::~Nvml() = default;

absl::StatusOr<std::unique_ptr<Nvml>> Nvml::Open(const std::string& library) {
  auto api = std::make_unique<Api>();
  api->lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (api->lib == nullptr) {
    const char* why = ::dlerror();
    return absl::NotFoundError(
        absl::StrCat("load ", library, ": ", why != nullptr ? why : "dlopen failed"));
  }
  RETURN_IF_ERROR(api->ResolveAll());
  nvmlReturn_t rc = api->Init();
  if (rc == kDriverNotLoaded) {  // the library without its driver: no GPUs here
    return absl::NotFoundError(absl::StrCat("nvmlInit_v2: ", api->ErrorString(rc)));
  }
  RETURN_IF_ERROR(api->Check("nvmlInit_v2", rc));
  api->initialized = true;
  return std::unique_ptr<Nvml>(new Nvml(std::move(api)));
}

absl::StatusOr<std::vector<GpuDevice>> Nvml::Devices() {
  const Api& a = *api_;
  unsigned int count = 0;
  RETURN_IF_ERROR(a.Check("nvmlDeviceGetCount_v2", a.GetCount(&count)));
  std::vector<GpuDevice> out;
  for (unsigned int i = 0; i < count; ++i) {
    const std::string what = absl::StrCat(i);
    ASSIGN_OR_RETURN(nvmlDevice_t dev, a.Handle(i));
    GpuDevice gpu;
    ASSIGN_OR_RETURN(gpu.model, a.Name(dev, what));
    ASSIGN_OR_RETURN(gpu.memory_bytes, a.Memory(dev, what));
    ASSIGN_OR_RETURN(gpu.uuid, a.Uuid(dev, what));
    gpu.cdi_name = what;
    unsigned int minor = 0;
    nvmlReturn_t rc = a.GetMinorNumber(dev, &minor);
    if (rc == kSuccess) gpu.minor = static_cast<int>(minor);
    unsigned int current = 0, pending = 0;
    rc = a.GetMigMode(dev, &current, &pending);
    if (rc != kSuccess && rc != kNotSupported) {
      return a.Error(absl::StrCat("nvmlDeviceGetMigMode(", i, ")"), rc);
    }
    if (rc == kSuccess && current == kMigEnabled) {
      size_t before = out.size();
      RETURN_IF_ERROR(a.AppendMig(i, dev, gpu, out));
      if (out.size() == before) {
        spdlog::warn("GPU {} ({}) is in MIG mode without MIG instances: it offers no device", i,
                     gpu.uuid);
      }
      continue;
    }
    gpu.index = static_cast<int>(out.size());
    out.push_back(std::move(gpu));
  }
  return out;
}

absl::Status Nvml::WatchHealth(const std::vector<GpuDevice>& devices) {
  Api& a = *api_;
  if (a.watching) return absl::FailedPreconditionError("NVML: already watching the GPUs' health");
  unsigned int count = 0;
  RETURN_IF_ERROR(a.Check("nvmlDeviceGetCount_v2", a.GetCount(&count)));
  RETURN_IF_ERROR(a.Check("nvmlEventSetCreate", a.EventSetCreate(&a.events)));
  a.watching = true;
  for (unsigned int i = 0; i < count; ++i) {
    const std::string what = absl::StrCat(i);
    ASSIGN_OR_RETURN(nvmlDevice_t dev, a.Handle(i));
    ASSIGN_OR_RETURN(std::string uuid, a.Uuid(dev, what));
    Api::Watched w{dev, {}};
    for (const GpuDevice& d : devices) {
      if (d.parent == static_cast<int>(i) || (d.parent < 0 && !d.uuid.empty() && d.uuid == uuid)) {
        w.slots.emplace_back(d.index, d.parent < 0 ? -1 : d.gpu_instance);
      }
    }
    if (w.slots.empty()) continue;
    unsigned long long supported = 0;
    nvmlReturn_t rc = a.GetSupportedEventTypes(dev, &supported);
    if (rc == kNotSupported ||
        (rc == kSuccess && (supported & (kXidCritical | kDoubleBitEcc)) == 0)) {
      spdlog::warn("GPU {} ({}): NVML reports no fault events for it; its health is not watched", i,
                   uuid);
      continue;
    }
    RETURN_IF_ERROR(a.Check(absl::StrCat("nvmlDeviceGetSupportedEventTypes(", i, ")"), rc));
    rc = a.RegisterEvents(dev, supported & (kXidCritical | kDoubleBitEcc), a.events);
    if (rc == kNotSupported) {
      spdlog::warn("GPU {} ({}): {}; its health is not watched", i, uuid,
                   a.Error("nvmlDeviceRegisterEvents", rc).ToString());
      continue;
    }
    RETURN_IF_ERROR(a.Check(absl::StrCat("nvmlDeviceRegisterEvents(", i, ")"), rc));
    a.watched.push_back(std::move(w));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<GpuFault>> Nvml::WaitForFaults(absl::Duration timeout) {
  const Api& a = *api_;
  if (!a.watching) return absl::FailedPreconditionError("NVML: WaitForFaults before WatchHealth");
  if (a.watched.empty()) {  // nothing can come
    absl::SleepFor(timeout);
    return std::vector<GpuFault>{};
  }
  std::vector<GpuFault> faults;
  auto add = [&](int slot, std::string reason) {
    for (const GpuFault& f : faults) {
      if (f.device == slot) return;
    }
    faults.push_back(GpuFault{slot, std::move(reason), absl::Now()});
  };
  // The first event within `timeout`, then those already there.
  unsigned int wait_ms = static_cast<unsigned int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(timeout), 0, int64_t{1} << 30));
  for (;;) {
    nvmlEventData_t e{};
    nvmlReturn_t rc = a.EventSetWait(a.events, &e, wait_ms);
    if (rc == kTimeout) break;
    RETURN_IF_ERROR(a.Check("nvmlEventSetWait_v2", rc));
    wait_ms = 0;
    std::string reason;
    if (e.eventType == kXidCritical) {
      if (IsApplicationXid(e.eventData)) continue;
      reason = XidReason(e.eventData);
    } else if (e.eventType == kDoubleBitEcc) {
      reason = "double-bit ECC error";
    } else {
      continue;
    }
    for (const Api::Watched& w : a.watched) {
      if (w.handle != e.device) continue;
      for (const auto& [slot, instance] : w.slots) {
        if (instance < 0 || e.gpuInstanceId == kAllInstances ||
            static_cast<unsigned int>(instance) == e.gpuInstanceId) {
          add(slot, reason);
        }
      }
    }
  }
  return faults;
}

GpuHealthWatch::GpuHealthWatch(std::unique_ptr<Nvml> nvml, std::vector<GpuDevice> devices)
    : nvml_(std::move(nvml)), devices_(std::move(devices)) {}

absl::StatusOr<std::unique_ptr<GpuHealthWatch>> GpuHealthWatch::Start(
    std::unique_ptr<Nvml> nvml, std::vector<GpuDevice> devices) {
  if (nvml == nullptr) return absl::InvalidArgumentError("GpuHealthWatch: no NVML");
  RETURN_IF_ERROR(nvml->WatchHealth(devices));
  std::unique_ptr<GpuHealthWatch> w(new GpuHealthWatch(std::move(nvml), std::move(devices)));
  w->thread_ = std::thread([raw = w.get()] { raw->Loop(); });
  return w;
}

GpuHealthWatch::~GpuHealthWatch() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

std::vector<GpuFault> GpuHealthWatch::Faults() const {
  absl::MutexLock lock(&mu_);
  return faults_;
}

void GpuHealthWatch::Loop() {
  while (!stop_.load()) {
    absl::StatusOr<std::vector<GpuFault>> got = nvml_->WaitForFaults(absl::Seconds(1));
    if (!got.ok()) {
      spdlog::warn("GPU health: {}", got.status().ToString());
      for (int i = 0; i < 10 && !stop_.load(); ++i) absl::SleepFor(absl::Milliseconds(100));
      continue;
    }
    if (got->empty()) continue;
    absl::MutexLock lock(&mu_);
    bool changed = false;
    for (GpuFault& f : *got) {
      auto known = std::find_if(faults_.begin(), faults_.end(),
                                [&](const GpuFault& k) { return k.device == f.device; });
      if (known != faults_.end()) continue;  // the first fault of a device stays
      spdlog::error("GPU {} is unhealthy: {}", f.device, f.reason);
      faults_.push_back(std::move(f));
      changed = true;
    }
    if (changed) {
      std::sort(faults_.begin(), faults_.end(),
                [](const GpuFault& x, const GpuFault& y) { return x.device < y.device; });
      version_.fetch_add(1);
    }
  }
}

}  // namespace paceline::agent
