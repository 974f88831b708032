#include "main/stop_signals.h"

#include <pthread.h>

#include <iostream>

namespace paceline::cli {

sigset_t BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

void WaitForStopSignal(sigset_t& set) {
  int sig = 0;
  sigwait(&set, &sig);
  std::cout << "received " << (sig == SIGINT ? "SIGINT" : "SIGTERM") << ", stopping" << std::endl;
}

}  // namespace paceline::cli
