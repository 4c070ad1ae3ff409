#pragma once

#include <cstdint>
#include <span>

#include "infra/net/ip_endpoint.hpp"

namespace tgw::infra::net {

/// Where a listener hands the bytes of its connections when the instance records them
/// (`tgw serve --capture-dir`; infra/capture writes them as pcap files). Declared here,
/// so the socket layer knows that something records and not how. Every call is safe
/// from any thread and must not block a connection's io thread.
class traffic_recorder {
 public:
  virtual ~traffic_recorder() = default;

  /// A new connection; returns its id for the other calls.
  virtual std::uint64_t open(const ip_endpoint& device, const ip_endpoint& gateway) = 0;
  /// Bytes read from the device (`from_device`) or queued for it.
  virtual void data(std::uint64_t id, bool from_device, std::span<const std::uint8_t> bytes) = 0;
  virtual void close(std::uint64_t id, bool by_device) = 0;
};

}  // namespace tgw::infra::net
