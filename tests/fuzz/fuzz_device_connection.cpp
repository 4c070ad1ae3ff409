// Fuzzes a whole device connection as the gateway runs it, without a socket or an
// actor: the bytes a peer sends, in any order and chunking, go through the framer and
// the inbound guard as tcp_connection does (the IMEI first, keepalives counted, reads
// stopped while the session holds its bound of frames), and the delivered frames
// through the session's decisions (the IMEI handshake, AVL decoding, the bad-frame
// budget and its spells, command replies). What a peer makes the connection hold is
// bounded whatever it sends, and that bound is checked after every step:
//   frames with the session <= max in flight - 1 + the frames one read can complete,
//   their bytes              <= max in flight * max frame size + one read,
//   the framer's buffer      <  max frame size + one read,
// and the conversation ends as the rules say: at the first byte before the IMEI that
// is not the IMEI, at a framing error, at a bad handshake, or at the last bad frame
// the budget allows.
//
// Header: byte 0 options, bytes 1..4 read sizes used in turn.
//   options bits 0-1: max frame size: 0 16 KiB, 1 1280, 2 256, 3 64 bytes
//   options bits 2-4: frames in flight at most, 1..8
//   options bits 5-6: bad frames allowed, 0 (no limit)..3
//   read byte:        bits 0-6 + 1 is the read size (as a socket read of up to that
//                     many bytes); bit 7: the session is slow, and finishes no frame
//                     before the next read

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "codecs/avl.hpp"
#include "codecs/avl_decode.hpp"
#include "codecs/command.hpp"
#include "codecs/device_conversation.hpp"
#include "codecs/errc.hpp"
#include "codecs/imei.hpp"
#include "codecs/tcp_framer.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace tgw::codecs;
using tgw::fuzz::require;

constexpr std::size_t header_size = 5;
// The smallest frame the framer delivers to a session: a frame header, the three data
// bytes the framer asks for at least, the CRC field. An IMEI handshake is 17 or more.
constexpr std::size_t smallest_delivered = tcp_frame_header + 3 + tcp_frame_trailer;

struct options {
  std::size_t max_frame_size = default_max_frame_size;
  std::uint32_t max_in_flight = 4;
  std::uint32_t max_bad = 3;
  std::array<std::uint8_t, 4> reads{};
};

options read_options(const std::uint8_t* header) {
  static constexpr std::array<std::size_t, 4> sizes = {default_max_frame_size, 1280, 256, 64};
  options o;
  o.max_frame_size = sizes[header[0] & 0x03U];
  o.max_in_flight = ((header[0] >> 2U) & 0x07U) + 1U;
  o.max_bad = (header[0] >> 5U) & 0x03U;
  std::copy(header + 1, header + header_size, o.reads.begin());
  return o;
}

// The session's side: frames in the order they came, and what it decided.
class session_model {
 public:
  explicit session_model(std::uint32_t max_bad) : bad_(max_bad) {}

  // Finishes the oldest delivered frame; false when the conversation ends with it.
  bool finish(std::vector<std::uint8_t> frame, frame_kind kind) {
    switch (kind) {
      case frame_kind::imei: {
        imei id;
        if (!parse_imei_packet(frame, id).ok()) return false;  // 00, then close
        identified_ = true;
        return true;
      }
      case frame_kind::avl: {
        require(identified_);
        avl_packet packet;
        const decode_status s = decode_avl_frame(frame, packet, crc_policy::strict);
        if (s.ok()) {
          if (const auto spell = bad_.end_spell()) check_spell(*spell);
          ++acks_;
          return true;
        }
        require(s.code != errc::need_more);
        ++rejected_;
        if (!bad_.rejected(s, frame.size())) return true;
        // Spent: the connection closes, and the spell goes to the journal with it.
        const auto spell = bad_.end_spell();
        require(spell.has_value());
        check_spell(*spell);
        return false;
      }
      case frame_kind::command: {
        require(identified_);
        command_message m;
        (void)decode_command_frame(frame, m, crc_policy::strict);
        return true;
      }
      case frame_kind::keepalive:
        break;
    }
    require(false);  // keepalives never reach a session
    return false;
  }

  void check_spell(const rejected_spell& s) {
    require(s.frames >= 1 && s.frames <= rejected_);
    require(s.first_error != errc::ok && s.first_error != errc::need_more);
    require(s.first_offset <= s.first_size);
    spelled_ += s.frames;
  }

  [[nodiscard]] std::uint32_t bad() const { return bad_.bad(); }
  [[nodiscard]] std::uint32_t rejected() const { return rejected_; }
  [[nodiscard]] std::uint32_t spelled() const { return spelled_; }

 private:
  bad_frame_budget bad_;
  bool identified_ = false;
  std::uint32_t rejected_ = 0;
  std::uint32_t spelled_ = 0;
  std::uint64_t acks_ = 0;
};

struct delivered {
  std::vector<std::uint8_t> bytes;
  frame_kind kind;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < header_size) return 0;
  const options o = read_options(data);
  const std::span<const std::uint8_t> stream(data + header_size, size - header_size);

  tcp_framer framer(o.max_frame_size, true);
  inbound_guard guard;
  session_model session(o.max_bad);
  std::deque<delivered> with_session;
  std::size_t bytes_with_session = 0;
  std::size_t fed = 0;
  std::size_t read = 0;
  std::uint64_t keepalives = 0;
  bool closed = false;

  // The session finishes what it holds, oldest first, as its mailbox does.
  auto session_turn = [&] {
    while (!with_session.empty() && !closed) {
      delivered d = std::move(with_session.front());
      with_session.pop_front();
      bytes_with_session -= d.bytes.size();
      closed = !session.finish(std::move(d.bytes), d.kind);
      guard.frame_done();
    }
  };

  std::size_t stall = 0;
  while (!closed && fed < stream.size()) {
    const std::uint8_t spec = o.reads[read++ % o.reads.size()];
    const bool slow_session = (spec & 0x80U) != 0;
    if (!guard.may_read(o.max_in_flight)) {
      // The connection reads nothing until the session finishes a frame.
      require(!with_session.empty());
      if (slow_session && ++stall < 4) continue;
      stall = 0;
      session_turn();
      continue;
    }
    const std::size_t n = std::min<std::size_t>((spec & 0x7FU) + 1U, stream.size() - fed);
    framer.append(stream.subspan(fed, n));
    fed += n;
    // What tcp_connection::take_received does with what a read brought.
    std::size_t completed = 0;
    for (;;) {
      const frame_result r = framer.next();
      if (r.status.code == errc::need_more) break;
      if (!r.status.ok()) {
        closed = true;  // a framing error ends the connection
        break;
      }
      const frame_verdict v = guard.on_frame(r.value.kind);
      if (v == frame_verdict::keepalive) {
        require(guard.identified());
        ++keepalives;
        continue;
      }
      if (v == frame_verdict::before_imei) {
        require(!guard.identified() && r.value.kind == frame_kind::keepalive);
        closed = true;
        break;
      }
      require(r.value.kind != frame_kind::keepalive);
      require(r.value.bytes.size() >= smallest_delivered);
      ++completed;
      bytes_with_session += r.value.bytes.size();
      with_session.push_back({{r.value.bytes.begin(), r.value.bytes.end()}, r.value.kind});
    }
    // The bounds, whatever the peer sent.
    require(framer.buffered() < o.max_frame_size + n);
    require(completed <= (o.max_frame_size + n) / smallest_delivered + 1);
    require(with_session.size() == guard.in_flight());
    require(with_session.size() <= o.max_in_flight - 1 + completed);
    require(bytes_with_session <= o.max_in_flight * o.max_frame_size + n);
    if (!slow_session) session_turn();
  }
  if (!closed) session_turn();

  // The budget: a connection that outlived the bad frames it was allowed never does.
  if (o.max_bad > 0) require(session.bad() <= o.max_bad);
  require(session.spelled() <= session.rejected());
  require(session.bad() == session.rejected());
  (void)keepalives;
  return 0;
}
