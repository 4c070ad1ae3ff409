#pragma once

#include <string_view>

namespace tgw::infra::telemetry {

/// io_elements.json, compiled in: the IO element dictionary io_dictionary reads.
[[nodiscard]] std::string_view io_elements_source() noexcept;

}  // namespace tgw::infra::telemetry
