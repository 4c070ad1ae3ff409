#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tgw::bench {

/// Where one frame sits in a corpus set and what it carries.
struct corpus_frame {
  std::size_t offset = 0;  ///< Into corpus_set::bytes.
  std::size_t size = 0;
  std::uint32_t records = 0;
  std::uint32_t io_elements = 0;  ///< Over all records, NX elements included.
  std::uint64_t first_timestamp_ms = 0;
  std::int32_t first_latitude = 0;  ///< Degrees times 10^7.
};

/// TCP AVL frames of one kind, stored back to back as a device's stream would carry
/// them, so that a set is also a ready-made input for the framer.
struct corpus_set {
  std::string name;  ///< "8", "8E", "16" or "stress".
  std::vector<std::uint8_t> bytes;
  std::vector<corpus_frame> frames;
  std::uint64_t records = 0;

  [[nodiscard]] std::span<const std::uint8_t> frame_bytes(const corpus_frame& f) const noexcept {
    return std::span<const std::uint8_t>(bytes).subspan(f.offset, f.size);
  }
};

/// What to generate. The same config always yields the same bytes.
struct corpus_config {
  std::uint64_t seed = 0x7467'7720'6265'6e63;  // "tgw benc"
  std::size_t frames_per_codec = 1000;
  /// The documented maximum AVL packet size; the stress set ignores it.
  std::size_t max_frame_size = 1280;
};

/// Builds the sets "8E", "8", "16" and "stress" with the codec encoder.
///
/// The first three hold packets as FMB devices send them: 1 to 8 records of 10 to 30
/// IO elements with real FMB IO ids and widths, positions of vehicles driving in
/// Europe, increasing timestamps, each frame within max_frame_size (records are
/// dropped from a frame until it fits, as a device fills its packet). Codec 8E records
/// sometimes carry NX elements (beacon lists, VIN), Codec 8 uses ids up to 255 only
/// and Codec 16 records carry a generation type. "stress" holds a few large frames:
/// 255 records per frame, a record with a thousand IO elements, kilobyte NX values.
///
/// Every frame is decoded back and compared with what was encoded; a mismatch throws
/// std::runtime_error, so a benchmark never runs on a corpus the decoder disagrees with.
[[nodiscard]] std::vector<corpus_set> make_codec_corpus(const corpus_config& config = {});

}  // namespace tgw::bench
