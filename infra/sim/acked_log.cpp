#include "infra/sim/acked_log.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <spdlog/fmt/fmt.h>

namespace tgw::infra::sim {

acked_log::acked_log(const std::string& path) : file_(std::fopen(path.c_str(), "w")) {
  if (file_ == nullptr)
    throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
}

acked_log::~acked_log() {
  std::fclose(file_);
}

void acked_log::write(const codecs::imei& device, std::uint64_t first_ts, std::uint64_t last_ts,
                      std::uint32_t records) {
  // Formatted outside the lock; only the append is serialized.
  fmt::memory_buffer line;
  fmt::format_to(std::back_inserter(line), "{} {} {} {}\n", device.str(), first_ts, last_ts,
                 records);
  const std::lock_guard lock(mutex_);
  std::fwrite(line.data(), 1, line.size(), file_);
}

}  // namespace tgw::infra::sim
