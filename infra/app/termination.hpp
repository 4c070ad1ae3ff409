#pragma once

namespace tgw::infra {

/// Blocks SIGINT and SIGTERM in the calling thread. Call it first thing in main:
/// threads started later inherit the mask, so the signal is only ever taken by
/// wait_for_termination_signal() and never interrupts an io or scheduler thread.
void block_termination_signals();

/// Waits until SIGINT or SIGTERM arrives and returns its number.
int wait_for_termination_signal();

}  // namespace tgw::infra
