#include "infra/commands/command_send.hpp"

#include <thread>

namespace tgw::infra::commands {
namespace {

using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Between attempts after a lost connection: a failover takes a second or so.
constexpr milliseconds retry_pause{200};

// A publish that may succeed when sent again: the connection was lost (its outcome is
// unknown; the command id makes a repeat harmless), or the store is between masters.
bool worth_repeating(const std::string& error) {
  for (const char* transient :
       {"IO", "READONLY", "CLUSTERDOWN", "TRYAGAIN", "LOADING", "MASTERDOWN", "NOREPLICAS"})
    if (error.starts_with(transient)) return true;
  return false;
}

// A stream id some minutes old: where to look for the response of a command that a
// repeated publish found answered (its first publish's newest id is unknown).
std::string minutes_ago_id() {
  const auto ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch() -
                                               std::chrono::minutes{10})
          .count();
  return std::to_string(ms) + "-0";
}

}  // namespace

send_outcome send_command(command_publisher& publisher, const send_request& request,
                          const std::function<bool()>& cancelled) {
  send_outcome out;
  const std::string id = new_command_id();
  const auto deadline = clock::now() + request.timeout;
  const auto stop = [&] { return clock::now() >= deadline || (cancelled && cancelled()); };
  std::optional<publish_result> published;
  for (;;) {
    std::string error;
    published = publisher.publish(request.imei, request.text, request.codec, request.ttl,
                                  request.queue_if_offline, id, error);
    if (published) break;
    if (!worth_repeating(error)) {
      out.error = error;
      out.published.command_id = id;
      return out;
    }
    if (stop()) {
      // Whether the last attempt went through is unknown. Ending the command in the
      // store makes it known either way: a publish that did go through is left to its
      // answer, one that did not can no longer arrive late (its marker now says
      // answered) and has its one response, failed/store_unreachable.
      std::string ignored;
      const auto state = publisher.settle(request.imei, id, store_unreachable, ignored);
      out.published.command_id = id;
      if (!state) {
        out.error = "outcome unknown (" + error + ")";
        return out;
      }
      out.published.status = "sent";
      out.published.last_response_id = minutes_ago_id();
      break;
    }
    std::this_thread::sleep_for(retry_pause);
  }
  if (!published) {
    // Settled above: fetch the one response the store now holds (or the real one).
    std::string error;
    out.response = publisher.wait_response(request.imei, id, out.published.last_response_id,
                                           std::chrono::milliseconds{2000}, error);
    return out;
  }
  out.published = *published;
  if (published->status == "offline" || published->status == "queued") return out;
  std::string from = published->last_response_id;
  if (published->status == "answered") {
    out.published.status = "sent";
    from = minutes_ago_id();
  }
  // Asks the store whether it still has the command, and ends a lost one there. False
  // when Redis did not answer (the caller pauses before asking again).
  const auto settle_if_lost = [&] {
    std::string error;
    return publisher.settle(request.imei, id, store_failover, error).has_value();
  };
  if (request.ack_replicas > 0) {
    // Confirmed within the first seconds or not at all: a publish the replicas cannot
    // take now is on the master only, and the wait below keeps asking after it.
    const auto confirm_by = std::min(deadline, clock::now() + std::chrono::seconds{10});
    while (clock::now() < confirm_by && !(cancelled && cancelled())) {
      out.replicas_confirmed = publisher.confirm_replicas(request.ack_replicas, milliseconds{1000});
      if (out.replicas_confirmed && *out.replicas_confirmed >= request.ack_replicas) break;
      if (!settle_if_lost()) std::this_thread::sleep_for(retry_pause);
    }
  }
  for (;;) {
    const auto left = std::chrono::ceil<milliseconds>(deadline - clock::now());
    if (left.count() <= 0 || (cancelled && cancelled())) return out;
    std::string error;
    out.response = publisher.wait_response(request.imei, id, from, left, error, cancelled);
    if (out.response || error.empty()) return out;
    // The connection to the master was lost (a failover?): the next call connects
    // afresh, to whichever master there is now; ask it after the command first.
    do {
      std::this_thread::sleep_for(retry_pause);
    } while (!settle_if_lost() && !stop());
  }
}

}  // namespace tgw::infra::commands
