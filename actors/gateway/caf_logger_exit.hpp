#pragma once

// CAF 0.17 notes which actor each thread runs in one map behind one spin lock
// (logger::thread_local_aid), and takes that lock about four times each time a thread
// resumes an actor, only so that its log lines can name the actor. Every thread that
// runs actors writes the lock's word, so with many cores it is a cache line that moves
// between them on every message. Debian builds CAF at log level QUIET, where CAF logs
// nothing, so the threads that run tgw's per-packet actors leave CAF's logger: CAF skips
// the bookkeeping on a thread without one. tgw's own logs go through spdlog.
#include <caf/logger.hpp>

namespace tgw::actors::gateway {

/// Detaches the calling thread from CAF's logger when CAF is built not to log.
/// Cheap enough to call per message: after the first call it reads one pointer.
inline void leave_caf_logger() noexcept {
#if CAF_LOG_LEVEL == CAF_LOG_LEVEL_QUIET
  if (caf::logger::current_logger() != nullptr) caf::logger::set_current_actor_system(nullptr);
#endif
}

}  // namespace tgw::actors::gateway
