#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "infra/telemetry/io_dictionary.hpp"

namespace tgw::infra::telemetry {

/// A stream entry's fields by name, as stored.
using entry_map = std::map<std::string, std::string>;

/// One stored entry of any format (1 to 4) as `tgw telemetry tail --json` prints it:
/// `id`, `imei`, `v`/`codec`/`gen` when stored, `ts` always the stored decimal string
/// and `time` its ISO 8601 form (every 64-bit value has one), the small integers as
/// numbers, `lat`/`lon` in degrees, `io` in the format 4 form (an older entry's io
/// converted, its integers without sizes), with `names` also `io_named`, and
/// `io_size_mismatch` ({id, size, dictionary_size} for each value whose wire size is not
/// the dictionary's) when there are such. An io that does not read stays whole in
/// `io_text`, with the reason in `io_error`.
[[nodiscard]] nlohmann::ordered_json entry_json(const std::string& id, const entry_map& fields,
                                                const io_dictionary* names);

/// The same entry in one line for a person: time, IMEI, position, motion, then the IO
/// elements (`name=value unit` where the table knows the id, `id=value` otherwise; NX
/// bytes as 0x..., error states as error:<state>; a wire size the dictionary does not
/// expect said after the value). Safe for a terminal whatever the entry holds.
[[nodiscard]] std::string entry_line(const nlohmann::ordered_json& entry,
                                     const io_dictionary* names);

}  // namespace tgw::infra::telemetry
