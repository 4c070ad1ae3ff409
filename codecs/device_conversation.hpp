#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "codecs/errc.hpp"
#include "codecs/tcp_framer.hpp"

namespace tgw::codecs {

/// What a connection does with a complete frame before anything leaves its thread.
enum class frame_verdict : std::uint8_t {
  deliver,      ///< Hand it to the session (the IMEI, an AVL packet, a command reply).
  keepalive,    ///< Count it where it arrived: a lone 0xFF posts nothing.
  before_imei,  ///< Refuse the connection: only the IMEI may come first.
};

/// Why a connection refused for frame_verdict::before_imei closes, in the journal's and
/// the log's words.
inline constexpr std::string_view before_imei_reason =
    "a keepalive byte before the IMEI (only the IMEI may come first)";

/// The rules of a device's inbound stream that hold before any byte is trusted, as
/// pure state: the IMEI comes first and nothing else before it; keepalives are counted,
/// not delivered; reading stops while the session holds its bound of frames (each
/// until frame_done()), so that a peer that sends faster than the instance persists
/// waits in its own socket buffer rather than in the instance's memory. Every
/// connection holds one, so the bound is the caller's to keep, not a copy in each.
class inbound_guard {
 public:
  /// The verdict on one complete frame, and the guard's new state.
  [[nodiscard]] frame_verdict on_frame(frame_kind kind) noexcept {
    if (kind == frame_kind::keepalive)
      return identified_ ? frame_verdict::keepalive : frame_verdict::before_imei;
    if (kind == frame_kind::imei) identified_ = true;
    ++in_flight_;
    return frame_verdict::deliver;
  }
  /// The session finished a delivered frame (ACKed, refused or read).
  void frame_done() noexcept {
    if (in_flight_ > 0) --in_flight_;
  }
  /// Whether the connection may read on: fewer than `max_in_flight` frames are with
  /// the session.
  [[nodiscard]] bool may_read(std::size_t max_in_flight) const noexcept {
    return in_flight_ < max_in_flight;
  }
  [[nodiscard]] bool identified() const noexcept { return identified_; }
  [[nodiscard]] std::uint32_t in_flight() const noexcept { return in_flight_; }

 private:
  // 16 bits: the bound is at most a thousand or so, and the frames of one read past it.
  std::uint16_t in_flight_ = 0;
  bool identified_ = false;
};

/// A run of consecutive AVL frames that failed to decode: told once, at its end.
struct rejected_spell {
  errc first_error = errc::ok;  ///< The first frame's fault, its offset and size.
  std::size_t first_offset = 0;
  std::size_t first_size = 0;
  std::uint32_t frames = 0;  ///< Frames in the spell.
};

/// A session's budget of frames that fail to decode: after `max_bad` of them the
/// conversation ends, since a device whose frames keep failing is broken or hostile,
/// and every bad frame costs a decode, a log line and a journal event otherwise.
/// Consecutive bad frames form a spell, journaled once when it ends.
class bad_frame_budget {
 public:
  explicit bad_frame_budget(std::uint32_t max_bad) noexcept : max_bad_(max_bad) {}

  /// A frame failed: true when the budget is spent and the connection must close.
  [[nodiscard]] bool rejected(decode_status fault, std::size_t frame_size) noexcept {
    if (spell_.frames == 0) spell_ = {fault.code, fault.offset, frame_size, 0};
    ++spell_.frames;
    ++bad_;
    return max_bad_ > 0 && bad_ >= max_bad_;
  }
  /// A frame decoded, or the conversation ends: the spell in progress, if any.
  [[nodiscard]] std::optional<rejected_spell> end_spell() noexcept {
    if (spell_.frames == 0) return std::nullopt;
    const rejected_spell done = spell_;
    spell_ = {};
    return done;
  }
  [[nodiscard]] std::uint32_t bad() const noexcept { return bad_; }

 private:
  std::uint32_t max_bad_;
  std::uint32_t bad_ = 0;
  rejected_spell spell_{};
};

}  // namespace tgw::codecs
