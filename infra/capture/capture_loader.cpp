#include "infra/capture/capture_loader.hpp"

#include <pcap/pcap.h>

#include <memory>

#include "infra/capture/packet_parser.hpp"
#include "infra/capture/tcp_reassembler.hpp"

namespace tgw::infra::capture {
namespace {

struct pcap_closer {
  void operator()(pcap_t* p) const { pcap_close(p); }
};

// Byte offset of the next record. libpcap reads offline files through stdio, so the
// stream position is where the record about to be read starts.
long position(pcap_t* p) {
  std::FILE* f = pcap_file(p);
  return f != nullptr ? std::ftell(f) : -1;
}

void read_file(const std::string& path, tcp_reassembler& streams, capture_set& out) {
  char error[PCAP_ERRBUF_SIZE] = {};
  std::unique_ptr<pcap_t, pcap_closer> p(
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_MICRO, error));
  if (!p) {
    out.errors.push_back(path + ": cannot read: " + error);
    return;
  }
  const int linktype = pcap_datalink(p.get());
  std::uint64_t number = 0;
  for (;;) {
    const long at = position(p.get());
    pcap_pkthdr* header = nullptr;
    const std::uint8_t* data = nullptr;
    const int r = pcap_next_ex(p.get(), &header, &data);
    if (r == PCAP_ERROR_BREAK) break;  // end of file
    ++number;
    if (r != 1) {
      out.errors.push_back(path + ": packet " + std::to_string(number) + " at byte offset " +
                           std::to_string(at) + ": " + pcap_geterr(p.get()) +
                           "; the rest of this file is not read");
      break;
    }
    ++out.packets;
    const std::int64_t unix_us =
        static_cast<std::int64_t>(header->ts.tv_sec) * 1'000'000 + header->ts.tv_usec;
    tcp_packet packet;
    std::string why;
    const auto outcome = parse_packet(linktype, std::span<const std::uint8_t>(data, header->caplen),
                                      header->len, packet, why);
    if (outcome == parse_outcome::malformed) {
      out.errors.push_back(path + ": packet " + std::to_string(number) + " at byte offset " +
                           std::to_string(at) + ": " + why + "; skipped");
      continue;
    }
    if (outcome == parse_outcome::tcp) streams.add(unix_us, packet);
  }
}

}  // namespace

capture_set load_captures(const std::vector<std::string>& files, std::uint16_t device_port) {
  capture_set out;
  tcp_reassembler streams(device_port);
  for (const auto& path : files) read_file(path, streams, out);
  out.connections = streams.finish();
  return out;
}

}  // namespace tgw::infra::capture
