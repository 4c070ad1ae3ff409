#include "infra/http/message.hpp"

#include <algorithm>
#include <cctype>

namespace tgw::infra::http {
namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::optional<std::string_view> request::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (same_name(key, name)) return std::string_view(value);
  return std::nullopt;
}

std::optional<std::string_view> request::param(std::string_view name) const {
  for (const auto& [key, value] : params)
    if (key == name) return std::string_view(value);
  return std::nullopt;
}

response response::text(unsigned status, std::string body) {
  response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

}  // namespace tgw::infra::http
