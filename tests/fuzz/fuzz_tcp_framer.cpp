// Fuzzes tcp_framer. The input is a 5-byte header and a device byte stream. The
// stream is framed twice per IMEI mode, fed whole and fed in chunks the header
// chooses; both runs must yield the same frames and end in the same status. Every
// frame must be the bytes fed at its stream offset, and goes through its decoder.
//
// Header: byte 0 holds options, bytes 1..4 are chunk sizes used in turn.
//   options bits 0-1: max frame size: 0 or 1 default, 2 1280 bytes, 3 small
//                     (12 + 4 * bits 4-7, so 12..72 bytes)
//   options bit 2:    feed through prepare()/commit() and ask for spare room
//   options bit 3:    shrink() whenever nothing is buffered
//   chunk byte:       bits 0-6 + 1 is the chunk size; bit 7 defers next() until a
//                     later chunk, so several frames pile up in the buffer

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "codecs/avl.hpp"
#include "codecs/avl_decode.hpp"
#include "codecs/byte_order.hpp"
#include "codecs/codec_id.hpp"
#include "codecs/command.hpp"
#include "codecs/errc.hpp"
#include "codecs/imei.hpp"
#include "codecs/tcp_framer.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace tgw::codecs;
using tgw::fuzz::require;

constexpr std::size_t header_size = 5;
constexpr std::uint8_t keepalive_byte = 0xFF;

struct options {
  std::size_t max_frame_size = default_max_frame_size;
  bool use_prepare = false;
  bool shrink_when_idle = false;
  std::array<std::uint8_t, 4> chunks{};
};

options read_options(const std::uint8_t* header) {
  options o;
  switch (header[0] & 0x03U) {
    case 2:
      o.max_frame_size = 1280;
      break;
    case 3:
      o.max_frame_size = 12 + 4 * static_cast<std::size_t>(header[0] >> 4U);
      break;
    default:
      break;
  }
  o.use_prepare = (header[0] & 0x04U) != 0;
  o.shrink_when_idle = (header[0] & 0x08U) != 0;
  std::memcpy(o.chunks.data(), header + 1, o.chunks.size());
  return o;
}

struct seen_frame {
  frame_kind kind = frame_kind::keepalive;
  std::uint8_t codec = 0;
  std::uint64_t offset = 0;  // Stream offset of the frame's first byte.
  std::vector<std::uint8_t> bytes;

  friend bool operator==(const seen_frame&, const seen_frame&) = default;
};

struct run_result {
  std::vector<seen_frame> frames;
  decode_status status{errc::need_more, 0};
};

void check_decoders_agree(decode_status strict, decode_status lenient, bool crc_ok,
                          std::size_t size) {
  for (const decode_status s : {strict, lenient}) {
    require(s.code != errc::need_more && s.offset <= size);
    if (s.ok()) require(s.offset == size);
  }
  if (crc_ok)
    require(tgw::fuzz::same_status(strict, lenient));
  else
    require(strict.code == errc::bad_crc && strict.offset == size - tcp_frame_trailer);
}

void decode_imei(std::span<const std::uint8_t> bytes) {
  // The framer checks the length only; the digits are the decoder's business.
  require(bytes.size() >= imei_packet_header + imei_min_digits &&
          bytes.size() <= imei_packet_header + imei_max_digits);
  require(load_be16(bytes.data()) == bytes.size() - imei_packet_header);
  imei id;
  const decode_status s = parse_imei_packet(bytes, id);
  if (s.ok())
    require(s.offset == bytes.size() && id.str().size() == bytes.size() - imei_packet_header);
  else
    require(s.code == errc::bad_imei_digit && s.offset >= imei_packet_header &&
            s.offset < bytes.size());
}

void decode_avl(std::span<const std::uint8_t> bytes) {
  avl_packet strict;
  avl_packet lenient;
  const decode_status s = decode_avl_frame(bytes, strict, crc_policy::strict);
  const decode_status l = decode_avl_frame(bytes, lenient, crc_policy::ignore);
  // The framer has already matched the length to the frame: never truncated at the end.
  require(lenient.has_crc);
  check_decoders_agree(s, l, lenient.crc_ok(), bytes.size());
  if (!l.ok()) return;
  tgw::fuzz::check_packet(lenient, bytes, tcp_frame_header);
}

void decode_command(std::span<const std::uint8_t> bytes) {
  command_message strict;
  command_message lenient;
  const decode_status s = decode_command_frame(bytes, strict, crc_policy::strict);
  const decode_status l = decode_command_frame(bytes, lenient, crc_policy::ignore);
  check_decoders_agree(s, l, lenient.crc_ok(), bytes.size());
  if (!l.ok()) return;
  require(lenient.codec == bytes[tcp_frame_header]);
  require(tgw::fuzz::inside(lenient.payload, bytes));
}

// Checks one frame against the stream it came from and runs its decoder.
void check_frame(const frame_result& r, std::uint64_t offset, std::span<const std::uint8_t> stream,
                 std::size_t fed, const options& o) {
  const std::span<const std::uint8_t> bytes = r.value.bytes;
  require(!bytes.empty() && r.status.offset == bytes.size());
  require(offset <= fed && bytes.size() <= fed - offset);
  require(std::ranges::equal(bytes, stream.subspan(offset, bytes.size())));
  switch (r.value.kind) {
    case frame_kind::keepalive:
      require(bytes.size() == 1 && bytes[0] == keepalive_byte && r.value.codec == 0);
      break;
    case frame_kind::imei:
      require(r.value.codec == 0);
      decode_imei(bytes);
      break;
    case frame_kind::avl:
    case frame_kind::command: {
      require(bytes.size() <= o.max_frame_size);
      require(bytes.size() > tcp_frame_header + tcp_frame_trailer);
      require(load_be32(bytes.data()) == 0);
      require(load_be32(bytes.data() + 4) == bytes.size() - tcp_frame_header - tcp_frame_trailer);
      require(r.value.codec == bytes[tcp_frame_header]);
      if (r.value.kind == frame_kind::avl) {
        require(is_avl_codec(r.value.codec));
        decode_avl(bytes);
      } else {
        require(is_command_codec(r.value.codec));
        decode_command(bytes);
      }
      break;
    }
  }
}

class framing_run {
 public:
  framing_run(std::span<const std::uint8_t> stream, const options& o, bool expect_imei)
      : stream_(stream), options_(o), framer_(o.max_frame_size, expect_imei) {}

  // Feeds the stream in the header's chunks, or whole when `chunked` is false.
  run_result run(bool chunked) {
    std::size_t chunk = 0;
    bool failed = false;
    while (fed_ < stream_.size() && !failed) {
      const std::uint8_t spec = chunked ? options_.chunks[chunk++ % options_.chunks.size()] : 0;
      const std::size_t n = chunked
                                ? std::min<std::size_t>((spec & 0x7FU) + 1U, stream_.size() - fed_)
                                : stream_.size() - fed_;
      feed(stream_.subspan(fed_, n), spec);
      const bool defer = (spec & 0x80U) != 0 && fed_ < stream_.size();
      if (!defer) failed = !drain();
    }
    if (!failed) drain();
    // A fault is final: asking again changes nothing.
    const frame_result again = framer_.next();
    require(tgw::fuzz::same_status(again.status, result_.status));
    return std::move(result_);
  }

 private:
  void feed(std::span<const std::uint8_t> bytes, std::uint8_t spec) {
    if (!options_.use_prepare) {
      framer_.append(bytes);
    } else {
      // Ask for more room than the chunk needs, as a socket read would.
      const std::span<std::uint8_t> space = framer_.prepare(bytes.size() + (spec & 0x0FU));
      require(space.size() >= bytes.size() + (spec & 0x0FU));
      if (!bytes.empty()) std::memcpy(space.data(), bytes.data(), bytes.size());
      framer_.commit(bytes.size());
    }
    fed_ += bytes.size();
    require(framer_.buffered() == fed_ - framer_.stream_offset());
  }

  // Takes every complete frame; false once the framer has reported a fault.
  bool drain() {
    for (;;) {
      const std::uint64_t offset = framer_.stream_offset();
      const bool expecting_imei = framer_.expecting_imei();
      const frame_result r = framer_.next();
      if (!r.status.ok()) {
        result_.status = r.status;
        require(framer_.stream_offset() == offset && framer_.expecting_imei() == expecting_imei);
        if (r.status.code == errc::need_more) {
          require(r.status.offset == fed_);
          if (options_.shrink_when_idle && framer_.buffered() == 0) framer_.shrink();
          return true;
        }
        require(r.status.offset >= offset && r.status.offset < fed_);
        return false;
      }
      check_frame(r, offset, stream_, fed_, options_);
      require(framer_.stream_offset() == offset + r.value.bytes.size());
      require(expecting_imei == (r.value.kind == frame_kind::imei) ||
              r.value.kind == frame_kind::keepalive);
      require(!framer_.expecting_imei() || r.value.kind == frame_kind::keepalive);
      result_.frames.push_back(
          {r.value.kind, r.value.codec, offset,
           std::vector<std::uint8_t>(r.value.bytes.begin(), r.value.bytes.end())});
    }
  }

  std::span<const std::uint8_t> stream_;
  options options_;
  tcp_framer framer_;
  std::size_t fed_ = 0;
  run_result result_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < header_size) return 0;
  const options o = read_options(data);
  const std::span<const std::uint8_t> stream(data + header_size, size - header_size);
  for (const bool expect_imei : {true, false}) {
    const run_result whole = framing_run(stream, o, expect_imei).run(false);
    const run_result chunked = framing_run(stream, o, expect_imei).run(true);
    require(whole.frames == chunked.frames);
    require(tgw::fuzz::same_status(whole.status, chunked.status));
  }
  return 0;
}
