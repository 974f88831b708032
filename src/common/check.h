#pragma once
// CHECK-style assertions for broken invariants: a broken invariant is a crash with a message,
// never a silently wrong number. Always on (also in release builds); keep them off hot loops.
//
//   PL_CHECK(cond) << "context " << value;

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace paceline::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* cond) {
    stream_ << file << ":" << line << ": check failed: " << cond << " ";
  }
  [[noreturn]] ~CheckFailure() {
    std::cerr << stream_.str() << std::endl;
    std::abort();
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

}  // namespace paceline::internal

#define PL_CHECK(cond) \
  if (cond) {          \
  } else               \
    ::paceline::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()
