#pragma once

#include <caf/atom.hpp>

/// Timers of the actors that gather Redis writes from their mailbox and send them in
/// one pipelined round trip: the telemetry writer and the command responder. Each
/// sends them only to itself, and they mean the same for both.
namespace tgw::actors {

/// (flush_atom): write what has been gathered. Sent behind the writes already queued,
/// so they join the batch.
using flush_atom = caf::atom_constant<caf::atom("batchflush")>;
/// (retry_atom): the wait after a refusal is over; send again what Redis refused and
/// may safely take again.
using retry_atom = caf::atom_constant<caf::atom("retry")>;
/// (settle_atom): look whether a failure spell whose last success came soon after its
/// last failure has ended (infra::health::failure_log::settled).
using settle_atom = caf::atom_constant<caf::atom("settle")>;

}  // namespace tgw::actors
