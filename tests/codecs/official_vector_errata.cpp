// The examples the documents give wrong (see the vectors' notes and
// TELTONIKA_PROTOCOL.md section 9): each refused with its precise error, and what it
// would have been without the mistake.
#include <algorithm>
#include <string>

#include "codecs/byte_order.hpp"
#include "codecs/crc16.hpp"
#include "codecs/udp.hpp"
#include "tests/codecs/official_vector_checks.hpp"
#include "tests/codecs/test_support.hpp"

namespace tgw::codecs::official {

void check_codec14_nack(const bytes& frame, expected_fields& f) {
  // The IMEI was edited in the document without recomputing the CRC.
  command_message m;
  const decode_status strict = decode_command_frame(frame, m);
  EXPECT_EQ(strict.code, errc::bad_crc) << describe(strict);
  EXPECT_EQ(strict.offset, frame.size() - 4);
  f.prose({"strict_decoder"});

  m = check_command(frame, 0x0E, f, crc_policy::ignore);
  EXPECT_EQ(m.device.str(), "352093081452468");
  EXPECT_EQ(m.type, message_type::nack);
  EXPECT_TRUE(m.payload.empty());
  EXPECT_FALSE(m.crc_ok());
  EXPECT_EQ(m.crc_field, f.hex_number("crc16_field"));
  EXPECT_EQ(m.crc_computed, f.hex_number("crc16_computed"));
  EXPECT_EQ(m.crc_field, 0x32ACU);
  EXPECT_EQ(m.crc_computed, 0x635E);

  // The published CRC is the one of the frame with the command's IMEI ...2251.
  bytes original = frame;
  const bytes command_imei = test::from_hex("0352093081452251");
  std::copy(command_imei.begin(), command_imei.end(), original.begin() + 15);
  EXPECT_EQ(crc16_ibm(std::span(original).subspan(8, original.size() - 12)), 0x32AC);
}

void check_codec16_udp_as_published(const bytes& datagram, expected_fields& f) {
  udp_header h;
  avl_packet p;
  const decode_status s = decode_udp_datagram(datagram, h, p);
  EXPECT_EQ(s.code, errc::length_mismatch) << describe(s);
  EXPECT_EQ(s.offset, 0U);
  f.prose({"strict_decoder"});
  EXPECT_EQ(load_be16(datagram.data()), f.natural("published_udp_length_field"));
  EXPECT_EQ(datagram.size() - 2, f.natural("actual_length_after_length_field"));

  // With the length corrected, the rest is the documented datagram.
  bytes corrected = datagram;
  store_be16(corrected.data(), static_cast<std::uint16_t>(corrected.size() - 2));
  EXPECT_EQ(test::to_hex(corrected),
            test::upper_hex(test::official_vector("codec16_udp_wiki_example_corrected")
                                .at("hex")
                                .get<std::string>()));
  const decode_status fixed = decode_udp_datagram(corrected, h, p);
  ASSERT_EQ(fixed.code, errc::ok) << describe(fixed);
  EXPECT_EQ(h.packet_id, f.hex_number("packet_id"));
  EXPECT_EQ(h.avl_packet_id, f.hex_number("avl_packet_id"));
  EXPECT_EQ(h.device.str(), f.text("imei"));
  EXPECT_EQ(p.records.size(), f.natural("number_of_data"));
  EXPECT_EQ(test::to_hex(udp_response(h.packet_id, h.avl_packet_id,
                                      static_cast<std::uint8_t>(p.records.size()))),
            f.hex_bytes("server_ack_hex_if_accepted"));
  check_records(p, f);
}

void check_codec8e_udp_mislabelled(const bytes& datagram, expected_fields& f) {
  // Codec 8 data under an 8E codec id: the wider 8E fields run past the end.
  udp_header h;
  avl_packet p;
  const decode_status s = decode_udp_datagram(datagram, h, p);
  const std::size_t codec_offset = udp_imei_offset + 15;
  EXPECT_EQ(s.code, errc::truncated) << describe(s);
  // Found inside the records, after the header and NumberOfData1 were accepted.
  EXPECT_GT(s.offset, codec_offset + 1);
  EXPECT_LT(s.offset, datagram.size());
  f.prose({"strict_decoder"});

  // Only the codec id differs from the Codec 8 example, which decodes.
  bytes codec8 = datagram;
  ASSERT_EQ(codec8[codec_offset], 0x8E);
  codec8[codec_offset] = 0x08;
  EXPECT_EQ(test::to_hex(codec8),
            test::upper_hex(test::official_vector("codec8_udp_fmb1yx_pdf_all_io_example")
                                .at("hex")
                                .get<std::string>()));
  EXPECT_EQ(decode_udp_datagram(codec8, h, p).code, errc::ok);
}

void check_bare_avl_array(const json& vector, const bytes& data, expected_fields& f) {
  EXPECT_EQ(data.size(), f.natural("array_length_bytes"));
  EXPECT_EQ(data.at(0), f.hex_number("codec"));
  EXPECT_EQ(crc16_ibm(data), f.hex_number("crc16_of_this_array"));

  // The bare array, as a UDP datagram would carry it.
  avl_packet bare;
  const decode_status s = decode_avl_data(data, 0, bare);
  ASSERT_EQ(s.code, errc::ok) << describe(s);
  EXPECT_EQ(s.offset, data.size());
  EXPECT_EQ(bare.records.size(), 4U);

  // The same array in the TCP frame the notes derive for it.
  const bytes frame = test::from_hex(vector.at("derived_tcp_frame_hex").get<std::string>());
  EXPECT_EQ(test::to_hex(std::span(frame).subspan(8, data.size())), test::to_hex(data));
  avl_packet p;
  const decode_status framed = decode_avl_frame(frame, p);
  ASSERT_EQ(framed.code, errc::ok) << describe(framed);
  EXPECT_EQ(p.crc_field, f.hex_number("crc16_of_this_array"));
  EXPECT_EQ(p.records.size(), f.natural("number_of_data"));
  EXPECT_EQ(test::to_hex(avl_ack(static_cast<std::uint32_t>(p.records.size()))),
            f.hex_bytes("server_ack_hex"));
  EXPECT_EQ(to_record_data(p), to_record_data(bare));
  check_records(p, f);
  // The other records, from the document's breakdown.
  ASSERT_EQ(p.records.size(), 4U);
  EXPECT_EQ(p.records[1].timestamp_ms, 0x113FC17610BU);
  EXPECT_EQ(p.records[1].angle, 0x00C0);  // The PDF text says 00c7; the bytes say 00c0.
  EXPECT_EQ(p.records[3].timestamp_ms, 0x113FC267C5BU);
  EXPECT_EQ(p.records[3].speed, 0);
}

void check_codec13_eight_byte_timestamp(const bytes& frame, expected_fields& f) {
  // The historic document put an 8-byte millisecond timestamp where devices send 4-byte
  // seconds; the decoder follows the devices.
  const command_message m = check_command(frame, 0x0D, f);
  EXPECT_EQ(load_be64(frame.data() + 15), f.natural("timestamp_field_8_bytes_ms"));
  EXPECT_EQ(utc_text(load_be64(frame.data() + 15)), f.text("timestamp_utc"));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(frame.data() + 23), 7),
            f.text("payload_text_if_8_byte_timestamp"));
  expected_fields four(f.use("if_parsed_with_4_byte_timestamp"),
                       f.where() + " if_parsed_with_4_byte_timestamp");
  EXPECT_EQ(m.timestamp_s, four.natural("timestamp_s"));
  EXPECT_EQ(test::to_hex(m.payload), four.hex_bytes("payload_hex"));
  four.expect_all_checked();
}

}  // namespace tgw::codecs::official
