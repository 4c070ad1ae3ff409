#pragma once

#include <string_view>

namespace tgw::infra::telemetry {

/// The Redis Functions library `tgw_gateway` (gateway_library.lua): atomic packet
/// persistence with resend detection, and journal events with their projection.
[[nodiscard]] std::string_view gateway_library_source() noexcept;

}  // namespace tgw::infra::telemetry
