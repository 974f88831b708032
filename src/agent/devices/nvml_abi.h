#pragma once
// The part of NVML's C ABI that the agent uses (the driver's nvml.h; stable across driver
// versions): its handles, return codes, event masks and the two structs it fills. Shared by
// the loader (nvml.cc) and the tests' fake library (agent/testing/fake_nvml.cc), so that the
// two cannot disagree. Plain declarations: no abseil, no code.

namespace paceline::agent::nvml_abi {

// Opaque handles: NVML defines the structs; the fake library defines them for itself.
struct nvmlDevice_st;
struct nvmlEventSet_st;
using nvmlDevice_t = nvmlDevice_st*;
using nvmlEventSet_t = nvmlEventSet_st*;

using nvmlReturn_t = int;
inline constexpr nvmlReturn_t kSuccess = 0;
inline constexpr nvmlReturn_t kUninitialized = 1;
inline constexpr nvmlReturn_t kInvalidArgument = 2;
inline constexpr nvmlReturn_t kNotSupported = 3;
inline constexpr nvmlReturn_t kNotFound = 6;
inline constexpr nvmlReturn_t kInsufficientSize = 7;
inline constexpr nvmlReturn_t kDriverNotLoaded = 9;
inline constexpr nvmlReturn_t kTimeout = 10;
inline constexpr nvmlReturn_t kUnknown = 999;

// Event types (nvmlEventType*).
inline constexpr unsigned long long kDoubleBitEcc = 0x2;
inline constexpr unsigned long long kXidCritical = 0x8;
inline constexpr unsigned int kMigEnabled = 1;             // NVML_DEVICE_MIG_ENABLE
inline constexpr unsigned int kAllInstances = 0xFFFFFFFF;  // an event of no GPU instance
// NVML_DEVICE_NAME_V2_BUFFER_SIZE and NVML_DEVICE_UUID_V2_BUFFER_SIZE.
inline constexpr unsigned int kNameSize = 96;

struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID, for an XID event
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

}  // namespace paceline::agent::nvml_abi
