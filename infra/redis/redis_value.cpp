#include "infra/redis/redis_value.hpp"

namespace tgw::infra::redis {

std::optional<std::int64_t> value::as_int() const {
  if (type == kind::integer) return integer;
  if (type != kind::string || text.empty()) return std::nullopt;
  std::int64_t n = 0;
  bool negative = false;
  std::size_t i = 0;
  if (text[0] == '-') {
    negative = true;
    i = 1;
    if (text.size() == 1) return std::nullopt;
  }
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    n = n * 10 + (text[i] - '0');
  }
  return negative ? -n : n;
}

}  // namespace tgw::infra::redis
