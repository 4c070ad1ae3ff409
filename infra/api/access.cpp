#include "infra/api/access.hpp"

#include <cmath>
#include <sstream>

namespace tgw::infra::api {
namespace {

// How many buckets may sit full before a sweep forgets them: a bucket per token name,
// so this bounds nothing a client controls; it only keeps revoked names from lingering.
constexpr std::size_t sweep_above = 1024;

http::response unauthorized(std::string_view message) {
  http::response r = error_response(401, "unauthorized", message);
  r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"tgw\"");
  return r;
}

// A rate as --rate took it: "50", "0.5" (a cast to an integer would say 0).
std::string rate_text(double per_second) {
  std::ostringstream text;
  text << per_second;
  return text.str();
}

}  // namespace

access_control::access_control(std::string tokens_file, bool open, double per_second, double burst)
    : file_(std::move(tokens_file)),
      open_(open),
      per_second_(per_second),
      burst_(burst),
      tokens_(std::make_shared<token_table>()) {}

bool access_control::reload(std::string& error) {
  if (file_.empty()) return true;
  auto table = read_token_file(file_, false, error);
  if (!table) return false;
  const std::lock_guard lock(mutex_);
  tokens_ = std::make_shared<const token_table>(std::move(*table));
  return true;
}

std::size_t access_control::token_count() const {
  const std::lock_guard lock(mutex_);
  return tokens_->entries().size();
}

std::optional<caller> access_control::admit(const http::request& r, scope needed,
                                            http::response& refusal) {
  caller who;
  if (open_) {
    who = {"anonymous", static_cast<scope_set>(scope::read) |
                            static_cast<scope_set>(scope::command) |
                            static_cast<scope_set>(scope::events)};
  } else {
    const auto header = r.header("authorization");
    if (!header) {
      refusal = unauthorized("no token: send Authorization: Bearer <token>");
      return std::nullopt;
    }
    std::string_view value = *header;
    if (value.size() < 7 || !(value.substr(0, 7) == "Bearer " || value.substr(0, 7) == "bearer ")) {
      refusal = unauthorized("the Authorization header is not a bearer token");
      return std::nullopt;
    }
    value.remove_prefix(7);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    std::shared_ptr<const token_table> tokens;
    {
      const std::lock_guard lock(mutex_);
      tokens = tokens_;
    }
    const token_entry* e = tokens->find(value);
    if (e == nullptr) {
      refusal = unauthorized("unknown token");
      return std::nullopt;
    }
    who = {e->name, e->scopes};
  }
  if (!allows(who.scopes, needed)) {
    refusal = error_response(403, "forbidden",
                             "the token '" + who.name + "' has no '" +
                                 scopes_text(static_cast<scope_set>(needed)) + "' scope");
    return std::nullopt;
  }
  const auto now = domain::token_bucket::clock::now();
  const std::lock_guard lock(mutex_);
  auto [it, added] = buckets_.try_emplace(who.name, per_second_, burst_, now);
  if (!it->second.take(now)) {
    refusal = error_response(429, "rate_limited",
                             "the token '" + who.name + "' is over its rate of " +
                                 rate_text(per_second_) + " requests a second");
    const double wait = per_second_ > 0 ? std::ceil(1.0 / per_second_) : 1.0;
    refusal.headers.emplace_back("Retry-After", std::to_string(static_cast<long long>(wait)));
    return std::nullopt;
  }
  if (buckets_.size() > sweep_above)
    std::erase_if(buckets_, [&](const auto& b) { return b.second.full(now); });
  return who;
}

}  // namespace tgw::infra::api
