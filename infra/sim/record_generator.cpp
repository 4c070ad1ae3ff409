#include "infra/sim/record_generator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <vector>

#include "infra/sim/fleet_options.hpp"

namespace tgw::infra::sim {
namespace {

// Vilnius, where Teltonika is; devices start within about 15 km of it.
constexpr double home_latitude = 54.6872;
constexpr double home_longitude = 25.2797;
constexpr double metres_per_degree = 111'320.0;

// FMB IO elements in the order they are added as --io-per-record grows: the common
// ones first. Ids and widths follow the FMB1YX parameter list.
enum class io_kind : std::uint8_t {
  ignition,
  movement,
  external_voltage,
  gsm_signal,
  total_odometer,
  speed,
  pdop,
  hdop,
  gnss_status,
  zero,
  battery_voltage,
  battery_current,
  gsm_operator,
  trip_odometer,
  analog_input,
  battery_level,
  axis_x,
  axis_y,
  axis_z,
  iccid,
  fuel_used,
  fuel_rate,
  cell_id,
};

struct io_spec {
  std::uint16_t id;
  std::uint8_t width;
  io_kind kind;
};

constexpr std::array<io_spec, max_io_per_record> io_table{{
    {239, 1, io_kind::ignition},         // Ignition
    {240, 1, io_kind::movement},         // Movement
    {66, 2, io_kind::external_voltage},  // External Voltage, mV
    {21, 1, io_kind::gsm_signal},        // GSM Signal, 0..5
    {16, 4, io_kind::total_odometer},    // Total Odometer, m
    {24, 2, io_kind::speed},             // Speed, km/h
    {181, 2, io_kind::pdop},             // GNSS PDOP, x10
    {182, 2, io_kind::hdop},             // GNSS HDOP, x10
    {69, 1, io_kind::gnss_status},       // GNSS Status, 1 = on with fix
    {80, 1, io_kind::zero},              // Data Mode, 0 = home on stop
    {200, 1, io_kind::zero},             // Sleep Mode
    {67, 2, io_kind::battery_voltage},   // Battery Voltage, mV
    {68, 2, io_kind::battery_current},   // Battery Current, mA
    {241, 4, io_kind::gsm_operator},     // Active GSM Operator
    {199, 4, io_kind::trip_odometer},    // Trip Odometer, m
    {1, 1, io_kind::ignition},           // Digital Input 1, wired to ignition
    {9, 2, io_kind::analog_input},       // Analog Input 1, mV
    {113, 1, io_kind::battery_level},    // Battery Level, %
    {17, 2, io_kind::axis_x},            // Axis X, mG
    {18, 2, io_kind::axis_y},            // Axis Y, mG
    {19, 2, io_kind::axis_z},            // Axis Z, mG
    {11, 8, io_kind::iccid},             // ICCID1
    {12, 4, io_kind::fuel_used},         // Fuel Used GPS, ml
    {13, 2, io_kind::fuel_rate},         // Fuel Rate GPS, 0.01 l/100km
    {205, 2, io_kind::cell_id},          // GSM Cell ID
    {2, 1, io_kind::zero},               // Digital Input 2
    {3, 1, io_kind::zero},               // Digital Input 3
    {179, 1, io_kind::zero},             // Digital Output 1
    {180, 1, io_kind::zero},             // Digital Output 2
    {10, 2, io_kind::analog_input},      // Analog Input 2, mV
    {14, 8, io_kind::zero},              // ICCID2
    {78, 8, io_kind::zero},              // iButton
}};

double to_radians(double degrees) noexcept {
  return degrees * std::numbers::pi / 180.0;
}

std::uint64_t jitter(std::uint64_t& rng, std::uint64_t base, std::uint64_t spread) noexcept {
  return base + next_random(rng) % (spread + 1);
}

std::uint64_t as_u16(double v) noexcept {
  return static_cast<std::uint16_t>(static_cast<std::int16_t>(std::lround(v)));
}

}  // namespace

std::uint64_t next_random(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double next_unit(std::uint64_t& state) noexcept {
  return static_cast<double>(next_random(state) >> 11) * 0x1.0p-53;
}

record_generator::record_generator(codecs::codec_id codec, std::size_t records_per_packet,
                                   std::size_t io_per_record)
    : codec_(codec),
      records_(std::clamp<std::size_t>(records_per_packet, 1, 255)),
      io_(std::min(io_per_record, max_io_per_record)) {}

motion_state record_generator::start(std::size_t index, std::uint64_t seed,
                                     std::uint64_t now_ms) const noexcept {
  motion_state s;
  s.rng = seed * 0x9E3779B97F4A7C15ULL + index;
  (void)next_random(s.rng);
  s.device_index = static_cast<std::uint32_t>(index);
  const double radius = 0.14 * std::sqrt(next_unit(s.rng));
  const double bearing = 2 * std::numbers::pi * next_unit(s.rng);
  s.latitude = home_latitude + radius * std::cos(bearing);
  s.longitude = home_longitude + radius * std::sin(bearing) / std::cos(to_radians(home_latitude));
  s.heading = 360.0 * next_unit(s.rng);
  s.speed = 20.0 + 60.0 * next_unit(s.rng);
  s.odometer_m = 1'000'000.0 * next_unit(s.rng);
  // As if the first packet's records had been taken one second apart.
  s.last_timestamp_ms = now_ms - std::min<std::uint64_t>(now_ms, records_ * 1000);
  return s;
}

void record_generator::advance(motion_state& s, double seconds) const noexcept {
  if (s.stop_records_left > 0) {
    if (--s.stop_records_left == 0) {  // Drive off on a new trip.
      s.moving = true;
      s.speed = 10.0;
      s.trip_m = 0.0;
    }
  } else if (next_unit(s.rng) < 0.01) {
    s.stop_records_left = static_cast<std::uint16_t>(5 + next_random(s.rng) % 60);
    s.speed = 0.0;
    s.moving = false;
  } else {
    s.speed = std::clamp(s.speed + (next_unit(s.rng) - 0.5) * 12.0, 5.0, 110.0);
    s.heading = std::fmod(s.heading + (next_unit(s.rng) - 0.5) * 40.0 + 360.0, 360.0);
  }
  const double metres = s.speed / 3.6 * seconds;
  const double h = to_radians(s.heading);
  s.latitude = std::clamp(s.latitude + metres * std::cos(h) / metres_per_degree, -85.0, 85.0);
  s.longitude += metres * std::sin(h) / (metres_per_degree * std::cos(to_radians(s.latitude)));
  if (s.longitude > 180.0) s.longitude -= 360.0;
  if (s.longitude < -180.0) s.longitude += 360.0;
  s.odometer_m += metres;
  s.trip_m += metres;
}

void record_generator::fill(motion_state& s, bool changed, codecs::avl_record_data& r) const {
  std::uint64_t& rng = s.rng;
  r.latitude = static_cast<std::int32_t>(std::lround(s.latitude * 1e7));
  r.longitude = static_cast<std::int32_t>(std::lround(s.longitude * 1e7));
  r.altitude = static_cast<std::int16_t>(jitter(rng, 110, 40));
  r.angle = static_cast<std::uint16_t>(std::lround(s.heading) % 360);
  r.satellites = static_cast<std::uint8_t>(jitter(rng, 7, 8));
  r.speed = static_cast<std::uint16_t>(std::lround(s.speed));
  // A change of movement is an event record with high priority, as devices send it.
  r.priority = changed ? 1 : 0;
  r.event_io_id = changed ? 240 : 0;
  r.generation_type = changed ? 5 : 7;  // Codec 16: on change / periodical.
  const bool ignition = s.moving || s.stop_records_left < 20;
  r.io.resize(io_);
  for (std::size_t i = 0; i < io_; ++i) {
    const io_spec& spec = io_table[i];
    std::uint64_t v = 0;
    switch (spec.kind) {
      case io_kind::ignition:
        v = ignition ? 1 : 0;
        break;
      case io_kind::movement:
        v = s.moving ? 1 : 0;
        break;
      case io_kind::external_voltage:
        v = ignition ? jitter(rng, 13600, 600) : jitter(rng, 12300, 300);
        break;
      case io_kind::gsm_signal:
        v = jitter(rng, 3, 2);
        break;
      case io_kind::total_odometer:
        v = static_cast<std::uint32_t>(s.odometer_m);
        break;
      case io_kind::speed:
        v = r.speed;
        break;
      case io_kind::pdop:
        v = jitter(rng, 8, 12);
        break;
      case io_kind::hdop:
        v = jitter(rng, 5, 10);
        break;
      case io_kind::gnss_status:
        v = 1;
        break;
      case io_kind::zero:
        v = 0;
        break;
      case io_kind::battery_voltage:
        v = jitter(rng, 4000, 150);
        break;
      case io_kind::battery_current:
        v = jitter(rng, 0, 120);
        break;
      case io_kind::gsm_operator:
        v = 24602;  // LT, Tele2.
        break;
      case io_kind::trip_odometer:
        v = static_cast<std::uint32_t>(s.trip_m);
        break;
      case io_kind::analog_input:
        v = jitter(rng, 0, 10000);
        break;
      case io_kind::battery_level:
        v = jitter(rng, 90, 10);
        break;
      case io_kind::axis_x:
      case io_kind::axis_y:
        v = as_u16(static_cast<double>(jitter(rng, 0, 200)) - 100.0);
        break;
      case io_kind::axis_z:
        v = as_u16(-1000.0 + static_cast<double>(jitter(rng, 0, 60)));
        break;
      case io_kind::iccid:
        v = 8937002000000000000ULL + s.device_index;
        break;
      case io_kind::fuel_used:
        v = static_cast<std::uint32_t>(s.odometer_m * 0.08);  // 8 l/100 km, in ml.
        break;
      case io_kind::fuel_rate:
        v = s.moving ? jitter(rng, 600, 400) : 0;
        break;
      case io_kind::cell_id:
        v = 10000 + s.device_index % 5000;
        break;
    }
    codecs::io_value& out = r.io[i];
    out.id = spec.id;
    out.width = spec.width;
    out.value = v;
    out.bytes.clear();
  }
}

std::span<const codecs::avl_record_data> record_generator::next(motion_state& s,
                                                                std::uint64_t now_ms) const {
  // One buffer per io thread: devices on a thread take turns, and each encodes its
  // packet before the next device runs, so the records never need to outlive a call.
  thread_local std::vector<codecs::avl_record_data> scratch;
  scratch.resize(records_);
  const std::uint64_t first = s.last_timestamp_ms;
  const std::uint64_t span = now_ms > first ? now_ms - first : 0;
  std::uint64_t previous = first;
  for (std::size_t i = 1; i <= records_; ++i) {
    // Spread the records evenly up to now, at least 1 ms apart so they always increase.
    const std::uint64_t ts = std::max(previous + 1, first + span * i / records_);
    const bool was_moving = s.moving;
    advance(s, static_cast<double>(ts - previous) / 1000.0);
    codecs::avl_record_data& r = scratch[i - 1];
    r.timestamp_ms = ts;
    fill(s, was_moving != s.moving, r);
    previous = ts;
  }
  s.last_timestamp_ms = previous;
  return scratch;
}

}  // namespace tgw::infra::sim
