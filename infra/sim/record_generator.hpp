#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "codecs/avl_encode.hpp"
#include "codecs/codec_id.hpp"

namespace tgw::infra::sim {

/// Where one simulated vehicle is and what it is doing. A device keeps one of these
/// (about 80 bytes) and nothing else for its records.
struct motion_state {
  double latitude = 0.0;   ///< Degrees.
  double longitude = 0.0;  ///< Degrees.
  double heading = 0.0;    ///< Degrees clockwise from north.
  double speed = 0.0;      ///< km/h.
  double odometer_m = 0.0;
  double trip_m = 0.0;
  std::uint64_t last_timestamp_ms = 0;
  std::uint64_t rng = 0;
  std::uint32_t device_index = 0;
  std::uint16_t stop_records_left = 0;  ///< Records still to spend standing.
  bool moving = true;
};

/// The small random generator the simulator uses (splitmix64): one word of state.
[[nodiscard]] std::uint64_t next_random(std::uint64_t& state) noexcept;
/// A uniform double in [0, 1).
[[nodiscard]] double next_unit(std::uint64_t& state) noexcept;

/// Makes realistic AVL records: vehicles that drive around Vilnius with speed and
/// heading that drift, stop now and then, and carry FMB IO elements (ignition,
/// movement, voltages, odometer, GNSS and GSM figures) whose values follow the motion.
/// Timestamps increase strictly across a device's packets. The generator itself is
/// immutable and shared by every device of a fleet.
class record_generator {
 public:
  record_generator(codecs::codec_id codec, std::size_t records_per_packet,
                   std::size_t io_per_record);

  /// The starting state of device `index`; its first records lead up to `now_ms`.
  [[nodiscard]] motion_state start(std::size_t index, std::uint64_t seed,
                                   std::uint64_t now_ms) const noexcept;

  /// The next packet's records, advancing `state`; timestamps spread up to `now_ms`.
  /// The span points into a per-thread buffer that is reused (so no allocation once
  /// warm) and stays valid until the next call on the same thread.
  [[nodiscard]] std::span<const codecs::avl_record_data> next(motion_state& state,
                                                              std::uint64_t now_ms) const;

  [[nodiscard]] codecs::codec_id codec() const noexcept { return codec_; }
  [[nodiscard]] std::size_t records_per_packet() const noexcept { return records_; }
  [[nodiscard]] std::size_t io_per_record() const noexcept { return io_; }

 private:
  void advance(motion_state& state, double seconds) const noexcept;
  void fill(motion_state& state, bool changed, codecs::avl_record_data& record) const;

  codecs::codec_id codec_;
  std::size_t records_;
  std::size_t io_;
};

}  // namespace tgw::infra::sim
