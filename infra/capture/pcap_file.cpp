#include "infra/capture/pcap_file.hpp"

#include <cerrno>
#include <cstring>

namespace tgw::infra::capture {
namespace {

constexpr std::uint32_t magic_us = 0xA1B2C3D4;
constexpr std::uint32_t linktype_ethernet = 1;
constexpr std::uint32_t snaplen = 262'144;

struct file_header {
  std::uint32_t magic;
  std::uint16_t major;
  std::uint16_t minor;
  std::int32_t thiszone;
  std::uint32_t sigfigs;
  std::uint32_t snaplen;
  std::uint32_t linktype;
};

struct record_header {
  std::uint32_t ts_sec;
  std::uint32_t ts_usec;
  std::uint32_t incl_len;
  std::uint32_t orig_len;
};

}  // namespace

pcap_file::~pcap_file() {
  close();
}

bool pcap_file::open(const std::string& path, std::string& error) {
  close();
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  // The magic number tells readers the byte order, so the header is written as the
  // host lays it out.
  const file_header h{magic_us, 2, 4, 0, 0, snaplen, linktype_ethernet};
  if (std::fwrite(&h, sizeof h, 1, file_) != 1) {
    error = path + ": " + std::strerror(errno);
    close();
    return false;
  }
  size_ = sizeof h;
  return true;
}

bool pcap_file::write(std::int64_t unix_us, std::span<const std::uint8_t> packet) {
  if (file_ == nullptr) return false;
  const auto length = static_cast<std::uint32_t>(packet.size());
  const record_header r{static_cast<std::uint32_t>(unix_us / 1'000'000),
                        static_cast<std::uint32_t>(unix_us % 1'000'000), length, length};
  if (std::fwrite(&r, sizeof r, 1, file_) != 1) return false;
  if (!packet.empty() && std::fwrite(packet.data(), packet.size(), 1, file_) != 1) return false;
  size_ += sizeof r + packet.size();
  return true;
}

void pcap_file::flush() {
  if (file_ != nullptr) std::fflush(file_);
}

void pcap_file::close() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
  size_ = 0;
}

}  // namespace tgw::infra::capture
