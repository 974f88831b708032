#pragma once
// A cut network path for the end-to-end tests, on one machine.

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "tests/e2e/process.h"

namespace paceline::e2e {

// Drops every packet to and from `address` while it lives: iptables rules in the OUTPUT chain,
// which loopback packets pass both ways. Only that address's traffic is touched.
class NetworkCut {
 public:
  explicit NetworkCut(std::string address) : address_(std::move(address)) { Rules("-I"); }
  ~NetworkCut() { Heal(); }
  void Heal() {
    if (!healed_) Rules("-D");
    healed_ = true;
  }

 private:
  void Rules(const char* verb) {
    for (const char* way : {"-d", "-s"}) {
      RunResult r =
          RunProgram({"-w", verb, "OUTPUT", way, address_, "-j", "DROP"}, {.program = "iptables"});
      EXPECT_EQ(r.exit_code, 0) << "iptables: " << r.err;
    }
  }

  std::string address_;
  bool healed_ = false;
};

}  // namespace paceline::e2e
