// Fuzzes decode_udp_datagram. On success every IO element must lie inside the
// datagram, after the header, and the datagram must re-encode to equal content.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "codecs/avl.hpp"
#include "codecs/avl_encode.hpp"
#include "codecs/byte_order.hpp"
#include "codecs/codec_id.hpp"
#include "codecs/errc.hpp"
#include "codecs/udp.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace tgw::codecs;
using tgw::fuzz::require;

void check_reencoded(const udp_header& header, const avl_packet& packet) {
  const std::vector<avl_record_data> records = to_record_data(packet);
  std::vector<std::uint8_t> datagram;
  const errc e = encode_udp_datagram(header.packet_id, header.avl_packet_id, header.device,
                                     static_cast<codec_id>(packet.codec), records, datagram);
  if (!tgw::fuzz::io_totals_fit(packet)) {
    require(e == errc::value_out_of_range && datagram.empty());
    return;
  }
  // The AVL data re-encodes to the same size, so the length field still fits.
  require(e == errc::ok);
  require(datagram.size() == packet.bytes.size());

  udp_header header2;
  avl_packet packet2;
  const decode_status s = decode_udp_datagram(datagram, header2, packet2);
  require(s.ok() && s.offset == datagram.size());
  require(header2.length == header.length && header2.packet_id == header.packet_id &&
          header2.avl_packet_id == header.avl_packet_id && header2.device == header.device);
  require(packet2.codec == packet.codec && to_record_data(packet2) == records);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  udp_header header;
  avl_packet packet;
  const decode_status s = decode_udp_datagram(input, header, packet);
  require(s.code != errc::need_more && s.offset <= size);
  if (!s.ok()) return 0;

  require(s.offset == size);
  require(header.length == size - 2);
  const std::size_t digits = load_be16(data + 6);
  require(header.device.str().size() == digits);
  require(std::ranges::equal(header.device.str(), input.subspan(udp_imei_offset, digits)));
  require(is_avl_codec(packet.codec) && packet.codec == data[udp_imei_offset + digits]);
  tgw::fuzz::check_packet(packet, input, udp_imei_offset + digits);
  check_reencoded(header, packet);
  return 0;
}
