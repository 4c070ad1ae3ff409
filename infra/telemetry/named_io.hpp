#pragma once

#include <string>

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
void append_named_value(std::string& out, const io_element_info& info,
                        const stored_io_value& value);

/// The record's IO elements keyed by element name, with physical values, for the ids
/// the table knows (the others are left out: they stay in `io` by id), as JSON text.
/// A name whose id occurs more than once in the record maps to the array of its
/// values in wire order; otherwise to its value. No key repeats.
[[nodiscard]] std::string named_io_text(const stored_io& io, const io_dictionary& names);

/// The same as JSON.
[[nodiscard]] nlohmann::ordered_json named_io(const stored_io& io, const io_dictionary& names);

}  // namespace tgw::infra::telemetry
