#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "infra/capture/recorded_connection.hpp"

namespace tgw::infra::capture {

/// Reads capture files (pcap or pcapng, through libpcap) in the order given, as one
/// capture: a connection may continue from one file into the next, as it does across
/// a rotation. A malformed packet is reported with its file, packet number and byte
/// offset and skipped; a file that breaks off (truncated, corrupt record) is reported
/// the same way and the files after it are still read. Blocking file I/O.
[[nodiscard]] capture_set load_captures(const std::vector<std::string>& files,
                                        std::uint16_t device_port);

}  // namespace tgw::infra::capture
