#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "infra/telemetry/io_dictionary.hpp"
#include "infra/telemetry/stored_io.hpp"

namespace tgw::infra::telemetry {

/// Appends the JSON of one stored value as the element's physical value:
/// - NX bytes: {"hex":"..."}, never a number, whatever the table says of the id;
/// - a raw value the table names as an error code: {"error":"<state>"};
/// - an element with a multiplier: a JSON number, raw (sign-extended when signed)
///   times the multiplier, rounded to the multiplier's decimals;
/// - otherwise the integer as a decimal string, sign-extended when signed ("-5").
/// A signed value is sign-extended from its size on the wire where the entry recorded
/// it (format 4 on), else from the size the table gives: FFF6 sent in 2 bytes is -10
/// whatever size the table expects.
void append_named_value(std::string& out, const io_element_info& info,
                        const stored_io_value& value);

/// A fixed-width value whose size on the wire is not the one its IO dictionary gives:
/// the device sends the element otherwise than the dictionary says (another model or
/// firmware, a wrong --model or dictionary file). Its value is read at the wire's size.
struct io_size_mismatch {
  std::uint16_t id = 0;
  std::uint8_t size = 0;              ///< On the wire.
  std::uint16_t dictionary_size = 0;  ///< As the dictionary has it.
  friend bool operator==(const io_size_mismatch&, const io_size_mismatch&) = default;
};

/// The size `info` gives its element disagrees with the wire's, for a value that
/// recorded it; nullopt otherwise.
[[nodiscard]] std::optional<io_size_mismatch> size_mismatch(const io_element_info& info,
                                                            const stored_io_value& value);

/// The record's IO elements keyed by element name, with physical values, for the ids
/// the table knows (the others are left out: they stay in `io` by id), as JSON text.
/// A name whose id occurs more than once in the record maps to the array of its
/// values in wire order; otherwise to its value. No key repeats. With `mismatches`, each
/// value whose wire size disagrees with the table is added to it.
[[nodiscard]] std::string named_io_text(const stored_io& io, const io_dictionary& names,
                                        std::vector<io_size_mismatch>* mismatches = nullptr);

/// The same as JSON.
[[nodiscard]] nlohmann::ordered_json named_io(const stored_io& io, const io_dictionary& names,
                                              std::vector<io_size_mismatch>* mismatches = nullptr);

}  // namespace tgw::infra::telemetry
