#pragma once
// How the long-running commands (master, agent, up, bench fleet) wait for Ctrl-C or SIGTERM.
//
// Thread-safety: call BlockStopSignals on the main thread before starting any other thread
// (threads inherit the mask), then WaitForStopSignal on one thread.

#include <signal.h>

namespace paceline::cli {

// Blocks SIGINT/SIGTERM in this thread (and so in every thread started after it) and returns
// the set, so that the main thread can wait for them with sigwait.
sigset_t BlockStopSignals();

// Waits for one of `set` and says which arrived on stdout.
void WaitForStopSignal(sigset_t& set);

}  // namespace paceline::cli
