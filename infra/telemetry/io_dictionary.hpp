#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tgw::infra::telemetry {

/// What Teltonika's documentation says of one IO element id.
struct io_element_info {
  std::uint16_t id = 0;
  std::string name;   ///< snake_case, for JSON keys: "external_voltage"
  std::string title;  ///< As the documentation writes it: "External Voltage"
  std::uint16_t bytes = 0;
  bool is_signed = false;
  double multiplier = 1.0;
  std::string unit;  ///< Empty when the value has none.

  /// The physical value of a raw wire value of `size` bytes: sign-extended when the
  /// element is signed, times the multiplier.
  [[nodiscard]] double scaled(std::uint64_t raw, std::uint16_t size) const;
};

/// The IO element names of one device family, from the table shipped in the binary
/// (infra/telemetry/io_elements.json; docs/CODECS.md says where it comes from). The
/// numeric id stays the key everywhere; a name is added where the table knows the id.
class io_dictionary {
 public:
  /// The family's table ("fmb": FMB, FMC and FMM devices), or nullopt with `error` set.
  static std::optional<io_dictionary> builtin(std::string_view model, std::string& error);
  /// The families the built-in table has.
  static std::vector<std::string> models();

  [[nodiscard]] const io_element_info* find(std::uint16_t id) const;
  [[nodiscard]] std::size_t size() const { return by_id_.size(); }

 private:
  std::unordered_map<std::uint16_t, io_element_info> by_id_;
};

}  // namespace tgw::infra::telemetry
