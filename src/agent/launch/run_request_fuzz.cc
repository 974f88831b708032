// Fuzzes the decoder of a supervisor's run requests (wrapper_protocol.h) and the status-line
// parser: any input decodes or is refused, never a crash; what decodes encodes to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "agent/launch/wrapper_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace w = paceline::agent::wrapper;
  const char* input = reinterpret_cast<const char*>(data);
  std::vector<std::string> argv, env;
  if (w::DecodeRequest(input, size, &argv, &env) &&
      w::EncodeRequest(argv, env) != std::string(input, size)) {
    std::abort();
  }
  w::ParseStatus(std::string(input, size));
  return 0;
}
