#include "infra/net/allowlist.hpp"

#include <fstream>

#include "codecs/imei.hpp"

namespace tgw::infra::net {

std::optional<std::unordered_set<std::string>> load_allowlist(const std::string& path,
                                                              std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read allowlist " + path;
    return std::nullopt;
  }
  std::unordered_set<std::string> imeis;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    line.erase(0, start);
    codecs::imei parsed;
    if (codecs::imei::parse(line, parsed) != codecs::errc::ok) {
      error = "allowlist " + path + " line " + std::to_string(number) + ": '" + line +
              "' is not an IMEI (15 or 16 digits)";
      return std::nullopt;
    }
    imeis.insert(line);
  }
  if (in.bad()) {
    error = "cannot read allowlist " + path;
    return std::nullopt;
  }
  if (imeis.empty()) {
    error = "allowlist " + path +
            " lists no IMEI (only comments or blank lines); an empty allowlist would let "
            "every device in: add IMEIs or drop --allowlist";
    return std::nullopt;
  }
  return imeis;
}

allowlist::allowlist(std::unordered_set<std::string> imeis)
    : imeis_(std::make_shared<const std::unordered_set<std::string>>(std::move(imeis))) {}

std::shared_ptr<const std::unordered_set<std::string>> allowlist::current() const {
  const std::lock_guard lock(mutex_);
  return imeis_;
}

bool allowlist::admits(std::string_view imei) const {
  const auto imeis = current();
  return !imeis || imeis->contains(std::string(imei));
}

void allowlist::replace(std::unordered_set<std::string> imeis) {
  auto next = std::make_shared<const std::unordered_set<std::string>>(std::move(imeis));
  const std::lock_guard lock(mutex_);
  imeis_ = std::move(next);
}

std::size_t allowlist::size() const {
  const auto imeis = current();
  return imeis ? imeis->size() : 0;
}

}  // namespace tgw::infra::net
