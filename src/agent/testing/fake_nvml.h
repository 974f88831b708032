#pragma once
// The fake NVML for tests: libfake_nvml.so (fake_nvml.cc, built at
// BUILD/testing/libfake_nvml.so) exports the NVML entry points that devices/nvml.h loads, and
// serves them from two files named by the environment, so that a test, or an agent it starts,
// sees GPUs, MIG instances and faults without a GPU.
//
// PACELINE_FAKE_NVML_DEVICES: the device table, read at every nvmlInit_v2 (absent or
// unreadable: nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED, 9). One line per device,
// '#' starts a comment line, names have '_' for each space:
//
//   gpu NAME MEMORY_MIB UUID MINOR [noevents]
//   mig GPU_INDEX MIG_SLOT GPU_INSTANCE_ID NAME MEMORY_MIB UUID
//
//   gpu NVIDIA_A100-SXM4-80GB 81920 GPU-0a 0
//   mig 0 1 7 NVIDIA_A100-SXM4-80GB_MIG_1g.10gb 9856 MIG-0a-1
//
// GPUs are NVML indexes 0.. in their order; a gpu with mig lines is in MIG mode, its MIG
// devices at their slots (0-6; the others are empty: NOT_FOUND). `noevents`: the GPU supports
// no events (nvmlDeviceGetSupportedEventTypes: NOT_SUPPORTED).
//
// PACELINE_FAKE_NVML_EVENTS: events, appended by the test (from any process) while NVML runs.
// nvmlEventSetWait_v2 returns the next complete line after those its event set has read, of a
// GPU registered for that event type, polling the file every 20 ms up to its timeout:
//
//   xid GPU_INDEX CODE [GPU_INSTANCE_ID]   an XID critical error (no id: 0xFFFFFFFF, all)
//   ecc GPU_INDEX                          a double-bit ECC error
//
// Thread-safety: the helpers below are plain file writes; an event line is appended with one
// write(2), so a reader never sees half of it.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace paceline::agent::testing {

struct FakeMig {
  int slot = 0;          // the MIG device index (nvmlDeviceGetMigDeviceHandleByIndex)
  int gpu_instance = 0;  // its GPU instance id
  std::string name;      // e.g. "NVIDIA A100-SXM4-80GB MIG 1g.10gb"
  int64_t memory_mib = 0;
  std::string uuid;  // "MIG-…"
};

struct FakeGpu {
  std::string name;  // e.g. "NVIDIA A100-SXM4-80GB"
  int64_t memory_mib = 0;
  std::string uuid;           // "GPU-…"
  int minor = 0;              // /dev/nvidia<minor>
  std::vector<FakeMig> migs;  // not empty: the GPU is in MIG mode
  bool events = true;         // false: it supports no events
};

// Where the build put libfake_nvml.so.
std::string FakeNvmlPath();

// Writes the device table for `gpus` to `path` (whole).
absl::Status WriteFakeNvmlDevices(const std::string& path, const std::vector<FakeGpu>& gpus);

// Appends one event line, e.g. "xid 0 79", "xid 1 94 7", "ecc 2".
absl::Status InjectFakeNvmlEvent(const std::string& events_path, absl::string_view line);

// Points this process (and what it starts later) at the two files:
// PACELINE_FAKE_NVML_DEVICES and PACELINE_FAKE_NVML_EVENTS.
void UseFakeNvml(const std::string& devices_path, const std::string& events_path);

}  // namespace paceline::agent::testing
