#pragma once

// What the session actor tests share: a device link that records what the session
// writes, the deterministic scheduler's configuration, and an AVL packet.
#include <gtest/gtest.h>
#include <caf/all.hpp>

#include <string>
#include <vector>

#include "actors/ports/device_link.hpp"
#include "codecs/avl_encode.hpp"

namespace tgw::actors::gateway::test {

using bytes = std::vector<std::uint8_t>;

class fake_link final : public ports::device_link {
 public:
  void send(bytes b) override { sent.push_back(std::move(b)); }
  void close(std::string reason) override { closed_with = std::move(reason); }
  void frame_done() override { ++frames_done; }
  bool admit_new_device() override {
    ++new_devices_asked;
    return new_devices_allowed;
  }
  [[nodiscard]] std::string peer() const override { return peer_; }

  std::vector<bytes> sent;
  std::string closed_with;
  int frames_done = 0;
  /// What its source address's new-device budget says, and how often it was asked.
  bool new_devices_allowed = true;
  int new_devices_asked = 0;

 private:
  std::string peer_ = "127.0.0.1:5000";
};

struct test_config : caf::actor_system_config {
  test_config() {
    set("scheduler.policy", caf::atom("testing"));
    set("logger.inline-output", true);
  }
};

/// A Codec 8 packet of `records` records.
inline bytes avl_packet(int records) {
  std::vector<codecs::avl_record_data> r(static_cast<std::size_t>(records));
  for (std::size_t i = 0; i < r.size(); ++i) r[i].timestamp_ms = 1'700'000'000'000 + i;
  bytes out;
  EXPECT_EQ(codecs::encode_avl_frame(codecs::codec_id::codec8, r, out), codecs::errc::ok);
  return out;
}

}  // namespace tgw::actors::gateway::test
