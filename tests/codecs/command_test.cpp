#include "codecs/command.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "codecs/avl_decode.hpp"
#include "codecs/byte_order.hpp"
#include "tests/codecs/hex.hpp"
#include "tests/codecs/test_support.hpp"

namespace tgw::codecs {
namespace {

using bytes = std::vector<std::uint8_t>;

std::string describe(const decode_status& s) {
  return std::string(to_string(s.code)) + " at " + std::to_string(s.offset);
}

imei make_imei(std::string_view digits) {
  imei id;
  EXPECT_EQ(imei::parse(digits, id), errc::ok);
  return id;
}

bytes encode(const command_fields& fields) {
  bytes out;
  EXPECT_EQ(encode_command_frame(fields, out), errc::ok);
  return out;
}

TEST(CommandEncode, Codec12Getinfo) {
  command_fields f;
  f.payload = as_bytes("getinfo");
  EXPECT_EQ(test::to_hex(encode(f)), "000000000000000F0C010500000007676574696E666F0100004312");
}

TEST(CommandEncode, Codec14GetverCarriesTheImeiAsBcd) {
  command_fields f;
  f.codec = codec_id::codec14;
  f.device = make_imei("352093081452251");
  f.payload = as_bytes("getver");
  EXPECT_EQ(test::to_hex(encode(f)),
            "00000000000000160E01050000000E0352093081452251676574766572010000D2C1");
}

TEST(CommandEncode, Codec15Hello) {
  command_fields f;
  f.codec = codec_id::codec15;
  f.type = message_type::message;
  f.timestamp_s = 0x654B65A4;
  f.device = make_imei("123456789123456");
  f.payload = as_bytes("Hello!\n");
  EXPECT_EQ(test::to_hex(encode(f)),
            "000000000000001B0F010B00000013654B65A4012345678912345648656C6C6F210A01000093D6");
}

TEST(CommandEncode, AppendsAfterExistingBytes) {
  command_fields f;
  f.payload = as_bytes("getio");
  bytes out{0xEE};
  ASSERT_EQ(encode_command_frame(f, out), errc::ok);
  EXPECT_EQ(test::to_hex(out), "EE000000000000000D0C010500000005676574696F01000000CB");
}

TEST(CommandEncode, Refusals) {
  const bytes before{0x01};
  for (const codec_id codec : {codec_id::codec8, codec_id::codec8e, codec_id::codec16,
                               static_cast<codec_id>(0x10 + 1), static_cast<codec_id>(0x0B)}) {
    command_fields f;
    f.codec = codec;
    bytes out = before;
    EXPECT_EQ(encode_command_frame(f, out), errc::value_out_of_range) << int(codec);
    EXPECT_EQ(out, before);
  }
  for (const codec_id codec : {codec_id::codec14, codec_id::codec15}) {
    command_fields f;
    f.codec = codec;  // No IMEI.
    f.payload = as_bytes("getver");
    bytes out = before;
    EXPECT_EQ(encode_command_frame(f, out), errc::value_out_of_range);
    EXPECT_EQ(out, before);
  }
}

TEST(CommandRoundTrip, EveryCodecAndPayload) {
  std::mt19937_64 rng(12);
  struct variant {
    codec_id codec;
    std::uint8_t type;
  };
  const variant variants[] = {
      {codec_id::codec12, message_type::command}, {codec_id::codec12, message_type::response},
      {codec_id::codec12, message_type::camera},  {codec_id::codec13, message_type::response},
      {codec_id::codec14, message_type::command}, {codec_id::codec14, message_type::response},
      {codec_id::codec14, message_type::nack},    {codec_id::codec15, message_type::message}};
  for (int iteration = 0; iteration < 400; ++iteration) {
    const variant v = variants[rng() % std::size(variants)];
    bytes payload(rng() % 5 == 0 ? 0 : rng() % 2100);
    for (std::uint8_t& b : payload) b = static_cast<std::uint8_t>(rng());
    std::string digits(15 + rng() % 2, '0');
    for (char& c : digits) c = static_cast<char>('0' + rng() % 10);
    // A 16-digit IMEISV cannot start with 0: the BCD field would read back as 15 digits.
    if (digits.size() == 16 && digits[0] == '0') digits[0] = '1';
    command_fields f;
    f.codec = v.codec;
    f.type = v.type;
    f.timestamp_s = static_cast<std::uint32_t>(rng());
    f.device = make_imei(digits);
    f.payload = payload;
    const bytes frame = encode(f);
    command_message m;
    const decode_status s = decode_command_frame(frame, m);
    ASSERT_EQ(s.code, errc::ok) << describe(s);
    EXPECT_EQ(s.offset, frame.size());
    EXPECT_EQ(m.codec, static_cast<std::uint8_t>(v.codec));
    EXPECT_EQ(m.type, v.type);
    EXPECT_EQ(m.quantity, 1);
    EXPECT_TRUE(m.crc_ok());
    const bool stamped = v.codec == codec_id::codec13 || v.codec == codec_id::codec15;
    const bool addressed = v.codec == codec_id::codec14 || v.codec == codec_id::codec15;
    EXPECT_EQ(m.has_timestamp, stamped);
    EXPECT_EQ(m.timestamp_s, stamped ? f.timestamp_s : 0U);
    EXPECT_EQ(m.has_imei, addressed);
    if (addressed) {
      EXPECT_EQ(m.device.str(), digits);
    }
    EXPECT_EQ(test::to_hex(m.payload), test::to_hex(payload));
  }
}

TEST(CommandDecode, PayloadText) {
  command_message m;
  const bytes frame = test::official_bytes("codec12_getio_response");
  ASSERT_TRUE(decode_command_frame(frame, m).ok());
  EXPECT_TRUE(m.payload_is_text());
  EXPECT_EQ(m.payload_text(), "DI1:1 DI2:0 DI3:0 AIN1:0 AIN2:16924 DO1:0 DO2:1");
  // The payload borrows the frame.
  EXPECT_EQ(m.payload.data(), frame.data() + 15);

  const bytes binary_payload{'o', 'k', 0x00, 0x01};
  command_fields f;
  f.type = message_type::response;
  f.payload = binary_payload;
  const bytes binary = encode(f);
  ASSERT_TRUE(decode_command_frame(binary, m).ok());
  EXPECT_FALSE(m.payload_is_text());
  EXPECT_EQ(m.payload.size(), 4U);

  const std::string whitespace = "a\tb\r\nc";
  f.payload = as_bytes(whitespace);
  const bytes text = encode(f);
  ASSERT_TRUE(decode_command_frame(text, m).ok());
  EXPECT_TRUE(m.payload_is_text());
}

TEST(CommandDecodeErrors, EveryPrefixIsTruncated) {
  for (const char* name : {"codec12_getinfo_command", "codec13_wiki_example_current",
                           "codec14_getver_ack_response", "codec15_wiki_example_hello"}) {
    const bytes frame = test::official_bytes(name);
    for (std::size_t n = 0; n < frame.size(); ++n) {
      command_message m;
      const decode_status s = decode_command_frame(std::span(frame).first(n), m);
      ASSERT_EQ(s.code, errc::truncated) << name << " prefix " << n;
      ASSERT_EQ(s.offset, n);
    }
  }
}

TEST(CommandDecodeErrors, TrailingGarbage) {
  bytes frame = test::official_bytes("codec12_getinfo_command");
  frame.push_back(0x00);
  command_message m;
  const decode_status s = decode_command_frame(frame, m);
  EXPECT_EQ(s.code, errc::length_mismatch);
  EXPECT_EQ(s.offset, 4U);
}

TEST(CommandDecodeErrors, BadPreamble) {
  for (std::size_t i = 0; i < 4; ++i) {
    bytes frame = test::official_bytes("codec12_getinfo_command");
    frame[i] = 0xFF;
    command_message m;
    const decode_status s = decode_command_frame(frame, m);
    EXPECT_EQ(s.code, errc::bad_preamble);
    EXPECT_EQ(s.offset, i);
  }
}

TEST(CommandDecodeErrors, LengthTooSmall) {
  for (std::uint32_t length = 0; length < 8; ++length) {
    bytes frame(tcp_frame_header + length + tcp_frame_trailer, 0x00);
    store_be32(frame.data() + 4, length);
    if (length > 0) frame[8] = 0x0C;
    command_message m;
    const decode_status s = decode_command_frame(frame, m);
    EXPECT_EQ(s.code, errc::length_too_small) << length;
    EXPECT_EQ(s.offset, 4U);
  }
}

TEST(CommandDecodeErrors, BadCrcAtTheCrcField) {
  const bytes original = test::official_bytes("codec14_getver_command");
  for (std::size_t i = 8; i < original.size(); ++i) {
    bytes frame = original;
    frame[i] ^= 0x10;
    command_message m;
    const decode_status s = decode_command_frame(frame, m);
    EXPECT_EQ(s.code, errc::bad_crc) << i;
    EXPECT_EQ(s.offset, original.size() - 4);
  }
}

TEST(CommandDecodeErrors, AvlFrameIsWrongCodec) {
  const bytes frame = test::official_bytes("codec8e_tcp_wiki_example");
  command_message m;
  const decode_status s = decode_command_frame(frame, m);
  EXPECT_EQ(s.code, errc::wrong_codec);
  EXPECT_EQ(s.offset, 8U);
}

TEST(CommandDecodeErrors, UnknownCodec) {
  bytes frame = test::official_bytes("codec12_getinfo_command");
  frame[8] = 0x0B;
  test::recompute_crc(frame);
  command_message m;
  const decode_status s = decode_command_frame(frame, m);
  EXPECT_EQ(s.code, errc::unknown_codec);
  EXPECT_EQ(s.offset, 8U);
}

TEST(CommandDecodeErrors, MessageTypeTheCodecDoesNotDefine) {
  struct bad_type {
    const char* vector;
    std::uint8_t type;
  };
  for (const bad_type& b :
       {bad_type{"codec12_getinfo_command", 0x00}, bad_type{"codec12_getinfo_command", 0x11},
        bad_type{"codec12_getinfo_command", 0x0B}, bad_type{"codec13_wiki_example_current", 0x0D},
        bad_type{"codec14_getver_command", 0x0D}, bad_type{"codec15_wiki_example_hello", 0x05}}) {
    bytes frame = test::official_bytes(b.vector);
    frame[10] = b.type;
    test::recompute_crc(frame);
    command_message m;
    const decode_status s = decode_command_frame(frame, m);
    EXPECT_EQ(s.code, errc::bad_message_type) << b.vector << " " << int{b.type};
    EXPECT_EQ(s.offset, 10U);
  }
}

TEST(CommandDecodeErrors, InnerSizeDisagreesWithDataSize) {
  for (const int delta : {-1, 1, 1000}) {
    bytes frame = test::official_bytes("codec12_getinfo_command");
    store_be32(frame.data() + 11, static_cast<std::uint32_t>(7 + delta));
    test::recompute_crc(frame);
    command_message m;
    const decode_status s = decode_command_frame(frame, m);
    EXPECT_EQ(s.code, errc::length_mismatch) << delta;
    EXPECT_EQ(s.offset, 11U);
  }
}

TEST(CommandDecodeErrors, SizeTooSmallForTimestampOrImei) {
  // Codec 14 with a 4-byte body: no room for the 8-byte IMEI.
  bytes frame = test::from_hex(
      "000000000000000C"
      "0E0105"
      "00000004"
      "01020304"
      "01"
      "00000000");
  test::recompute_crc(frame);
  command_message m;
  decode_status s = decode_command_frame(frame, m);
  EXPECT_EQ(s.code, errc::length_too_small) << describe(s);
  EXPECT_EQ(s.offset, 11U);
  // Codec 13 with 3 bytes: no room for the timestamp.
  frame = test::from_hex(
      "000000000000000B"
      "0D0106"
      "00000003"
      "010203"
      "01"
      "00000000");
  test::recompute_crc(frame);
  s = decode_command_frame(frame, m);
  EXPECT_EQ(s.code, errc::length_too_small) << describe(s);
  EXPECT_EQ(s.offset, 11U);
}

TEST(CommandDecodeErrors, QuantitiesDisagree) {
  bytes frame = test::official_bytes("codec12_getio_response");
  const std::size_t quantity2 = frame.size() - 5;
  frame[quantity2] = 2;
  test::recompute_crc(frame);
  command_message m;
  const decode_status s = decode_command_frame(frame, m);
  EXPECT_EQ(s.code, errc::record_count_mismatch);
  EXPECT_EQ(s.offset, quantity2);
}

TEST(CommandDecodeErrors, ImeiNibbleAboveNine) {
  bytes frame = test::official_bytes("codec14_getver_command");
  frame[16] = 0x5A;  // Second IMEI byte: 52 -> 5A.
  test::recompute_crc(frame);
  command_message m;
  const decode_status s = decode_command_frame(frame, m);
  EXPECT_EQ(s.code, errc::bad_imei_digit);
  EXPECT_EQ(s.offset, 15U);
}

TEST(CommandText, ControlCharactersAreFoundWhereverTheyAre) {
  EXPECT_FALSE(find_control_character("getinfo").has_value());
  EXPECT_FALSE(find_control_character("setdigout 1 60").has_value());
  EXPECT_FALSE(find_control_character("\xC3\xA9"
                                      "t\xC3\xA9 \xE2\x82\xAC")
                   .has_value());  // UTF-8 text
  EXPECT_EQ(find_control_character("getinfo\r\nsetparam 2001:evil"), 7U);
  EXPECT_EQ(find_control_character(std::string_view("get\0info", 8)), 3U);
  EXPECT_EQ(find_control_character("\x1B[2Jgetinfo"), 0U);
  EXPECT_EQ(find_control_character("getinfo\t"), 7U);
  EXPECT_EQ(find_control_character("getinfo\x7F"), 7U);
  EXPECT_EQ(find_control_character("a\xC2\x85"
                                   "b"),
            1U);  // U+0085, NEXT LINE
  EXPECT_FALSE(find_control_character("a\xC2\xA0"
                                      "b")
                   .has_value());  // U+00A0 is not one
  EXPECT_FALSE(find_control_character("tail\xC2").has_value());
}

}  // namespace
}  // namespace tgw::codecs
