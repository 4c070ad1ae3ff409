#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "infra/telemetry/io_dictionary.hpp"

namespace tgw::infra::telemetry {

/// One element of a dictionary file, with the device families it applies to.
struct dictionary_element {
  io_element_info info;
  std::vector<std::string> families;
};

/// Every element of a dictionary file's text, checked (id, snake_case name, families,
/// size, kind, multiplier, error codes), in file order: JSON when the first non-blank
/// character is '{', CSV otherwise. nullopt with `error` naming `origin`, the element
/// or line, and the problem.
[[nodiscard]] std::optional<std::vector<dictionary_element>> parse_dictionary(
    std::string_view text, std::string_view origin, std::string& error);

/// The whole file, or nullopt with `error`.
[[nodiscard]] std::optional<std::string> read_dictionary_file(const std::string& path,
                                                              std::string& error);

}  // namespace tgw::infra::telemetry
