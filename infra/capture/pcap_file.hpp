#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

namespace tgw::infra::capture {

/// A classic pcap file being written (LINKTYPE_ETHERNET, microsecond timestamps, host
/// byte order as the format allows). Blocking file I/O: only the capture writer
/// thread and tests use it.
class pcap_file {
 public:
  pcap_file() = default;
  ~pcap_file();
  pcap_file(const pcap_file&) = delete;
  pcap_file& operator=(const pcap_file&) = delete;

  /// Creates (truncates) `path` and writes the file header; false with `error` set
  /// when it cannot.
  bool open(const std::string& path, std::string& error);
  /// Appends one packet captured at `unix_us` microseconds since the epoch.
  bool write(std::int64_t unix_us, std::span<const std::uint8_t> packet);
  /// Hands buffered packets to the kernel, so readers see whole packets.
  void flush();
  void close();
  [[nodiscard]] bool is_open() const noexcept { return file_ != nullptr; }
  /// Bytes written so far, header included.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

 private:
  std::FILE* file_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace tgw::infra::capture
