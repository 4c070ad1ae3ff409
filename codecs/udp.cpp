#include "codecs/udp.hpp"

#include "codecs/avl_decode.hpp"
#include "codecs/byte_order.hpp"

namespace tgw::codecs {

decode_status decode_udp_datagram(std::span<const std::uint8_t> datagram, udp_header& header,
                                  avl_packet& out) noexcept {
  out.clear();
  out.bytes = datagram;
  if (datagram.size() < udp_imei_offset) return {errc::truncated, datagram.size()};
  header.length = load_be16(datagram.data());
  if (header.length != datagram.size() - 2) return {errc::length_mismatch, 0};
  header.packet_id = load_be16(datagram.data() + 2);
  header.packet_type = datagram[4];
  header.avl_packet_id = datagram[5];
  const std::size_t imei_length = load_be16(datagram.data() + 6);
  if (imei_length < imei_min_digits || imei_length > imei_max_digits)
    return {errc::bad_imei_length, 6};
  if (datagram.size() - udp_imei_offset < imei_length) return {errc::truncated, 6};
  const auto* digits = reinterpret_cast<const char*>(datagram.data() + udp_imei_offset);
  for (std::size_t i = 0; i < imei_length; ++i)
    if (digits[i] < '0' || digits[i] > '9') return {errc::bad_imei_digit, udp_imei_offset + i};
  (void)imei::parse({digits, imei_length}, header.device);
  return decode_avl_data(datagram, udp_imei_offset + imei_length, out);
}

}  // namespace tgw::codecs
