#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tgw::infra::telemetry {

/// One IO element as a telemetry entry stores it.
struct stored_io_value {
  /// What `text` holds.
  enum class kind_t : std::uint8_t {
    integer,  ///< A fixed-width element's unsigned value, as decimal digits.
    bytes,    ///< A variable-length (Codec 8 Extended NX) element's bytes, as hex.
  };
  std::uint16_t id = 0;
  kind_t kind = kind_t::integer;
  std::string text;
  /// An integer's size on the wire, in bytes (1, 2, 4 or 8), which says how to
  /// sign-extend it: recorded by entries of format 4 on; 0 where the entry did not
  /// record it (formats 1 to 3) and for bytes.
  std::uint8_t size = 0;

  /// The integer's value (always there for an `integer` read by read_io).
  [[nodiscard]] std::optional<std::uint64_t> number() const;
  friend bool operator==(const stored_io_value&, const stored_io_value&) = default;
};

/// A record's IO elements in wire order; an id may occur more than once.
using stored_io = std::vector<stored_io_value>;

/// Reads the `io` field of an entry of format `format`:
/// - 4: `[[id,"decimal",size],[id,{"hex":"..."}],...]` (docs/TELEMETRY.md): every
///   integer with its wire size (1, 2, 4 or 8), which its value must fit;
/// - 3: the same without sizes, `[[id,"decimal"],...]`;
/// - 1 and 2: `{"id":value,...}`, integers as JSON numbers up to 2^53 - 1 and decimal
///   strings above, NX bytes as hex strings. Of codec "8" or "16" (no NX elements) a
///   string is a decimal integer. Otherwise it is an integer when it is all digits,
///   above 2^53 - 1 and within 64 bits (the only strings format 2 wrote for integers),
///   else hex bytes: only a Codec 8E NX value of 8 to 10 bytes whose hex is all digits
///   is taken for an integer, the ambiguity format 3 removes.
/// Repeated ids keep both values in order (format 2's duplicate keys too). nullopt with
/// `error` for text that is no such field.
[[nodiscard]] std::optional<stored_io> read_io(std::string_view text, int format,
                                               std::string_view codec, std::string& error);

/// Appends the `io` text of `values` in the newest form: format 4's, where an integer
/// read from an older entry (size 0) has no size.
void append_io_text(std::string& out, const stored_io& values);
[[nodiscard]] std::string io_text(const stored_io& values);

/// The same as JSON.
[[nodiscard]] nlohmann::ordered_json io_json(const stored_io& values);

/// Appends the JSON of one value: "decimal" or {"hex":"..."}.
void append_value_text(std::string& out, const stored_io_value& value);

}  // namespace tgw::infra::telemetry
