// Fuzzes the AVL decoders (Codec 8, 8 Extended, 16) on raw bytes: decode_avl_frame
// under both CRC policies and decode_avl_data. Whatever decodes must re-encode and
// decode back to equal records. The CRC of the raw input is checked against a
// bitwise reference as well, since every frame decode depends on it.
// What decodes is also rendered as the gateway stores it (telemetry entry format 3)
// and as tgw decode prints it: every IO value must read back from the stored io field
// exactly, of its kind, in wire order, and every record time's ISO form must name that
// very millisecond.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "actors/domain/packet_rendering.hpp"
#include "codecs/avl.hpp"
#include "codecs/avl_decode.hpp"
#include "codecs/avl_encode.hpp"
#include "codecs/codec_id.hpp"
#include "codecs/crc16.hpp"
#include "codecs/errc.hpp"
#include "fuzz_support.hpp"
#include "infra/json/frame_json.hpp"
#include "infra/telemetry/entry_schema.hpp"
#include "infra/telemetry/stored_io.hpp"
#include "infra/text/hex.hpp"

namespace {

using namespace tgw::codecs;
using tgw::fuzz::require;

// The decoders refuse with a specific fault; need_more belongs to the framer only.
void check_status(decode_status s, std::span<const std::uint8_t> input) {
  require(s.code != errc::need_more);
  require(s.offset <= input.size());
  if (s.ok()) require(s.offset == input.size());
}

// The ms an ISO 8601 time of iso8601_utc_ms names, by the inverse calendar algorithm
// (days from civil), or -1 when the text is not of that form.
long double iso_ms(const std::string& text) {
  long long year = 0;
  unsigned month = 0, day = 0, h = 0, m = 0, sec = 0, ms = 0;
  int used = 0;
  const char* format = text.starts_with("+") ? "+%lld-%2u-%2uT%2u:%2u:%2u.%3uZ%n"
                                             : "%4lld-%2u-%2uT%2u:%2u:%2u.%3uZ%n";
  if (std::sscanf(text.c_str(), format, &year, &month, &day, &h, &m, &sec, &ms, &used) != 7 ||
      static_cast<std::size_t>(used) != text.size())
    return -1;
  if (month < 1 || month > 12 || day < 1 || day > 31 || h > 23 || m > 59 || sec > 59) return -1;
  const long long y = year - (month <= 2 ? 1 : 0);
  const long long era = y / 400;
  const long long yoe = y - era * 400;
  const long long mp = month > 2 ? month - 3 : month + 9;
  const long long doy = (153 * mp + 2) / 5 + day - 1;
  const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const long long days = era * 146097 + doe - 719468;
  return static_cast<long double>(days) * 86400000.0L + h * 3600000.0L + m * 60000.0L +
         sec * 1000.0L + ms;
}

void check_stored_forms(const avl_packet& packet, std::span<const std::uint8_t> input) {
  namespace t = tgw::infra::telemetry;
  const tgw::ports::packet_job job = tgw::domain::render_packet("356307042441013", packet, input);
  require(job.records.size() == packet.records.size());
  for (std::size_t i = 0; i < packet.records.size(); ++i) {
    const avl_record& r = packet.records[i];
    const auto& fields = job.records[i];
    require(fields[0] == std::to_string(r.timestamp_ms));
    std::string error;
    const auto values = t::read_io(fields[9], t::newest_entry_format, job.codec, error);
    require(values.has_value());
    const auto elements = packet.io_of(r);
    require(values->size() == elements.size());
    for (std::size_t k = 0; k < elements.size(); ++k) {
      const io_element& e = elements[k];
      const t::stored_io_value& v = (*values)[k];
      require(v.id == e.id);
      if (e.variable) {
        require(v.kind == t::stored_io_value::kind_t::bytes);
        require(v.text == tgw::infra::to_hex(packet.value_bytes(e)));
      } else {
        require(v.kind == t::stored_io_value::kind_t::integer && v.number() == e.value);
        require(v.size == e.size);
      }
    }
    // A double-based reader meets no number in io beyond 16 bits: ids, sizes; values are
    // strings.
    const auto doc = nlohmann::json::parse(fields[9]);
    for (const auto& element : doc)
      require(element[0].is_number_unsigned() && !element[1].is_number() &&
              (element.size() == 2 || element[2].is_number_unsigned()));
    // tgw decode's record: the time as a string and an ISO form naming the same ms.
    const auto json = tgw::infra::record_json(packet, r);
    require(json["timestamp_ms"] == fields[0]);
    const long double back = iso_ms(json["timestamp"].get<std::string>());
    require(back == static_cast<long double>(r.timestamp_ms));
  }
}

void fuzz_frame(std::span<const std::uint8_t> input) {
  avl_packet strict;
  avl_packet lenient;
  const decode_status s = decode_avl_frame(input, strict, crc_policy::strict);
  const decode_status l = decode_avl_frame(input, lenient, crc_policy::ignore);
  check_status(s, input);
  check_status(l, input);

  // A good CRC (or a fault found before the CRC is reached) makes the policies agree;
  // a bad one is the only thing strict refuses on its own.
  if (lenient.crc_ok()) {
    require(tgw::fuzz::same_status(s, l));
  } else {
    require(s.code == errc::bad_crc && s.offset == input.size() - tcp_frame_trailer);
  }
  if (!l.ok()) return;

  require(lenient.has_crc && is_avl_codec(lenient.codec));
  require(lenient.codec == input[tcp_frame_header]);
  tgw::fuzz::check_packet(lenient, input, tcp_frame_header);
  if (s.ok()) require(to_record_data(strict) == to_record_data(lenient));
  tgw::fuzz::check_avl_roundtrip(lenient);
  check_stored_forms(lenient, input);
}

void fuzz_data(std::span<const std::uint8_t> input) {
  avl_packet packet;
  const decode_status s = decode_avl_data(input, 0, packet);
  check_status(s, input);
  if (!s.ok()) return;
  require(!packet.has_crc && is_avl_codec(packet.codec) && packet.codec == input[0]);
  require(packet.records.size() == input[1] && input.back() == input[1]);
  tgw::fuzz::check_packet(packet, input, 0);
  tgw::fuzz::check_avl_roundtrip(packet);

  // A start past the end is a fault, not a read out of bounds.
  avl_packet past;
  const decode_status p = decode_avl_data(input, input.size() + 1, past);
  require(p.code == errc::truncated && past.records.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  require(crc16_ibm(input) == tgw::fuzz::reference_crc16(input));
  fuzz_frame(input);
  fuzz_data(input);
  return 0;
}
