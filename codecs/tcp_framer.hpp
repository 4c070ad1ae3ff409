#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "codecs/errc.hpp"

namespace tgw::codecs {

/// What a complete TCP frame is.
enum class frame_kind : std::uint8_t {
  imei,       ///< The handshake: uint16 length and the IMEI digits.
  keepalive,  ///< The lone 0xFF byte an idle device sends; it gets no answer.
  avl,        ///< Codec 8, 8 Extended or 16.
  command,    ///< Codec 12, 13, 14 or 15.
};

/// A complete frame. `bytes` borrows the framer's buffer and stays valid until the
/// next call to prepare(), append() or shrink().
struct frame {
  frame_kind kind = frame_kind::keepalive;
  std::uint8_t codec = 0;  ///< The codec id for avl and command frames.
  std::span<const std::uint8_t> bytes;
};

struct frame_result {
  decode_status status;  ///< ok, need_more, or the fault (offset from stream start).
  frame value;
};

/// Frames above this size are refused. The largest real frames are Codec 12 camera
/// chunks of about 2 KiB and AVL packets up to 1280 bytes; the default leaves room.
inline constexpr std::size_t default_max_frame_size = std::size_t{16} * 1024;

/// Splits a device's TCP byte stream into frames, whatever its segmentation. It owns a
/// buffer that grows to the largest frame seen and is then reused, so steady-state
/// framing allocates nothing. Length fields are checked against the limit as soon as
/// they arrive, before any of the frame body is buffered. A fault is final: the
/// stream cannot be resynchronised, and next() keeps returning it.
class tcp_framer {
 public:
  explicit tcp_framer(std::size_t max_frame_size = default_max_frame_size, bool expect_imei = true);

  /// Writable space for at least `n` more bytes (to read from a socket into).
  [[nodiscard]] std::span<std::uint8_t> prepare(std::size_t n);
  /// Marks `n` bytes of the space from prepare() as received.
  void commit(std::size_t n) noexcept { end_ += n; }
  /// Copies `bytes` in: prepare, copy, commit.
  void append(std::span<const std::uint8_t> bytes);

  /// The next complete frame, need_more when the buffer holds only part of one.
  [[nodiscard]] frame_result next() noexcept;

  /// Bytes received but not yet returned as frames.
  [[nodiscard]] std::size_t buffered() const noexcept { return end_ - begin_; }
  /// True until the IMEI frame has been returned.
  [[nodiscard]] bool expecting_imei() const noexcept { return expect_imei_; }
  /// Stream offset of the first buffered byte.
  [[nodiscard]] std::uint64_t stream_offset() const noexcept { return consumed_; }
  /// Frees the buffer when nothing is buffered, for connections that go idle.
  void shrink() noexcept;

 private:
  frame_result fail(errc code, std::size_t local_offset) noexcept;
  frame_result take(frame_kind kind, std::uint8_t codec, std::size_t size) noexcept;

  std::vector<std::uint8_t> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::uint64_t consumed_ = 0;
  std::size_t max_frame_size_;
  bool expect_imei_;
  decode_status error_{};
};

}  // namespace tgw::codecs
