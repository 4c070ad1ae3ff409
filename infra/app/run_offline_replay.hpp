#pragma once

#include "infra/replay/offline_replay.hpp"

namespace tgw::infra::app {

/// `tgw replay --offline`: runs every recorded connection through the real session
/// actor and telemetry writer, with no sockets and no Redis, on a scheduler that runs
/// them on the calling thread step by step (replay_scheduler.hpp). Each connection's
/// device bytes go through the same tcp_framer the server uses, in capture order; the
/// writer persists into an in-memory store that folds like the Redis functions, and
/// whose clock is the capture's time. The same capture always gives the same result.
/// Blocks the calling thread until done.
replay::offline_result run_offline_replay(const capture::capture_set& capture,
                                          const replay::offline_settings& settings);

}  // namespace tgw::infra::app
