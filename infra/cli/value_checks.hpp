#pragma once

namespace CLI {
class Validator;
}

namespace tgw::infra {

/// An IMEI as devices announce it: 15 digits, or 16 for an IMEISV. A value that is
/// none is a usage error naming it.
[[nodiscard]] const CLI::Validator& device_imei_check();

/// A Redis URL as redis::parse_redis_url reads it; the error is its.
[[nodiscard]] const CLI::Validator& redis_url_check();

/// A duration as parse_duration reads it ("30s", "500ms", "2m", "1h", plain seconds).
[[nodiscard]] const CLI::Validator& duration_check();

/// A number of 0 or more; an error says which it is not, in words.
[[nodiscard]] const CLI::Validator& non_negative_number();

/// A number above 0; an error says which it is not, in words.
[[nodiscard]] const CLI::Validator& positive_number();

}  // namespace tgw::infra
