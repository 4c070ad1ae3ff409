#pragma once

namespace tgw::infra::process {

/// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread. Call it first thing in
/// main: threads started later inherit the mask, so these signals are only ever taken
/// by wait_for_signal() or wait_for_termination_signal() and never interrupt an io or
/// scheduler thread, and SIGHUP's default action (exit without cleanup) never runs.
void block_termination_signals();

/// Waits until SIGINT, SIGTERM or SIGHUP arrives and returns its number. A long-running
/// service reloads on SIGHUP and goes on waiting.
int wait_for_signal();

/// Waits until SIGINT, SIGTERM or SIGHUP arrives and returns its number: for commands
/// that have nothing to reload, a hang-up ends them as cleanly as SIGTERM.
int wait_for_termination_signal();

/// True if SIGINT, SIGTERM or SIGHUP is pending, taking it. For commands that loop on
/// blocking reads: they poll between reads, at most one read's timeout late.
bool termination_requested();

}  // namespace tgw::infra::process
