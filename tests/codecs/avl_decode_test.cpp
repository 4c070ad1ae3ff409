#include "codecs/avl_decode.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "codecs/avl_encode.hpp"
#include "codecs/byte_order.hpp"
#include "codecs/crc16.hpp"
#include "tests/codecs/hex.hpp"
#include "tests/codecs/test_support.hpp"

namespace tgw::codecs {
namespace {

using bytes = std::vector<std::uint8_t>;

/// The official TCP AVL frames, by vector name.
const char* const official_avl_frames[] = {
    "codec8_tcp_wiki_example_1",
    "codec8_tcp_wiki_example_2",
    "codec8_tcp_wiki_example_3_two_records",
    "codec8e_tcp_wiki_example",
    "codec16_tcp_wiki_example_two_records",
    "codec8_tcp_fmb1yx_pdf_example",
    "codec8e_tcp_fm64_pdf_example_with_nx",
};

/// Official frames plus random ones of every AVL codec.
std::vector<bytes> sample_frames() {
  std::vector<bytes> frames;
  for (const char* name : official_avl_frames) frames.push_back(test::official_bytes(name));
  std::mt19937_64 rng(1234);
  for (int i = 0; i < 30; ++i) {
    const codec_id codec = test::avl_codecs[i % 3];
    bytes frame;
    EXPECT_EQ(encode_avl_frame(codec, test::random_records(rng, codec, 3), frame), errc::ok);
    frames.push_back(std::move(frame));
  }
  return frames;
}

std::string describe(const decode_status& s) {
  return std::string(to_string(s.code)) + " at " + std::to_string(s.offset);
}

TEST(AvlDecode, WikiCodec8FirstExample) {
  const bytes frame = test::official_bytes("codec8_tcp_wiki_example_1");
  avl_packet packet;
  const decode_status status = decode_avl_frame(frame, packet);
  ASSERT_EQ(status.code, errc::ok) << describe(status);
  EXPECT_EQ(status.offset, frame.size());
  EXPECT_EQ(packet.codec, 0x08);
  ASSERT_EQ(packet.records.size(), 1U);
  EXPECT_EQ(packet.records[0].timestamp_ms, 1560161086000U);
  EXPECT_EQ(packet.io.size(), 5U);
  EXPECT_TRUE(packet.has_crc);
  EXPECT_TRUE(packet.crc_ok());
  EXPECT_EQ(packet.crc_field, 0xC7CFU);
  EXPECT_EQ(packet.crc_computed, 0xC7CF);
}

TEST(AvlDecode, PacketBorrowsTheFrame) {
  const bytes frame = test::official_bytes("codec8_tcp_fmb1yx_pdf_example");
  avl_packet packet;
  ASSERT_TRUE(decode_avl_frame(frame, packet).ok());
  EXPECT_EQ(packet.bytes.data(), frame.data());
  EXPECT_EQ(packet.bytes.size(), frame.size());
  // Each fixed value's offset points at its big-endian bytes in the frame.
  for (const io_element& e : packet.io) {
    ASSERT_FALSE(e.variable);
    const auto raw = packet.value_bytes(e);
    ASSERT_EQ(raw.size(), e.size);
    EXPECT_EQ(load_be(raw.data(), e.size), e.value) << "io " << e.id;
    EXPECT_EQ(raw.data(), frame.data() + e.offset);
  }
}

TEST(AvlDecode, VariableElementsPointIntoTheFrame) {
  const bytes frame = test::official_bytes("codec8e_tcp_fm64_pdf_example_with_nx");
  avl_packet packet;
  ASSERT_TRUE(decode_avl_frame(frame, packet).ok());
  ASSERT_EQ(packet.records.size(), 1U);
  const auto io = packet.io_of(packet.records[0]);
  ASSERT_EQ(io.size(), 6U);
  const io_element& nx = io.back();
  EXPECT_TRUE(nx.variable);
  EXPECT_EQ(nx.id, 256);
  EXPECT_EQ(nx.size, 17);
  EXPECT_EQ(nx.value, 0U);
  // The NX element is the last thing before NumberOfData2 and the CRC.
  EXPECT_EQ(nx.offset + nx.size, frame.size() - 5);
  EXPECT_EQ(test::to_hex(packet.value_bytes(nx)), std::string(34, '0'));
}

TEST(AvlDecode, SignedFieldsAreTwosComplement) {
  bytes frame = test::official_bytes("codec8_tcp_wiki_example_1");
  // Record layout after the 10-byte frame head: timestamp 8, priority 1, lon 4, lat 4, alt 2.
  store_be32(frame.data() + 19, 0xD3E7'3AB0U);  // -739'820'880 = 73.982088 W
  store_be32(frame.data() + 23, 0x8000'0000U);
  store_be16(frame.data() + 27, 0xFFF6);
  test::recompute_crc(frame);
  avl_packet packet;
  ASSERT_TRUE(decode_avl_frame(frame, packet).ok());
  EXPECT_EQ(packet.records[0].longitude, -739'820'880);
  EXPECT_EQ(packet.records[0].latitude, INT32_MIN);
  EXPECT_EQ(packet.records[0].altitude, -10);
}

TEST(AvlDecode, DeclaredIoTotalIsReportedNotEnforced) {
  bytes frame = test::official_bytes("codec8_tcp_wiki_example_2");
  frame[35] = 9;  // N total: the decoder counts the groups, N is kept for diagnostics.
  test::recompute_crc(frame);
  avl_packet packet;
  ASSERT_TRUE(decode_avl_frame(frame, packet).ok());
  EXPECT_EQ(packet.records[0].declared_io_total, 9);
  EXPECT_EQ(packet.records[0].io_count, 3U);
}

TEST(AvlDecode, BareAvlDataArray) {
  const auto& v = test::official_vector("codec8_avl_array_fmxxxx_pdf_example_no_tcp_framing");
  const bytes data = test::from_hex(v.at("hex").get<std::string>());
  avl_packet packet;
  const decode_status s = decode_avl_data(data, 0, packet);
  ASSERT_EQ(s.code, errc::ok) << describe(s);
  EXPECT_EQ(s.offset, data.size());
  EXPECT_EQ(packet.records.size(), 4U);
  EXPECT_FALSE(packet.has_crc);
  EXPECT_TRUE(packet.crc_ok());
}

TEST(AvlDecode, DataStartingInsideTheInput) {
  const bytes frame = test::official_bytes("codec16_tcp_wiki_example_two_records");
  const std::span<const std::uint8_t> data = std::span(frame).first(frame.size() - 4);
  avl_packet packet;
  const decode_status s = decode_avl_data(data, tcp_frame_header, packet);
  ASSERT_EQ(s.code, errc::ok) << describe(s);
  EXPECT_EQ(s.offset, data.size());
  ASSERT_EQ(packet.records.size(), 2U);
  // Offsets count from the start of the input, not from `begin`.
  EXPECT_EQ(packet.io.front().offset, 8U + 2 + 24 + 2 + 1 + 1 + 1 + 2);
  EXPECT_EQ(decode_avl_data(data, data.size() + 1, packet).code, errc::truncated);
  EXPECT_EQ(decode_avl_data(data, data.size() - 2, packet).code, errc::truncated);
}

TEST(AvlDecodeAllocation, SameFrameTwiceReusesStorage) {
  const bytes frame = test::official_bytes("codec8_tcp_fmb1yx_pdf_example");
  avl_packet packet;
  ASSERT_TRUE(decode_avl_frame(frame, packet).ok());
  const auto* records = packet.records.data();
  const auto* io = packet.io.data();
  const std::size_t records_capacity = packet.records.capacity();
  const std::size_t io_capacity = packet.io.capacity();
  ASSERT_EQ(packet.io.size(), 30U);

  ASSERT_TRUE(decode_avl_frame(frame, packet).ok());
  EXPECT_EQ(packet.records.data(), records);
  EXPECT_EQ(packet.io.data(), io);
  EXPECT_EQ(packet.records.capacity(), records_capacity);
  EXPECT_EQ(packet.io.capacity(), io_capacity);
  EXPECT_EQ(packet.io.size(), 30U);
}

TEST(AvlDecodeAllocation, MixedFramesStopAllocatingOnceWarm) {
  // A connection's packet sees frames of many sizes; once it has held the most records
  // and IO elements, no later frame may make it allocate.
  const std::vector<bytes> frames = sample_frames();
  avl_packet packet;
  for (const bytes& frame : frames) ASSERT_TRUE(decode_avl_frame(frame, packet).ok());
  const auto* records = packet.records.data();
  const auto* io = packet.io.data();
  const std::size_t records_capacity = packet.records.capacity();
  const std::size_t io_capacity = packet.io.capacity();
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const bytes& frame = frames[(i * 7 + static_cast<std::size_t>(round)) % frames.size()];
      ASSERT_TRUE(decode_avl_frame(frame, packet).ok());
      ASSERT_EQ(packet.records.data(), records) << i;
      ASSERT_EQ(packet.io.data(), io) << i;
      ASSERT_EQ(packet.records.capacity(), records_capacity);
      ASSERT_EQ(packet.io.capacity(), io_capacity);
    }
  }
}

TEST(AvlDecodeErrors, EveryPrefixIsTruncated) {
  for (const bytes& frame : sample_frames()) {
    for (std::size_t n = 0; n < frame.size(); ++n) {
      avl_packet packet;
      const decode_status s = decode_avl_frame(std::span(frame).first(n), packet);
      ASSERT_EQ(s.code, errc::truncated) << "prefix " << n << " of " << test::to_hex(frame);
      ASSERT_EQ(s.offset, n);
    }
  }
}

TEST(AvlDecodeErrors, EveryPrefixOfTheDataIsTruncated) {
  // Without the frame's length field the records themselves must notice the end.
  for (const bytes& frame : sample_frames()) {
    const std::size_t data_end = frame.size() - tcp_frame_trailer;
    for (std::size_t n = tcp_frame_header; n < data_end; ++n) {
      avl_packet packet;
      const decode_status s = decode_avl_data(std::span(frame).first(n), tcp_frame_header, packet);
      ASSERT_EQ(s.code, errc::truncated) << "prefix " << n << " of " << test::to_hex(frame);
      ASSERT_LE(s.offset, n);
    }
  }
}

TEST(AvlDecodeErrors, TrailingGarbageAfterTheFrame) {
  for (const bytes& original : sample_frames()) {
    for (std::size_t extra = 1; extra <= 4; ++extra) {
      bytes frame = original;
      frame.resize(frame.size() + extra, 0x00);
      avl_packet packet;
      const decode_status s = decode_avl_frame(frame, packet);
      EXPECT_EQ(s.code, errc::length_mismatch) << extra;
      EXPECT_EQ(s.offset, 4U);
    }
  }
}

TEST(AvlDecodeErrors, TrailingGarbageInsideTheDeclaredLength) {
  for (const bytes& original : sample_frames()) {
    bytes frame = original;
    // One byte more after NumberOfData2, counted by the length and the CRC.
    frame.insert(frame.end() - 4, 0x01);
    test::fix_tcp_length(frame);
    test::recompute_crc(frame);
    avl_packet packet;
    const decode_status s = decode_avl_frame(frame, packet);
    EXPECT_EQ(s.code, errc::length_mismatch) << describe(s);
    EXPECT_EQ(s.offset, original.size() - 5);  // Where the records ended.
  }
}

TEST(AvlDecodeErrors, DeclaredLengthShorterThanFrame) {
  bytes frame = test::official_bytes("codec8_tcp_wiki_example_1");
  store_be32(frame.data() + 4, load_be32(frame.data() + 4) - 1);
  avl_packet packet;
  const decode_status s = decode_avl_frame(frame, packet);
  EXPECT_EQ(s.code, errc::length_mismatch);
  EXPECT_EQ(s.offset, 4U);
}

TEST(AvlDecodeErrors, NumberOfDataDisagrees) {
  for (const bytes& original : sample_frames()) {
    const std::size_t nod2 = original.size() - 5;
    for (const int delta : {1, -1, 100}) {
      bytes frame = original;
      frame[nod2] = static_cast<std::uint8_t>(frame[nod2] + delta);
      test::recompute_crc(frame);
      avl_packet packet;
      const decode_status s = decode_avl_frame(frame, packet);
      EXPECT_EQ(s.code, errc::record_count_mismatch) << describe(s);
      EXPECT_EQ(s.offset, nod2);
    }
  }
}

TEST(AvlDecodeErrors, NumberOfData1TooLargeRunsOutOfBytes) {
  bytes frame = test::official_bytes("codec8_tcp_wiki_example_3_two_records");
  frame[9] = 3;
  frame[frame.size() - 5] = 3;
  test::recompute_crc(frame);
  avl_packet packet;
  EXPECT_EQ(decode_avl_frame(frame, packet).code, errc::truncated);
}

TEST(AvlDecodeErrors, WrongCrcAtTheCrcField) {
  for (const bytes& original : sample_frames()) {
    const std::size_t crc_offset = original.size() - 4;
    for (std::size_t i = crc_offset; i < original.size(); ++i) {
      bytes frame = original;
      frame[i] ^= 0x01;  // The upper two bytes must be zero, the lower two the CRC.
      avl_packet packet;
      const decode_status s = decode_avl_frame(frame, packet);
      EXPECT_EQ(s.code, errc::bad_crc) << i;
      EXPECT_EQ(s.offset, crc_offset);
    }
    bytes frame = original;
    frame[crc_offset - 2] ^= 0x80;  // A data byte, inside a record.
    avl_packet packet;
    const decode_status s = decode_avl_frame(frame, packet);
    EXPECT_EQ(s.code, errc::bad_crc);
    EXPECT_EQ(s.offset, crc_offset);
    EXPECT_FALSE(packet.crc_ok());
  }
}

TEST(AvlDecodeErrors, IgnoredCrcStillDecodesAndReports) {
  bytes frame = test::official_bytes("codec8e_tcp_wiki_example");
  frame[frame.size() - 1] ^= 0xFF;
  avl_packet packet;
  const decode_status s = decode_avl_frame(frame, packet, crc_policy::ignore);
  ASSERT_EQ(s.code, errc::ok) << describe(s);
  EXPECT_FALSE(packet.crc_ok());
  EXPECT_EQ(packet.crc_computed, 0x2994);
  EXPECT_EQ(packet.crc_field, 0x2994U ^ 0xFFU);
  EXPECT_EQ(packet.records.size(), 1U);
}

TEST(AvlDecodeErrors, IoCountLargerThanTheBytes) {
  struct tamper {
    const char* vector;
    std::size_t count_offset;  ///< N1 of the first record.
    std::size_t count_bytes;
  };
  // Frame head 10 bytes, GPS element 24, then event id, [generation type], N total.
  for (const tamper& t : {tamper{"codec8_tcp_wiki_example_2", 10 + 24 + 1 + 1, 1},
                          tamper{"codec8e_tcp_wiki_example", 10 + 24 + 2 + 2, 2},
                          tamper{"codec16_tcp_wiki_example_two_records", 10 + 24 + 2 + 1 + 1, 1}}) {
    bytes frame = test::official_bytes(t.vector);
    for (std::size_t i = 0; i < t.count_bytes; ++i) frame[t.count_offset + i] = 0xFF;
    test::recompute_crc(frame);
    avl_packet packet;
    const decode_status s = decode_avl_frame(frame, packet);
    EXPECT_EQ(s.code, errc::truncated) << t.vector << ": " << describe(s);
    EXPECT_EQ(s.offset, t.count_offset) << t.vector;
  }
}

TEST(AvlDecodeErrors, NxLengthLargerThanTheBytes) {
  const bytes original = test::official_bytes("codec8e_tcp_fm64_pdf_example_with_nx");
  avl_packet packet;
  ASSERT_TRUE(decode_avl_frame(original, packet).ok());
  const std::size_t value = packet.io.back().offset;  // id u16, length u16, value
  {
    bytes frame = original;
    store_be16(frame.data() + value - 2, 0xFFFF);
    test::recompute_crc(frame);
    const decode_status s = decode_avl_frame(frame, packet);
    EXPECT_EQ(s.code, errc::truncated) << describe(s);
    EXPECT_EQ(s.offset, value - 2);
  }
  {
    bytes frame = original;
    store_be16(frame.data() + value - 6, 2);  // NX: a second element that is not there.
    test::recompute_crc(frame);
    const decode_status s = decode_avl_frame(frame, packet);
    EXPECT_EQ(s.code, errc::truncated) << describe(s);
    EXPECT_EQ(s.offset, value + 17);
  }
}

TEST(AvlDecodeErrors, ZeroRecords) {
  for (const char* data : {"080000", "8E0000", "100000"}) {
    bytes frame = test::from_hex(std::string("0000000000000003") + data + "00000000");
    test::recompute_crc(frame);
    avl_packet packet;
    const decode_status s = decode_avl_frame(frame, packet);
    EXPECT_EQ(s.code, errc::zero_records) << data;
    EXPECT_EQ(s.offset, 9U);
  }
  EXPECT_EQ(crc16_ibm(test::from_hex("080000")), 0xC281);
}

TEST(AvlDecodeErrors, CommandFrameIsWrongCodec) {
  for (const char* name :
       {"codec12_getinfo_command", "codec12_getio_response", "codec13_wiki_example_current",
        "codec14_getver_command", "codec15_wiki_example_hello"}) {
    const bytes frame = test::official_bytes(name);
    avl_packet packet;
    const decode_status s = decode_avl_frame(frame, packet);
    EXPECT_EQ(s.code, errc::wrong_codec) << name << ": " << describe(s);
    EXPECT_EQ(s.offset, tcp_frame_header) << name;
  }
}

TEST(AvlDecodeErrors, UnknownCodec) {
  for (const std::uint8_t codec : {std::uint8_t{0x00}, std::uint8_t{0x07}, std::uint8_t{0x09},
                                   std::uint8_t{0x8F}, std::uint8_t{0xFF}}) {
    bytes frame = test::official_bytes("codec8_tcp_wiki_example_1");
    frame[tcp_frame_header] = codec;
    test::recompute_crc(frame);
    avl_packet packet;
    const decode_status s = decode_avl_frame(frame, packet);
    EXPECT_EQ(s.code, errc::unknown_codec) << int{codec};
    EXPECT_EQ(s.offset, tcp_frame_header);
  }
}

TEST(AvlDecodeErrors, CodecIsCheckedBeforeTheRecordCount) {
  // The codec byte comes first, so it is the fault to report even when NoD is 0 too.
  struct expectation {
    const char* data;
    errc code;
  };
  for (const auto& [data, code] :
       {expectation{"070000", errc::unknown_codec}, expectation{"FF0000", errc::unknown_codec},
        expectation{"0C0000", errc::wrong_codec}}) {
    bytes frame = test::from_hex(std::string("0000000000000003") + data + "00000000");
    test::recompute_crc(frame);
    avl_packet packet;
    const decode_status s = decode_avl_frame(frame, packet);
    EXPECT_EQ(s.code, code) << data << ": " << describe(s);
    EXPECT_EQ(s.offset, tcp_frame_header) << data;
  }
}

TEST(AvlDecodeErrors, BadPreamble) {
  for (std::size_t i = 0; i < 4; ++i) {
    bytes frame = test::official_bytes("codec8_tcp_wiki_example_1");
    frame[i] = 0x30;
    avl_packet packet;
    const decode_status s = decode_avl_frame(frame, packet);
    EXPECT_EQ(s.code, errc::bad_preamble);
    EXPECT_EQ(s.offset, i);
  }
}

TEST(AvlDecodeErrors, LengthTooSmall) {
  for (std::uint32_t length = 0; length < 3; ++length) {
    bytes frame(tcp_frame_header + length + tcp_frame_trailer, 0x08);
    store_be32(frame.data(), 0);
    store_be32(frame.data() + 4, length);
    avl_packet packet;
    const decode_status s = decode_avl_frame(frame, packet);
    EXPECT_EQ(s.code, errc::length_too_small) << length;
    EXPECT_EQ(s.offset, 4U);
  }
}

TEST(AvlDecodeErrors, HugeDeclaredLengthIsTruncatedNotOverflow) {
  bytes frame = test::official_bytes("codec8_tcp_wiki_example_1");
  store_be32(frame.data() + 4, 0xFFFF'FFFFU);
  avl_packet packet;
  const decode_status s = decode_avl_frame(frame, packet);
  EXPECT_EQ(s.code, errc::truncated);
  EXPECT_EQ(s.offset, frame.size());
}

TEST(AvlDecodeErrors, SingleByteCorruptionsDecodeConsistentlyOrFail) {
  // Any flipped byte of the data, with the CRC fixed up, either decodes to some packet
  // whose records re-encode to the same bytes, or is refused with a specific code.
  for (const bytes& original : sample_frames()) {
    for (std::size_t i = tcp_frame_header; i + tcp_frame_trailer < original.size(); ++i) {
      bytes frame = original;
      frame[i] ^= 0xA5;
      test::recompute_crc(frame);
      avl_packet packet;
      const decode_status s = decode_avl_frame(frame, packet);
      if (!s.ok()) {
        EXPECT_NE(s.code, errc::need_more);
        EXPECT_LT(s.offset, frame.size());
        continue;
      }
      bytes again;
      ASSERT_EQ(
          encode_avl_frame(static_cast<codec_id>(packet.codec), to_record_data(packet), again),
          errc::ok);
      // The only field the encoder derives instead of copying is N total.
      if (again != frame) {
        avl_packet reread;
        ASSERT_TRUE(decode_avl_frame(again, reread).ok());
        EXPECT_EQ(to_record_data(reread), to_record_data(packet)) << i;
      }
    }
  }
}

}  // namespace
}  // namespace tgw::codecs
