#pragma once

namespace CLI {
class Validator;
}

namespace tgw::infra {

/// An IMEI as devices announce it: 15 digits, or 16 for an IMEISV. A value that is
/// none is a usage error naming it.
[[nodiscard]] const CLI::Validator& device_imei_check();

/// A duration as parse_duration reads it ("30s", "500ms", "2m", "1h", plain seconds).
[[nodiscard]] const CLI::Validator& duration_check();

}  // namespace tgw::infra
