#pragma once

#include <nlohmann/json.hpp>

#include "infra/telemetry/io_dictionary.hpp"

namespace tgw::infra::telemetry {

/// A stored IO value as the element's physical value: scaled when the table gives a
/// multiplier or a sign, otherwise unchanged. `raw` is a value of a telemetry entry's
/// `io` object (a JSON integer, a decimal string above 2^53 - 1, or a hex string).
[[nodiscard]] nlohmann::ordered_json named_value(const io_element_info& info,
                                                 const nlohmann::ordered_json& raw);

/// An entry's `io` object keyed by element name instead of id, with physical values, for
/// the ids the table knows; the others are left out (they stay in `io` by id).
[[nodiscard]] nlohmann::ordered_json named_io(const nlohmann::ordered_json& io,
                                              const io_dictionary& names);

}  // namespace tgw::infra::telemetry
