#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "codecs/avl.hpp"
#include "codecs/command.hpp"

namespace tgw::infra {

using json = nlohmann::ordered_json;

/// "2019-06-10T10:04:46.000Z" for milliseconds since the Unix epoch; right for every
/// 64-bit value, years past 9999 as "+287396-10-12T08:59:00.993Z".
[[nodiscard]] std::string iso8601_utc_ms(std::uint64_t ms);

/// One record with every field: time (`timestamp_ms` a decimal string, so that no
/// double-based reader rounds it), priority, coordinates (degrees and raw 1e-7
/// integers), altitude, angle, satellites, speed, event IO id, the declared IO count
/// and each IO element with id, size and value (hex for NX elements).
[[nodiscard]] json record_json(const codecs::avl_packet& packet, const codecs::avl_record& r);

/// Just the IO elements of a record, in wire order, as an array of {id, size, value}
/// (a fixed-width value as a decimal string) or {id, size, hex} (NX bytes).
[[nodiscard]] json io_json(const codecs::avl_packet& packet, const codecs::avl_record& r);

/// The CRC block: {ok, field, computed}.
[[nodiscard]] json crc_json(std::uint32_t field, std::uint16_t computed);

/// A Codec 12/13/14/15 message: codec, type, quantity, timestamp, IMEI, payload as
/// text when printable and always as hex, CRC.
[[nodiscard]] json command_json(const codecs::command_message& m);

}  // namespace tgw::infra
