#include "tests/bench/codec_corpus.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string_view>

#include "codecs/avl_decode.hpp"
#include "codecs/avl_encode.hpp"

namespace tgw::bench {
namespace {

using codecs::avl_record_data;
using codecs::codec_id;
using codecs::io_value;

// splitmix64. std::uniform_int_distribution is not specified bit for bit, so the
// corpus would differ between standard libraries; this generator is.
class random_source {
 public:
  explicit random_source(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9E37'79B9'7F4A'7C15);
    z = (z ^ (z >> 30)) * 0xBF58'476D'1CE4'E5B9;
    z = (z ^ (z >> 27)) * 0x94D0'49BB'1331'11EB;
    return z ^ (z >> 31);
  }

  /// A value in [lo, hi]; the modulo bias is irrelevant for test data.
  std::int64_t between(std::int64_t lo, std::int64_t hi) noexcept {
    const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    return lo + static_cast<std::int64_t>(next() % span);
  }

  std::size_t index(std::size_t n) noexcept { return static_cast<std::size_t>(next() % n); }

  bool percent(std::uint64_t p) noexcept { return next() % 100 < p; }

 private:
  std::uint64_t state_;
};

// What an IO value is taken from: a random draw in [lo, hi], or the device's state.
enum class io_source : std::uint8_t { range, speed, odometer, operator_code, iccid1, iccid2 };

/// An FMB IO element: id, width on the wire and the values it takes.
struct io_kind {
  std::uint16_t id;
  std::uint8_t width;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  io_source source = io_source::range;
};

// The IO a default FMB configuration sends in every record, in the order they are
// used when a record has fewer elements than this list.
constexpr std::array permanent_io{
    io_kind{239, 1, 0, 1},                            // ignition
    io_kind{240, 1, 0, 1},                            // movement
    io_kind{21, 1, 1, 5},                             // GSM signal
    io_kind{66, 2, 11800, 14400},                     // external voltage, mV
    io_kind{67, 2, 3700, 4150},                       // battery voltage, mV
    io_kind{24, 2, 0, 0, io_source::speed},           // speed, km/h
    io_kind{16, 4, 0, 0, io_source::odometer},        // total odometer, m
    io_kind{80, 1, 0, 5},                             // data mode
    io_kind{200, 1, 0, 2},                            // sleep mode
    io_kind{69, 1, 0, 3},                             // GNSS status
    io_kind{181, 2, 5, 40},                           // PDOP x10
    io_kind{182, 2, 5, 30},                           // HDOP x10
    io_kind{68, 2, 0, 900},                           // battery current, mA
    io_kind{241, 4, 0, 0, io_source::operator_code},  // GSM operator (MCC MNC)
};

// Further IO a device may be configured to send; records draw from it at random.
constexpr std::array optional_io{
    io_kind{1, 1, 0, 1},                      // digital input 1
    io_kind{2, 1, 0, 1},                      // digital input 2
    io_kind{179, 1, 0, 1},                    // digital output 1
    io_kind{113, 1, 0, 100},                  // battery level, %
    io_kind{250, 1, 0, 1},                    // trip
    io_kind{251, 1, 0, 1},                    // idling
    io_kind{246, 1, 0, 1},                    // towing
    io_kind{249, 1, 0, 1},                    // jamming
    io_kind{48, 1, 0, 100},                   // OBD fuel level, %
    io_kind{32, 1, 60, 105},                  // OBD coolant temperature, C
    io_kind{263, 1, 0, 2},                    // Bluetooth status
    io_kind{303, 1, 0, 1},                    // instant movement
    io_kind{9, 2, 0, 30000},                  // analog input 1, mV
    io_kind{17, 2, -1000, 1000},              // axis X, mG
    io_kind{18, 2, -1000, 1000},              // axis Y, mG
    io_kind{19, 2, -1000, 1000},              // axis Z, mG
    io_kind{205, 2, 1, 65535},                // GSM cell id
    io_kind{206, 2, 1, 65535},                // GSM area code
    io_kind{36, 2, 700, 3500},                // OBD engine RPM
    io_kind{15, 2, 0, 1000},                  // eco score
    io_kind{199, 4, 0, 200000},               // trip odometer, m
    io_kind{12, 4, 0, 1000000},               // fuel used GPS, ml
    io_kind{72, 4, -300, 450},                // Dallas temperature 1, C x10
    io_kind{449, 4, 0, 5000000},              // ignition on counter, s
    io_kind{636, 4, 0, 268435455},            // UMTS/LTE cell id
    io_kind{11, 8, 0, 0, io_source::iccid1},  // ICCID part 1
    io_kind{14, 8, 0, 0, io_source::iccid2},  // ICCID part 2
    io_kind{238, 8, 0, INT64_MAX},            // user id
    io_kind{78, 8, 0, INT64_MAX},             // iButton
    io_kind{76, 8, 0, INT64_MAX},             // Dallas temperature sensor id
};

constexpr std::array<std::uint32_t, 9> operator_codes{24601, 24602, 26201, 26202, 20801,
                                                      23415, 21401, 22201, 26001};

// Codec 16 generation types other than 7 (periodical) and 3 (reserved).
constexpr std::array<std::uint8_t, 6> event_generation_types{0, 1, 2, 4, 5, 6};

// Europe, roughly: Lisbon to Helsinki.
constexpr double min_latitude = 36.0;
constexpr double max_latitude = 62.0;
constexpr double min_longitude = -9.0;
constexpr double max_longitude = 30.0;
constexpr double metres_per_degree = 111'320.0;
constexpr double pi = 3.14159265358979323846;

/// A simulated tracker: where it is and what it has counted so far.
struct device {
  std::uint64_t time_ms = 0;
  double latitude = 0;
  double longitude = 0;
  double heading = 0;  // Degrees, 0 = north, clockwise.
  std::int64_t speed = 0;
  std::int64_t altitude = 0;
  std::uint64_t odometer_m = 0;
  std::uint32_t operator_code = 0;
  std::uint64_t iccid1 = 0;
  std::uint64_t iccid2 = 0;
  std::string vin;
};

device make_device(random_source& rnd, std::uint64_t start_ms) {
  device d;
  d.time_ms = start_ms + static_cast<std::uint64_t>(rnd.between(0, 86'400)) * 1000;
  d.latitude = min_latitude +
               static_cast<double>(rnd.between(0, 1'000'000)) / 1e6 * (max_latitude - min_latitude);
  d.longitude = min_longitude + static_cast<double>(rnd.between(0, 1'000'000)) / 1e6 *
                                    (max_longitude - min_longitude);
  d.heading = static_cast<double>(rnd.between(0, 359));
  d.speed = rnd.between(0, 90);
  d.altitude = rnd.between(0, 900);
  d.odometer_m = static_cast<std::uint64_t>(rnd.between(1'000'000, 400'000'000));
  d.operator_code = operator_codes[rnd.index(operator_codes.size())];
  // ICCIDs start 89 (telecom) and a country code; the parts are the digits as numbers.
  d.iccid1 = 8'944'500'000'000'000'000ULL + static_cast<std::uint64_t>(rnd.between(0, 99'999'999));
  d.iccid2 = static_cast<std::uint64_t>(rnd.between(1'000'000'000, 9'999'999'999));
  constexpr std::string_view vin_chars = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789";
  d.vin = "WVWZZZ";
  while (d.vin.size() < 17) d.vin += vin_chars[rnd.index(vin_chars.size())];
  return d;
}

// Moves the device on to its next record: a stop sends rarely, a moving vehicle
// every few seconds, as FMB's default data acquisition does.
void advance(device& d, random_source& rnd) {
  d.speed = std::clamp<std::int64_t>(d.speed + rnd.between(-20, 20), 0, 130);
  if (rnd.percent(5)) d.speed = 0;
  const std::int64_t seconds = d.speed == 0 ? rnd.between(60, 900) : rnd.between(5, 30);
  d.time_ms += static_cast<std::uint64_t>(seconds) * 1000;
  d.heading = std::fmod(d.heading + static_cast<double>(rnd.between(-30, 30)) + 360.0, 360.0);
  const double metres = static_cast<double>(d.speed) / 3.6 * static_cast<double>(seconds);
  const double rad = d.heading * pi / 180.0;
  d.latitude += metres * std::cos(rad) / metres_per_degree;
  d.longitude += metres * std::sin(rad) / (metres_per_degree * std::cos(d.latitude * pi / 180.0));
  if (d.latitude < min_latitude || d.latitude > max_latitude || d.longitude < min_longitude ||
      d.longitude > max_longitude) {
    d.latitude = std::clamp(d.latitude, min_latitude, max_latitude);
    d.longitude = std::clamp(d.longitude, min_longitude, max_longitude);
    d.heading = std::fmod(d.heading + 180.0, 360.0);
  }
  d.altitude = std::clamp<std::int64_t>(d.altitude + rnd.between(-15, 15), -20, 2500);
  d.odometer_m += static_cast<std::uint64_t>(metres);
}

std::uint64_t value_of(const io_kind& k, const device& d, random_source& rnd) {
  std::int64_t v = 0;
  switch (k.source) {
    case io_source::range:
      v = rnd.between(k.lo, k.hi);
      break;
    case io_source::speed:
      v = d.speed;
      break;
    case io_source::odometer:
      v = static_cast<std::int64_t>(d.odometer_m);
      break;
    case io_source::operator_code:
      v = d.operator_code;
      break;
    case io_source::iccid1:
      v = static_cast<std::int64_t>(d.iccid1);
      break;
    case io_source::iccid2:
      v = static_cast<std::int64_t>(d.iccid2);
      break;
  }
  // Signed values go on the wire in two's complement of their width.
  const auto bits = static_cast<std::uint64_t>(v);
  return k.width == 8 ? bits : bits & ((std::uint64_t{1} << (8 * k.width)) - 1);
}

std::vector<std::uint8_t> random_bytes(random_source& rnd, std::size_t n) {
  std::vector<std::uint8_t> b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rnd.next());
  return b;
}

io_value nx_value(std::uint16_t id, std::vector<std::uint8_t> bytes) {
  io_value v;
  v.id = id;
  v.width = 0;
  v.bytes = std::move(bytes);
  return v;
}

// The encoder writes IO grouped by width (1, 2, 4, 8, NX); keeping that order here
// lets the round-trip check compare records with ==.
int group_of(const io_value& v) noexcept {
  return v.width == 0 ? 16 : v.width;
}

void sort_io(avl_record_data& r) {
  std::stable_sort(r.io.begin(), r.io.end(),
                   [](const io_value& a, const io_value& b) { return group_of(a) < group_of(b); });
}

// NX elements an 8E record may carry: a Bluetooth beacon list, the VIN, OBD fault codes.
void add_nx(avl_record_data& r, const device& d, random_source& rnd, std::size_t budget) {
  if (budget > 0 && rnd.percent(35)) {
    // Beacon data (385): a header byte, then the beacons seen (20 to 60 bytes in all).
    auto bytes = random_bytes(rnd, static_cast<std::size_t>(rnd.between(20, 60)));
    bytes[0] = 0x01;
    r.io.push_back(nx_value(385, std::move(bytes)));
    --budget;
  }
  if (budget > 0 && rnd.percent(10)) {
    r.io.push_back(nx_value(256, std::vector<std::uint8_t>(d.vin.begin(), d.vin.end())));
    --budget;
  }
  if (budget > 0 && rnd.percent(5)) {
    constexpr std::string_view codes = "P0301,P0420,P0171";
    const auto list = codes.substr(0, static_cast<std::size_t>(rnd.between(1, 3)) * 6 - 1);
    r.io.push_back(nx_value(281, std::vector<std::uint8_t>(list.begin(), list.end())));
  }
}

avl_record_data make_record(codec_id codec, device& d, random_source& rnd) {
  advance(d, rnd);
  avl_record_data r;
  r.timestamp_ms = d.time_ms;
  r.longitude = static_cast<std::int32_t>(std::lround(d.longitude * 1e7));
  r.latitude = static_cast<std::int32_t>(std::lround(d.latitude * 1e7));
  r.altitude = static_cast<std::int16_t>(d.altitude);
  if (rnd.percent(2)) {
    // No fix: the last position stays, angle, satellites and speed are zero.
  } else {
    r.angle = static_cast<std::uint16_t>(d.heading);
    r.satellites = static_cast<std::uint8_t>(rnd.between(d.speed == 0 ? 4 : 8, 20));
    r.speed = static_cast<std::uint16_t>(d.speed);
  }

  const auto total = static_cast<std::size_t>(rnd.between(10, 30));
  if (codec == codec_id::codec8e) add_nx(r, d, rnd, total - 10);
  const std::size_t fixed = total - r.io.size();
  for (std::size_t i = 0; i < fixed && i < permanent_io.size(); ++i)
    r.io.push_back(
        {permanent_io[i].id, permanent_io[i].width, value_of(permanent_io[i], d, rnd), {}});
  // Draw the rest without repeating an id: parsers that key IO by id reject repeats.
  std::array<bool, optional_io.size()> used{};
  while (r.io.size() < total) {
    const std::size_t i = rnd.index(optional_io.size());
    if (used[i] || (codec == codec_id::codec8 && optional_io[i].id > 255)) continue;
    used[i] = true;
    r.io.push_back({optional_io[i].id, optional_io[i].width, value_of(optional_io[i], d, rnd), {}});
  }

  if (rnd.percent(20)) {
    // An event record: ignition, movement or another IO changed and triggered it.
    r.event_io_id = r.io[rnd.index(r.io.size())].id;
    r.priority = rnd.percent(2) ? 2 : 1;
    if (codec == codec_id::codec16)
      r.generation_type = event_generation_types[rnd.index(event_generation_types.size())];
  } else if (codec == codec_id::codec16) {
    r.generation_type = 7;  // Periodical.
  }
  sort_io(r);
  return r;
}

std::uint32_t io_count(std::span<const avl_record_data> records) {
  std::size_t n = 0;
  for (const auto& r : records) n += r.io.size();
  return static_cast<std::uint32_t>(n);
}

// Encodes `records` as one frame at the end of `set`, after checking that the
// decoder reads back exactly what was encoded.
void append_frame(corpus_set& set, codec_id codec, std::span<const avl_record_data> records,
                  codecs::avl_packet& scratch) {
  corpus_frame f;
  f.offset = set.bytes.size();
  if (codecs::encode_avl_frame(codec, records, set.bytes) != codecs::errc::ok)
    throw std::runtime_error("corpus: the encoder refused a generated frame");
  f.size = set.bytes.size() - f.offset;
  f.records = static_cast<std::uint32_t>(records.size());
  f.io_elements = io_count(records);
  f.first_timestamp_ms = records.front().timestamp_ms;
  f.first_latitude = records.front().latitude;
  const auto status = codecs::decode_avl_frame(set.frame_bytes(f), scratch);
  if (!status.ok() ||
      codecs::to_record_data(scratch) != std::vector(records.begin(), records.end()))
    throw std::runtime_error("corpus: a generated frame does not decode to what was encoded");
  set.frames.push_back(f);
  set.records += f.records;
}

// Frames as devices send them: up to 8 records, trimmed until the frame fits.
corpus_set make_realistic_set(std::string name, codec_id codec, const corpus_config& config,
                              std::uint64_t seed, codecs::avl_packet& scratch) {
  random_source rnd(seed);
  constexpr std::uint64_t start_ms = 1'714'521'600'000;  // 2024-05-01T00:00:00Z
  std::vector<device> devices;
  for (int i = 0; i < 64; ++i) devices.push_back(make_device(rnd, start_ms));

  corpus_set set;
  set.name = std::move(name);
  std::vector<std::uint8_t> trial;
  for (std::size_t n = 0; n < config.frames_per_codec; ++n) {
    device& d = devices[rnd.index(devices.size())];
    std::vector<avl_record_data> records;
    const auto wanted = rnd.between(1, 8);
    for (std::int64_t i = 0; i < wanted; ++i) records.push_back(make_record(codec, d, rnd));
    for (;;) {
      trial.clear();
      if (codecs::encode_avl_frame(codec, records, trial) != codecs::errc::ok)
        throw std::runtime_error("corpus: the encoder refused a generated frame");
      if (trial.size() <= config.max_frame_size || records.size() == 1) break;
      records.pop_back();
    }
    if (trial.size() > config.max_frame_size)
      throw std::runtime_error("corpus: a single record exceeds the frame size limit");
    append_frame(set, codec, records, scratch);
  }
  return set;
}

corpus_set make_stress_set(std::uint64_t seed, codecs::avl_packet& scratch) {
  random_source rnd(seed);
  device d = make_device(rnd, 1'714'521'600'000);
  corpus_set set;
  set.name = "stress";

  // The most records a packet can announce, in each codec.
  for (const codec_id codec : {codec_id::codec8e, codec_id::codec8, codec_id::codec16}) {
    std::vector<avl_record_data> records;
    for (int i = 0; i < 255; ++i) records.push_back(make_record(codec, d, rnd));
    append_frame(set, codec, records, scratch);
  }

  // One record with a thousand IO elements of every width.
  {
    std::vector<avl_record_data> records{make_record(codec_id::codec8e, d, rnd)};
    records[0].io.clear();
    constexpr std::array<std::uint8_t, 4> widths{1, 2, 4, 8};
    for (std::uint16_t id = 1; id <= 1000; ++id) {
      const std::uint8_t w = widths[id % widths.size()];
      const io_kind k{id, w, 0, w == 8 ? INT64_MAX : (std::int64_t{1} << (8 * w)) - 1};
      records[0].io.push_back({id, w, value_of(k, d, rnd), {}});
    }
    records[0].event_io_id = 0;
    sort_io(records[0]);
    append_frame(set, codec_id::codec8e, records, scratch);
  }

  // Large NX values: 8 records with four 1 KiB elements each.
  {
    std::vector<avl_record_data> records;
    for (int i = 0; i < 8; ++i) {
      avl_record_data r = make_record(codec_id::codec8e, d, rnd);
      std::erase_if(r.io, [](const io_value& v) { return v.width == 0; });
      for (std::uint16_t id = 10'000; id < 10'004; ++id)
        r.io.push_back(nx_value(id, random_bytes(rnd, 1024)));
      records.push_back(std::move(r));
    }
    append_frame(set, codec_id::codec8e, records, scratch);
  }
  return set;
}

}  // namespace

std::vector<corpus_set> make_codec_corpus(const corpus_config& config) {
  codecs::avl_packet scratch;
  std::vector<corpus_set> sets;
  sets.push_back(make_realistic_set("8E", codec_id::codec8e, config, config.seed, scratch));
  sets.push_back(make_realistic_set("8", codec_id::codec8, config, config.seed + 1, scratch));
  sets.push_back(make_realistic_set("16", codec_id::codec16, config, config.seed + 2, scratch));
  sets.push_back(make_stress_set(config.seed + 3, scratch));
  return sets;
}

}  // namespace tgw::bench
