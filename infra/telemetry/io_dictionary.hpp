#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tgw::infra::telemetry {

/// How an element's raw value reads.
enum class io_value_kind : std::uint8_t {
  unsigned_integer,
  signed_integer,  ///< Two's complement in the element's size.
  bytes,           ///< Variable length (Codec 8 Extended NX): bytes, never a number.
};

/// What a device family's documentation says of one IO element id.
struct io_element_info {
  std::uint16_t id = 0;
  std::string name;   ///< snake_case, for JSON keys: "external_voltage"
  std::string title;  ///< As the documentation writes it: "External Voltage"
  std::uint16_t bytes = 0;
  io_value_kind kind = io_value_kind::unsigned_integer;
  bool is_signed = false;  ///< kind == signed_integer.
  double multiplier = 1.0;
  std::string unit;  ///< Empty when the value has none.
  /// Raw values that are no measurement but a state of the element (a Dallas sensor's
  /// 3000: "not_connected"), each with its snake_case name, in ascending raw order.
  std::vector<std::pair<std::uint64_t, std::string>> errors;

  /// The physical value of a raw wire value of `size` bytes: sign-extended when the
  /// element is signed, times the multiplier.
  [[nodiscard]] double scaled(std::uint64_t raw, std::uint16_t size) const;
  /// The state a raw value names, or nullptr when it is a measurement.
  [[nodiscard]] const std::string* error_of(std::uint64_t raw) const;
};

/// The decimals a multiplier is written with (0.1: 1, 0.25: 2, 2.5: 1, 1000: 0): a
/// physical value (an integer times it) is rounded to them.
[[nodiscard]] int decimals_of(double multiplier);

/// The IO element names of one device family. The table is data: the shipped one
/// (infra/telemetry/io_elements.json, compiled in) or an operator's file in the same
/// JSON form or as CSV (docs/CODECS.md, "IO element names"). The numeric id stays the
/// key everywhere; a name is added where the table knows the id.
class io_dictionary {
 public:
  /// The family's elements from the shipped table ("fmb", "fmc", "fmm"), or nullopt
  /// with `error` set.
  static std::optional<io_dictionary> builtin(std::string_view family, std::string& error);
  /// The family's elements from a dictionary file: JSON when its first non-blank
  /// character is '{', CSV otherwise. nullopt with `error` naming the line or element
  /// and the problem.
  static std::optional<io_dictionary> from_file(const std::string& path, std::string_view family,
                                                std::string& error);
  /// The same from a file's text; `origin` names it in errors.
  static std::optional<io_dictionary> from_text(std::string_view text, std::string_view family,
                                                std::string_view origin, std::string& error);
  /// The families the shipped table has.
  static std::vector<std::string> models();

  [[nodiscard]] const io_element_info* find(std::uint16_t id) const;
  [[nodiscard]] std::size_t size() const { return by_id_.size(); }

 private:
  std::unordered_map<std::uint16_t, io_element_info> by_id_;

  friend struct io_dictionary_builder;
};

}  // namespace tgw::infra::telemetry
