#pragma once

// A tracker as real devices behave: one packet in flight, resent until ACKed,
// reconnecting when the gateway closes the socket. Tests of outages and failovers drive
// a real gateway with it and then look for every ACKed record in Redis.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "codecs/avl_encode.hpp"
#include "infra/redis/connection.hpp"
#include "tests/support/device_protocol.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {

/// A 1-record Codec 8 packet whose record time identifies it.
inline bytes timed_packet(std::uint64_t ts) {
  codecs::avl_record_data r;
  r.timestamp_ms = ts;
  r.priority = 1;
  r.satellites = 7;
  const std::vector<codecs::avl_record_data> records = {r};
  bytes out;
  (void)codecs::encode_avl_frame(codecs::codec_id::codec8, records, out);
  return out;
}

class tracker {
 public:
  tracker(std::uint16_t port, std::string imei) : port_(port), imei_(std::move(imei)) {}

  /// Sends packet `ts` until ACKed or `deadline`; true when ACKed.
  bool deliver(std::uint64_t ts, std::chrono::milliseconds deadline = std::chrono::seconds{60}) {
    const bytes ack_one = {0, 0, 0, 1};
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (std::chrono::steady_clock::now() < end) {
      if (!link_ && !connect()) {
        std::this_thread::sleep_for(std::chrono::milliseconds{200});
        continue;
      }
      link_->send(timed_packet(ts));
      const auto answer = link_->receive(4);
      if (answer == ack_one) return true;
      if (!answer) link_.reset();  // timeout or closed: reconnect and resend
    }
    return false;
  }

 private:
  bool connect() {
    auto d = std::make_unique<device>(port_);
    if (!d->connected()) return false;
    d->send(handshake_packet(imei_));
    if (d->receive(1) != bytes{0x01}) return false;
    link_ = std::move(d);
    return true;
  }

  std::uint16_t port_;
  std::string imei_;
  std::unique_ptr<device> link_;
};

/// Record times in `stream` as `conn` reads it, with how often each is stored.
inline std::map<std::string, int> stored_times(infra::redis::connection& conn,
                                               const std::string& stream = "telemetry:records") {
  std::map<std::string, int> times;
  const auto entries = conn.command({"XRANGE", stream, "-", "+"});
  for (const auto& e : entries.elements) {
    const auto& fields = e.elements.at(1).elements;
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2)
      if (fields[i].text == "ts") ++times[fields[i + 1].text];
  }
  return times;
}

}  // namespace tgw::test
