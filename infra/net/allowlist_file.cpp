#include "infra/net/allowlist_file.hpp"

#include <fstream>

#include "codecs/imei.hpp"

namespace tgw::infra::net {
namespace {

class file_source final : public ports::allowlist_source {
 public:
  explicit file_source(std::string path) : path_(std::move(path)) {}
  std::optional<std::unordered_set<std::string>> load(ports::store_failure& failure) override {
    std::string error;
    auto imeis = load_allowlist(path_, error);
    if (!imeis) failure = {ports::failure_kind::other, {"allowlist", error, {}}};
    return imeis;
  }
  [[nodiscard]] std::string describe() const override { return "file " + path_; }

 private:
  std::string path_;
};

}  // namespace

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

std::unique_ptr<ports::allowlist_source> file_allowlist(std::string path) {
  return std::make_unique<file_source>(std::move(path));
}

}  // namespace tgw::infra::net
