#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "actors/domain/token_bucket.hpp"
#include "infra/api/api_input.hpp"
#include "infra/api/tokens.hpp"
#include "infra/http/message.hpp"

namespace tgw::infra::api {

/// Who a request comes from: the token's name and scopes.
struct caller {
  std::string name;
  scope_set scopes = 0;
};

/// Who may do what, and how often: the tokens file (re-read on reload()), bearer
/// tokens checked in constant time, and a token bucket per token name. Thread-safe.
class access_control {
 public:
  /// With `tokens_file` empty and `open` true, every request is let in as "anonymous"
  /// with every scope (--no-auth, on loopback only); the rate limit still applies.
  access_control(std::string tokens_file, bool open, double per_second, double burst);

  /// Reads the tokens file again; on failure the tokens in force stay and `error` says
  /// why. False then.
  bool reload(std::string& error);
  [[nodiscard]] std::size_t token_count() const;

  /// The caller of `r`, allowed `needed` and within its rate; otherwise the refusal:
  /// 401 (no or unknown token, with WWW-Authenticate), 403 (scope), 429 (rate, with
  /// Retry-After).
  [[nodiscard]] std::optional<caller> admit(const http::request& r, scope needed,
                                            http::response& refusal);

 private:
  const std::string file_;
  const bool open_;
  const double per_second_;
  const double burst_;
  mutable std::mutex mutex_;
  std::shared_ptr<const token_table> tokens_;
  std::unordered_map<std::string, domain::token_bucket> buckets_;
};

}  // namespace tgw::infra::api
