#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "infra/capture/pcap_file.hpp"
#include "infra/net/ip_endpoint.hpp"

namespace tgw::infra::capture {

/// Where capture files go and when they rotate.
struct rotation_policy {
  std::filesystem::path dir;
  std::uint64_t max_file_bytes = std::uint64_t{64} << 20;
  std::chrono::seconds max_age{3600};
  /// All files of the set together; the oldest are deleted above it.
  std::uint64_t max_total_bytes = std::uint64_t{1024} << 20;
};

/// The file side of recording: turns connection events into synthesised TCP packets
/// (a handshake at open, consistent sequence and acknowledgement numbers per
/// direction, FINs at close) in a rotating set of pcap files named
/// tgw-YYYYMMDD-HHMMSS-NNNNNN.pcap, so names sort in time order. Blocking I/O; one
/// thread owns it.
class capture_files {
 public:
  explicit capture_files(rotation_policy policy);

  void open_connection(std::uint64_t id, std::int64_t unix_us, const net::ip_endpoint& device,
                       const net::ip_endpoint& gateway);
  void data(std::uint64_t id, std::int64_t unix_us, bool from_device,
            std::span<const std::uint8_t> bytes);
  void close_connection(std::uint64_t id, std::int64_t unix_us, bool by_device);
  /// Pushes buffered packets to the file.
  void flush();

  /// Payload bytes (device and gateway data) written so far.
  [[nodiscard]] std::uint64_t payload_written() const noexcept { return payload_written_; }
  /// Payload bytes lost to a file error (or to an unknown connection).
  [[nodiscard]] std::uint64_t payload_lost() const noexcept { return payload_lost_; }
  /// The capture files in the directory, oldest first.
  [[nodiscard]] std::vector<std::filesystem::path> files() const;

 private:
  struct connection {
    net::ip_endpoint device;
    net::ip_endpoint gateway;
    std::uint32_t device_seq = 0;   ///< Next sequence number the device sends.
    std::uint32_t gateway_seq = 0;  ///< Next sequence number the gateway sends.
  };

  bool ready(std::int64_t unix_us);
  void rotate(std::int64_t unix_us);
  void enforce_total();
  bool emit(std::int64_t unix_us, const connection& c, bool from_device, std::uint8_t flags,
            std::span<const std::uint8_t> payload = {});

  rotation_policy policy_;
  pcap_file file_;
  std::filesystem::path current_;
  std::int64_t opened_us_ = 0;
  std::uint64_t sequence_ = 0;
  std::unordered_map<std::uint64_t, connection> connections_;
  std::vector<std::uint8_t> packet_;
  std::uint64_t payload_written_ = 0;
  std::uint64_t payload_lost_ = 0;
  bool failed_logged_ = false;
};

}  // namespace tgw::infra::capture
