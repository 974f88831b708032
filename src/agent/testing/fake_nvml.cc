// libfake_nvml.so: the NVML entry points the agent uses (devices/nvml.h), over a device table
// and an event file (formats in fake_nvml.h). C ABI, libc and libstdc++ only: no abseil, so
// that it loads into any process.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "agent/devices/nvml_abi.h"

using namespace paceline::agent::nvml_abi;  // NOLINT: the ABI's names, as nvml.h spells them

namespace {

constexpr unsigned int kMaxMig = 7;  // an A100's or H100's MIG slots
constexpr int kMaxGpus = 16;

}  // namespace

// The handles NVML hands out: GPU `gpu`, or its MIG device `mig` (-1: the GPU itself).
struct paceline::agent::nvml_abi::nvmlDevice_st {
  int gpu = 0;
  int mig = -1;
};
struct paceline::agent::nvml_abi::nvmlEventSet_st {
  off_t offset = 0;                        // of the event file: the next unread line
  unsigned long long mask[kMaxGpus] = {};  // registered event types, per GPU
};

namespace {

struct Mig {
  bool present = false;
  unsigned int gpu_instance = 0;
  std::string name;
  unsigned long long memory_mib = 0;
  std::string uuid;
};
struct Gpu {
  std::string name;
  unsigned long long memory_mib = 0;
  std::string uuid;
  unsigned int minor = 0;
  bool events = true;
  bool mig_mode = false;
  Mig migs[kMaxMig];
};

std::mutex mu;
int init_count = 0;
std::vector<Gpu> gpus;
// Stable handles: one per GPU and one per MIG slot of each.
nvmlDevice_st gpu_handles[kMaxGpus];
nvmlDevice_st mig_handles[kMaxGpus][kMaxMig];

std::string Spaces(std::string s) {
  for (char& c : s) {
    if (c == '_') c = ' ';
  }
  return s;
}

// Reads the device table; false (and a line on stderr) when it is missing or malformed.
bool Load(const char* path) {
  std::ifstream in(path);
  if (!in) return false;
  std::vector<Gpu> table;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::istringstream f(line);
    std::string kind;
    if (!(f >> kind) || kind[0] == '#') continue;
    if (kind == "gpu") {
      Gpu g;
      std::string flag;
      if (!(f >> g.name >> g.memory_mib >> g.uuid >> g.minor) || table.size() >= kMaxGpus) {
        std::fprintf(stderr, "fake NVML: %s:%d: bad gpu line\n", path, n);
        return false;
      }
      g.name = Spaces(g.name);
      if (f >> flag) g.events = flag != "noevents";
      table.push_back(g);
    } else if (kind == "mig") {
      size_t gpu = 0;
      unsigned int slot = 0;
      Mig m;
      if (!(f >> gpu >> slot >> m.gpu_instance >> m.name >> m.memory_mib >> m.uuid) ||
          gpu >= table.size() || slot >= kMaxMig) {
        std::fprintf(stderr, "fake NVML: %s:%d: bad mig line\n", path, n);
        return false;
      }
      m.name = Spaces(m.name);
      m.present = true;
      table[gpu].mig_mode = true;
      table[gpu].migs[slot] = m;
    } else {
      std::fprintf(stderr, "fake NVML: %s:%d: unknown line '%s'\n", path, n, kind.c_str());
      return false;
    }
  }
  gpus = std::move(table);
  for (int i = 0; i < kMaxGpus; ++i) {
    gpu_handles[i] = {i, -1};
    for (unsigned int j = 0; j < kMaxMig; ++j) mig_handles[i][j] = {i, static_cast<int>(j)};
  }
  return true;
}

bool Valid(nvmlDevice_st* d) {
  return d != nullptr && init_count > 0 && d->gpu >= 0 && d->gpu < static_cast<int>(gpus.size());
}

nvmlReturn_t CopyString(const std::string& s, char* out, unsigned int size) {
  if (out == nullptr) return kInvalidArgument;
  if (s.size() + 1 > size) return kInsufficientSize;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return kSuccess;
}

// Parses an event line; false when it is not one (it is skipped).
bool ParseEvent(const std::string& line, nvmlEventData_t* e) {
  std::istringstream f(line);
  std::string kind;
  int gpu = -1;
  if (!(f >> kind >> gpu) || gpu < 0 || gpu >= static_cast<int>(gpus.size())) return false;
  *e = nvmlEventData_t{&gpu_handles[gpu], 0, 0, 0xFFFFFFFFu, 0xFFFFFFFFu};
  if (kind == "xid") {
    unsigned long long code = 0;
    if (!(f >> code)) return false;
    e->eventType = kXidCritical;
    e->eventData = code;
    unsigned int gi = 0;
    if (f >> gi) e->gpuInstanceId = gi;
    return true;
  }
  if (kind == "ecc") {
    e->eventType = kDoubleBitEcc;
    return true;
  }
  return false;
}

// The next complete line of the event file after `set`'s offset, if any.
bool NextLine(nvmlEventSet_st* set, std::string* line) {
  const char* path = std::getenv("PACELINE_FAKE_NVML_EVENTS");
  if (path == nullptr) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  in.seekg(set->offset);
  std::string text;
  if (!std::getline(in, text) || in.eof()) return false;  // none, or not yet a whole line
  set->offset += static_cast<off_t>(text.size() + 1);
  *line = text;
  return true;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2() {
  std::lock_guard<std::mutex> lock(mu);
  const char* path = std::getenv("PACELINE_FAKE_NVML_DEVICES");
  if (path == nullptr || ::access(path, R_OK) != 0) return kDriverNotLoaded;
  if (!Load(path)) return kUnknown;
  ++init_count;
  return kSuccess;
}

nvmlReturn_t nvmlShutdown() {
  std::lock_guard<std::mutex> lock(mu);
  if (init_count == 0) return kUninitialized;
  --init_count;
  return kSuccess;
}

const char* nvmlErrorString(nvmlReturn_t rc) {
  switch (rc) {
    case kSuccess:
      return "Success";
    case kUninitialized:
      return "Uninitialized";
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotSupported:
      return "Not Supported";
    case kNotFound:
      return "Not Found";
    case kInsufficientSize:
      return "Insufficient Size";
    case kDriverNotLoaded:
      return "Driver Not Loaded";
    case kTimeout:
      return "Timeout";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  std::lock_guard<std::mutex> lock(mu);
  if (init_count == 0) return kUninitialized;
  *count = static_cast<unsigned int>(gpus.size());
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_st** device) {
  std::lock_guard<std::mutex> lock(mu);
  if (init_count == 0) return kUninitialized;
  if (i >= gpus.size() || device == nullptr) return kInvalidArgument;
  *device = &gpu_handles[i];
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_st* d, char* name, unsigned int size) {
  std::lock_guard<std::mutex> lock(mu);
  if (!Valid(d)) return kInvalidArgument;
  const Gpu& g = gpus[d->gpu];
  return CopyString(d->mig < 0 ? g.name : g.migs[d->mig].name, name, size);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_st* d, char* uuid, unsigned int size) {
  std::lock_guard<std::mutex> lock(mu);
  if (!Valid(d)) return kInvalidArgument;
  const Gpu& g = gpus[d->gpu];
  return CopyString(d->mig < 0 ? g.uuid : g.migs[d->mig].uuid, uuid, size);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_st* d, nvmlMemory_t* memory) {
  std::lock_guard<std::mutex> lock(mu);
  if (!Valid(d) || memory == nullptr) return kInvalidArgument;
  const Gpu& g = gpus[d->gpu];
  unsigned long long mib = d->mig < 0 ? g.memory_mib : g.migs[d->mig].memory_mib;
  *memory = nvmlMemory_t{mib << 20, mib << 20, 0};
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_st* d, unsigned int* minor) {
  std::lock_guard<std::mutex> lock(mu);
  if (!Valid(d) || minor == nullptr) return kInvalidArgument;
  if (d->mig >= 0) return kNotSupported;  // as the driver: a MIG device has no node of its own
  *minor = gpus[d->gpu].minor;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_st* d, unsigned int* current, unsigned int* pending) {
  std::lock_guard<std::mutex> lock(mu);
  if (!Valid(d) || d->mig >= 0 || current == nullptr || pending == nullptr) {
    return kInvalidArgument;
  }
  *current = *pending = gpus[d->gpu].mig_mode ? 1 : 0;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_st* d, unsigned int* count) {
  std::lock_guard<std::mutex> lock(mu);
  if (!Valid(d) || d->mig >= 0 || count == nullptr) return kInvalidArgument;
  *count = gpus[d->gpu].mig_mode ? kMaxMig : 0;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_st* d, unsigned int i,
                                                 nvmlDevice_st** mig) {
  std::lock_guard<std::mutex> lock(mu);
  if (!Valid(d) || d->mig >= 0 || mig == nullptr || i >= kMaxMig) return kInvalidArgument;
  if (!gpus[d->gpu].migs[i].present) return kNotFound;
  *mig = &mig_handles[d->gpu][i];
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_st* d, unsigned int* id) {
  std::lock_guard<std::mutex> lock(mu);
  if (!Valid(d) || id == nullptr) return kInvalidArgument;
  if (d->mig < 0) return kNotSupported;
  *id = gpus[d->gpu].migs[d->mig].gpu_instance;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_st* d, unsigned long long* types) {
  std::lock_guard<std::mutex> lock(mu);
  if (!Valid(d) || types == nullptr) return kInvalidArgument;
  if (!gpus[d->gpu].events) return kNotSupported;
  *types = 0x1 | kDoubleBitEcc | kXidCritical;
  return kSuccess;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_st** set) {
  if (set == nullptr) return kInvalidArgument;
  *set = new nvmlEventSet_st();
  return kSuccess;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_st* d, unsigned long long types,
                                      nvmlEventSet_st* set) {
  std::lock_guard<std::mutex> lock(mu);
  if (!Valid(d) || d->mig >= 0 || set == nullptr) return kInvalidArgument;
  if (!gpus[d->gpu].events) return kNotSupported;
  set->mask[d->gpu] |= types;
  return kSuccess;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_st* set, nvmlEventData_t* data,
                                 unsigned int timeout_ms) {
  if (set == nullptr || data == nullptr) return kInvalidArgument;
  for (unsigned int waited = 0;; waited += 20) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (init_count == 0) return kUninitialized;
      std::string line;
      while (NextLine(set, &line)) {
        nvmlEventData_t e{};
        if (ParseEvent(line, &e) && (set->mask[e.device->gpu] & e.eventType) != 0) {
          *data = e;
          return kSuccess;
        }
      }
    }
    if (waited >= timeout_ms) return kTimeout;
    ::usleep(20 * 1000);
  }
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_st* set) {
  delete set;
  return kSuccess;
}

}  // extern "C"
