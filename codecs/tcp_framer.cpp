#include "codecs/tcp_framer.hpp"

#include <algorithm>
#include <cstring>

#include "codecs/avl_decode.hpp"
#include "codecs/byte_order.hpp"
#include "codecs/codec_id.hpp"
#include "codecs/imei.hpp"

namespace tgw::codecs {
namespace {

constexpr std::uint8_t keepalive_byte = 0xFF;
// Codec id, one quantity and the closing quantity: the least any frame carries.
constexpr std::size_t min_data_length = 3;

}  // namespace

tcp_framer::tcp_framer(std::size_t max_frame_size, bool expect_imei)
    : max_frame_size_(max_frame_size), expect_imei_(expect_imei) {}

std::span<std::uint8_t> tcp_framer::prepare(std::size_t n) {
  if (buffer_.size() - end_ < n) {
    // Move the unread tail to the front before growing: frames are consumed
    // whole, so the tail is at most one partial frame.
    if (begin_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (buffer_.size() - end_ < n) buffer_.resize(end_ + n);
  }
  return {buffer_.data() + end_, buffer_.size() - end_};
}

void tcp_framer::append(std::span<const std::uint8_t> bytes) {
  auto space = prepare(bytes.size());
  if (!bytes.empty()) std::memcpy(space.data(), bytes.data(), bytes.size());
  commit(bytes.size());
}

void tcp_framer::shrink() noexcept {
  if (begin_ != end_) return;
  std::vector<std::uint8_t>().swap(buffer_);
  begin_ = end_ = 0;
}

frame_result tcp_framer::fail(errc code, std::size_t local_offset) noexcept {
  error_ = {code, consumed_ + local_offset};
  return {error_, {}};
}

frame_result tcp_framer::take(frame_kind kind, std::uint8_t codec, std::size_t size) noexcept {
  frame f{kind, codec, {buffer_.data() + begin_, size}};
  begin_ += size;
  consumed_ += size;
  if (begin_ == end_) begin_ = end_ = 0;
  return {{errc::ok, size}, f};
}

frame_result tcp_framer::next() noexcept {
  if (error_.code != errc::ok) return {error_, {}};
  const std::uint8_t* p = buffer_.data() + begin_;
  const std::size_t available = end_ - begin_;
  const frame_result more{{errc::need_more, consumed_ + available}, {}};
  if (available == 0) return more;
  if (p[0] == keepalive_byte) return take(frame_kind::keepalive, 0, 1);

  if (expect_imei_) {
    if (available < imei_packet_header) return more;
    const std::size_t length = load_be16(p);
    if (length < imei_min_digits || length > imei_max_digits) return fail(errc::bad_imei_length, 0);
    if (available < imei_packet_header + length) return more;
    expect_imei_ = false;
    return take(frame_kind::imei, 0, imei_packet_header + length);
  }

  // Check every header byte as soon as it is here, so garbage is refused on its
  // first bytes rather than after a length's worth of buffering.
  const std::size_t preamble = std::min<std::size_t>(available, 4);
  for (std::size_t i = 0; i < preamble; ++i)
    if (p[i] != 0) return fail(errc::bad_preamble, i);
  if (available < tcp_frame_header) return more;
  const std::size_t length = load_be32(p + 4);
  if (length + tcp_frame_header + tcp_frame_trailer > max_frame_size_)
    return fail(errc::length_too_large, 4);
  if (length < min_data_length) return fail(errc::length_too_small, 4);
  if (available <= tcp_frame_header) return more;
  const std::uint8_t codec = p[tcp_frame_header];
  frame_kind kind;
  if (is_avl_codec(codec))
    kind = frame_kind::avl;
  else if (is_command_codec(codec))
    kind = frame_kind::command;
  else
    return fail(errc::unknown_codec, tcp_frame_header);
  const std::size_t size = tcp_frame_header + length + tcp_frame_trailer;
  if (available < size) return more;
  return take(kind, codec, size);
}

}  // namespace tgw::codecs
