#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "actors/ports/telemetry_store.hpp"
#include "codecs/avl.hpp"

namespace tgw::domain {

/// Renders a decoded packet into a job: one field set per record, the IO elements as
/// the format 4 `io` array (docs/TELEMETRY.md), and a fingerprint of the
/// frame's bytes (FNV-1a 64) to recognise a resend.
[[nodiscard]] ports::packet_job render_packet(const std::string& imei,
                                              const codecs::avl_packet& packet,
                                              std::span<const std::uint8_t> frame);

/// FNV-1a 64 of `bytes` as 16 hex digits.
[[nodiscard]] std::string fingerprint(std::span<const std::uint8_t> bytes);

}  // namespace tgw::domain
