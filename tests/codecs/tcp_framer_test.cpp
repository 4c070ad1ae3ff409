#include "codecs/tcp_framer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codecs/codec_id.hpp"
#include "codecs/command.hpp"
#include "tests/codecs/hex.hpp"
#include "tests/codecs/test_support.hpp"

namespace tgw::codecs {
namespace {

using bytes = std::vector<std::uint8_t>;

/// A frame copied out of the framer's buffer, so it can be kept across appends.
struct owned_frame {
  frame_kind kind = frame_kind::keepalive;
  std::uint8_t codec = 0;
  bytes data;

  friend bool operator==(const owned_frame&, const owned_frame&) = default;
  friend void PrintTo(const owned_frame& f, std::ostream* os) {
    PrintTo(f.kind, os);
    *os << " codec " << static_cast<int>(f.codec) << " " << test::to_hex(f.data);
  }
};

owned_frame own(const frame& f) {
  return {f.kind, f.codec, bytes(f.bytes.begin(), f.bytes.end())};
}

/// Takes every complete frame out of `framer`; returns the status that stopped it
/// (need_more, or a fault).
decode_status drain(tcp_framer& framer, std::vector<owned_frame>& out) {
  for (;;) {
    const frame_result r = framer.next();
    if (r.status.code != errc::ok) return r.status;
    EXPECT_EQ(r.status.offset, r.value.bytes.size());
    out.push_back(own(r.value));
  }
}

/// A byte stream and the frames it must split into.
struct stream {
  bytes data;
  std::vector<owned_frame> frames;

  void add(frame_kind kind, std::uint8_t codec, const bytes& frame) {
    data.insert(data.end(), frame.begin(), frame.end());
    frames.push_back({kind, codec, frame});
  }
  void add_frame(const bytes& frame) {
    const std::uint8_t codec = frame.at(tcp_frame_header);
    add(is_avl_codec(codec) ? frame_kind::avl : frame_kind::command, codec, frame);
  }
  void add_keepalive() { add(frame_kind::keepalive, 0, {0xFF}); }
};

/// Every official TCP frame (AVL and command) behind the official IMEI handshake, as a
/// device session would send them.
std::vector<bytes> official_tcp_frames() {
  std::vector<bytes> frames;
  for (const nlohmann::json& v : test::official_vectors()) {
    if (v.at("transport") != "tcp" || v.at("hex").is_null() || v.at("codec") == "imei") continue;
    frames.push_back(test::from_hex(v.at("hex").get<std::string>()));
  }
  for (const nlohmann::json& v : test::official_vectors())
    if (v.contains("derived_tcp_frame_hex"))
      frames.push_back(test::from_hex(v.at("derived_tcp_frame_hex").get<std::string>()));
  return frames;
}

stream official_stream() {
  stream s;
  s.add(frame_kind::imei, 0, test::official_bytes("imei_handshake_356307042441013"));
  for (const bytes& f : official_tcp_frames()) s.add_frame(f);
  return s;
}

TEST(TcpFramer, OfficialStreamHasEveryKindOfFrame) {
  const stream s = official_stream();
  // 17 TCP examples with bytes plus the framed FMXXXX array, behind the handshake.
  ASSERT_EQ(s.frames.size(), 19U);
  std::size_t avl = 0, command = 0;
  for (const owned_frame& f : s.frames) {
    avl += f.kind == frame_kind::avl;
    command += f.kind == frame_kind::command;
  }
  EXPECT_EQ(avl, 8U);
  EXPECT_EQ(command, 10U);
}

TEST(TcpFramer, SingleAppendGivesEveryFrame) {
  const stream s = official_stream();
  tcp_framer framer;
  EXPECT_TRUE(framer.expecting_imei());
  framer.append(s.data);
  // Every frame taken from one append stays valid until the next append.
  std::vector<frame> borrowed;
  frame_result r;
  while ((r = framer.next()).status.code == errc::ok) borrowed.push_back(r.value);
  EXPECT_EQ(r.status.code, errc::need_more);
  EXPECT_EQ(r.status.offset, s.data.size());
  std::vector<owned_frame> frames;
  for (const frame& f : borrowed) frames.push_back(own(f));
  EXPECT_EQ(frames, s.frames);
  EXPECT_FALSE(framer.expecting_imei());
  EXPECT_EQ(framer.buffered(), 0U);
  EXPECT_EQ(framer.stream_offset(), s.data.size());
}

TEST(TcpFramer, OneByteAtATime) {
  const stream s = official_stream();
  tcp_framer framer;
  std::vector<owned_frame> frames;
  for (std::size_t i = 0; i < s.data.size(); ++i) {
    framer.append(std::span(s.data).subspan(i, 1));
    const decode_status st = drain(framer, frames);
    ASSERT_EQ(st.code, errc::need_more) << "after byte " << i;
    ASSERT_EQ(st.offset, i + 1);
    // A frame comes out exactly when its last byte arrives, not before and not later.
    std::size_t ended = 0;
    for (std::size_t k = 0, end = 0; k < s.frames.size(); ++k) {
      end += s.frames[k].data.size();
      ended += end <= i + 1;
    }
    ASSERT_EQ(frames.size(), ended) << "after byte " << i;
    if (!frames.empty()) {
      ASSERT_EQ(frames.back(), s.frames[frames.size() - 1]);
    }
  }
  EXPECT_EQ(frames, s.frames);
}

TEST(TcpFramer, SplitAtEveryOffset) {
  const stream s = official_stream();
  for (std::size_t cut = 0; cut <= s.data.size(); ++cut) {
    tcp_framer framer;
    std::vector<owned_frame> frames;
    framer.append(std::span(s.data).first(cut));
    ASSERT_EQ(drain(framer, frames).code, errc::need_more) << cut;
    framer.append(std::span(s.data).subspan(cut));
    ASSERT_EQ(drain(framer, frames).code, errc::need_more) << cut;
    ASSERT_EQ(frames, s.frames) << "split at " << cut;
  }
}

TEST(TcpFramer, RandomSegmentationThroughPrepareAndCommit) {
  const stream s = official_stream();
  std::mt19937_64 rng(42);
  for (int round = 0; round < 300; ++round) {
    tcp_framer framer;
    std::vector<owned_frame> frames;
    std::size_t pos = 0;
    while (pos < s.data.size()) {
      // Ask for more room than arrives, as a socket read does.
      const std::size_t want = 1 + rng() % 300;
      const std::span<std::uint8_t> space = framer.prepare(want);
      ASSERT_GE(space.size(), want);
      const std::size_t got = std::min<std::size_t>(1 + rng() % want, s.data.size() - pos);
      std::memcpy(space.data(), s.data.data() + pos, got);
      framer.commit(got);
      pos += got;
      ASSERT_EQ(drain(framer, frames).code, errc::need_more);
    }
    ASSERT_EQ(frames, s.frames) << "round " << round;
  }
}

TEST(TcpFramer, ManyFramesInOneAppend) {
  const stream one = official_stream();
  stream s;
  s.add(frame_kind::imei, 0, one.frames.front().data);
  for (int copy = 0; copy < 50; ++copy)
    for (std::size_t i = 1; i < one.frames.size(); ++i) s.add_frame(one.frames[i].data);
  tcp_framer framer;
  framer.append(s.data);
  std::vector<owned_frame> frames;
  EXPECT_EQ(drain(framer, frames).code, errc::need_more);
  EXPECT_EQ(frames.size(), 1 + 50 * (one.frames.size() - 1));
  EXPECT_EQ(frames, s.frames);
}

TEST(TcpFramer, RandomAvlFramesRandomlySegmented) {
  std::mt19937_64 rng(8);
  stream s;
  s.add(frame_kind::imei, 0, test::official_bytes("imei_handshake_123456789012345_fmxxxx_doc"));
  for (int i = 0; i < 60; ++i) {
    const codec_id codec = test::avl_codecs[rng() % 3];
    bytes frame;
    ASSERT_EQ(encode_avl_frame(codec, test::random_records(rng, codec), frame), errc::ok);
    s.add_frame(frame);
    if (rng() % 4 == 0) s.add_keepalive();
  }
  for (int round = 0; round < 50; ++round) {
    tcp_framer framer;
    std::vector<owned_frame> frames;
    for (std::size_t pos = 0; pos < s.data.size();) {
      const std::size_t n = std::min<std::size_t>(1 + rng() % 700, s.data.size() - pos);
      framer.append(std::span(s.data).subspan(pos, n));
      pos += n;
      ASSERT_EQ(drain(framer, frames).code, errc::need_more);
    }
    ASSERT_EQ(frames, s.frames) << "round " << round;
  }
}

TEST(TcpFramer, KeepalivesBetweenFramesAreFrames) {
  const stream one = official_stream();
  stream s;
  s.add(frame_kind::imei, 0, one.frames.front().data);
  s.add_keepalive();
  for (std::size_t i = 1; i < one.frames.size(); ++i) {
    s.add_frame(one.frames[i].data);
    for (std::size_t k = 0; k < i % 3; ++k) s.add_keepalive();
  }
  for (std::size_t cut = 0; cut <= s.data.size(); cut += 7) {
    tcp_framer framer;
    std::vector<owned_frame> frames;
    framer.append(std::span(s.data).first(cut));
    ASSERT_EQ(drain(framer, frames).code, errc::need_more);
    framer.append(std::span(s.data).subspan(cut));
    ASSERT_EQ(drain(framer, frames).code, errc::need_more);
    ASSERT_EQ(frames, s.frames) << "split at " << cut;
  }
  const auto keepalives = std::count_if(s.frames.begin(), s.frames.end(), [](const auto& f) {
    return f.kind == frame_kind::keepalive && f.data == bytes{0xFF} && f.codec == 0;
  });
  EXPECT_GT(keepalives, 10);
}

TEST(TcpFramer, WithoutHandshake) {
  const bytes frame = test::official_bytes("codec8_tcp_wiki_example_1");
  tcp_framer framer(default_max_frame_size, false);
  EXPECT_FALSE(framer.expecting_imei());
  framer.append(frame);
  const frame_result r = framer.next();
  ASSERT_EQ(r.status.code, errc::ok);
  EXPECT_EQ(r.value.kind, frame_kind::avl);
  EXPECT_EQ(r.value.codec, 0x08);
  EXPECT_EQ(test::to_hex(r.value.bytes), test::to_hex(frame));
}

TEST(TcpFramer, ExpectingImeiUntilHandshakeReturned) {
  const bytes handshake = test::official_bytes("imei_handshake_356307042441013");
  tcp_framer framer;
  framer.append(std::span(handshake).first(16));
  EXPECT_EQ(framer.next().status.code, errc::need_more);
  EXPECT_TRUE(framer.expecting_imei());
  framer.append(std::span(handshake).subspan(16));
  const frame_result r = framer.next();
  ASSERT_EQ(r.status.code, errc::ok);
  EXPECT_EQ(r.value.kind, frame_kind::imei);
  EXPECT_EQ(r.value.bytes.size(), 17U);
  EXPECT_FALSE(framer.expecting_imei());
}

TEST(TcpFramer, SixteenDigitHandshake) {
  const bytes handshake = test::from_hex("001033353633303730343234343130313331");
  tcp_framer framer;
  framer.append(handshake);
  const frame_result r = framer.next();
  ASSERT_EQ(r.status.code, errc::ok);
  EXPECT_EQ(r.value.kind, frame_kind::imei);
  EXPECT_EQ(r.value.bytes.size(), 18U);
}

TEST(TcpFramer, EveryKnownCodecIsClassified) {
  for (const std::uint8_t codec :
       {std::uint8_t{0x08}, std::uint8_t{0x8E}, std::uint8_t{0x10}, std::uint8_t{0x0C},
        std::uint8_t{0x0D}, std::uint8_t{0x0E}, std::uint8_t{0x0F}}) {
    // The framer only delimits: the body need not decode.
    bytes frame = test::from_hex(
        "0000000000000003000100"
        "00000000");
    frame[8] = codec;
    tcp_framer framer(default_max_frame_size, false);
    framer.append(frame);
    const frame_result r = framer.next();
    ASSERT_EQ(r.status.code, errc::ok) << int{codec};
    EXPECT_EQ(r.value.codec, codec);
    EXPECT_EQ(r.value.kind, is_avl_codec(codec) ? frame_kind::avl : frame_kind::command);
  }
}

/// Feeds `data` one byte at a time and returns the first non-need_more status, with
/// the count of bytes appended when it appeared.
struct fault {
  decode_status status;
  std::size_t bytes_fed = 0;
  std::size_t buffered = 0;
  std::size_t frames = 0;
};

fault feed_until_fault(tcp_framer& framer, std::span<const std::uint8_t> data) {
  std::vector<owned_frame> frames;
  for (std::size_t i = 0; i < data.size(); ++i) {
    framer.append(data.subspan(i, 1));
    const decode_status s = drain(framer, frames);
    if (s.code != errc::need_more) return {s, i + 1, framer.buffered(), frames.size()};
  }
  return {{errc::need_more, data.size()}, data.size(), framer.buffered(), frames.size()};
}

bytes session_prefix() {
  bytes s = test::official_bytes("imei_handshake_356307042441013");
  const bytes f = test::official_bytes("codec8_tcp_wiki_example_2");
  s.insert(s.end(), f.begin(), f.end());
  return s;
}

TEST(TcpFramerErrors, BadPreambleAtFirstNonzeroByte) {
  const bytes prefix = session_prefix();
  const bytes good = test::official_bytes("codec8_tcp_wiki_example_1");
  for (std::size_t i = 0; i < 4; ++i) {
    bytes data = prefix;
    bytes bad = good;
    bad[i] = 0x01;
    data.insert(data.end(), bad.begin(), bad.end());
    tcp_framer framer;
    const fault f = feed_until_fault(framer, data);
    EXPECT_EQ(f.status.code, errc::bad_preamble) << i;
    EXPECT_EQ(f.status.offset, prefix.size() + i);
    // Refused as that byte arrives; the frames before it were delivered.
    EXPECT_EQ(f.bytes_fed, prefix.size() + i + 1);
    EXPECT_EQ(f.frames, 2U);
  }
}

TEST(TcpFramerErrors, GarbageInsteadOfHandshakeIsBadImeiLength) {
  for (const char* start : {"0000", "000E", "0011", "4745", "1603"}) {
    tcp_framer framer;
    const fault f = feed_until_fault(framer, test::from_hex(std::string(start) + "0301"));
    EXPECT_EQ(f.status.code, errc::bad_imei_length) << start;
    EXPECT_EQ(f.status.offset, 0U);
    EXPECT_EQ(f.bytes_fed, 2U);
  }
}

TEST(TcpFramerErrors, LengthAboveLimitRefusedOnHeaderAlone) {
  constexpr std::size_t limit = 2048;
  const bytes prefix = session_prefix();
  for (const char* header : {"0000000000000800", "00000000000007F5", "00000000FFFFFFFF"}) {
    bytes data = prefix;
    const bytes h = test::from_hex(header);
    data.insert(data.end(), h.begin(), h.end());
    // A body follows, but the framer must not wait for it.
    data.resize(data.size() + 4096, 0x08);
    tcp_framer framer(limit);
    const fault f = feed_until_fault(framer, data);
    EXPECT_EQ(f.status.code, errc::length_too_large) << header;
    EXPECT_EQ(f.status.offset, prefix.size() + 4);
    EXPECT_EQ(f.bytes_fed, prefix.size() + 8);
    EXPECT_LE(f.buffered, tcp_frame_header);
  }
}

TEST(TcpFramerErrors, FrameOfExactlyTheLimitIsAccepted) {
  constexpr std::size_t limit = 2048;
  bytes frame;
  const std::string payload(limit - 20, 'x');
  command_fields fields;
  fields.payload = as_bytes(payload);
  ASSERT_EQ(encode_command_frame(fields, frame), errc::ok);
  ASSERT_EQ(frame.size(), limit);
  {
    tcp_framer framer(limit, false);
    framer.append(frame);
    const frame_result r = framer.next();
    ASSERT_EQ(r.status.code, errc::ok);
    EXPECT_EQ(r.value.bytes.size(), limit);
  }
  {
    tcp_framer framer(limit - 1, false);
    framer.append(frame);
    const frame_result r = framer.next();
    EXPECT_EQ(r.status.code, errc::length_too_large);
    EXPECT_EQ(r.status.offset, 4U);
  }
}

TEST(TcpFramerErrors, LengthTooSmall) {
  const bytes prefix = session_prefix();
  for (const char* header : {"0000000000000000", "0000000000000001", "0000000000000002"}) {
    bytes data = prefix;
    const bytes h = test::from_hex(header);
    data.insert(data.end(), h.begin(), h.end());
    data.resize(data.size() + 16, 0x08);
    tcp_framer framer;
    const fault f = feed_until_fault(framer, data);
    EXPECT_EQ(f.status.code, errc::length_too_small) << header;
    EXPECT_EQ(f.status.offset, prefix.size() + 4);
    EXPECT_EQ(f.bytes_fed, prefix.size() + 8);
  }
}

TEST(TcpFramerErrors, UnknownCodec) {
  const bytes prefix = session_prefix();
  for (const std::uint8_t codec :
       {std::uint8_t{0x00}, std::uint8_t{0x07}, std::uint8_t{0x09}, std::uint8_t{0x0B},
        std::uint8_t{0x11}, std::uint8_t{0x8F}, std::uint8_t{0xFF}}) {
    bytes data = prefix;
    bytes frame = test::official_bytes("codec8_tcp_wiki_example_1");
    frame[tcp_frame_header] = codec;
    data.insert(data.end(), frame.begin(), frame.end());
    tcp_framer framer;
    const fault f = feed_until_fault(framer, data);
    EXPECT_EQ(f.status.code, errc::unknown_codec) << int{codec};
    EXPECT_EQ(f.status.offset, prefix.size() + tcp_frame_header);
    EXPECT_EQ(f.bytes_fed, prefix.size() + tcp_frame_header + 1);
  }
}

TEST(TcpFramerErrors, FaultsAreSticky) {
  const bytes prefix = session_prefix();
  bytes data = prefix;
  data.insert(data.end(), {0x00, 0x00, 0x42});
  tcp_framer framer;
  framer.append(data);
  std::vector<owned_frame> frames;
  const decode_status first = drain(framer, frames);
  ASSERT_EQ(first.code, errc::bad_preamble);
  EXPECT_EQ(first.offset, prefix.size() + 2);
  // Good bytes after a fault cannot resynchronise the stream.
  framer.append(test::official_bytes("codec8_tcp_wiki_example_1"));
  for (int i = 0; i < 3; ++i) {
    const frame_result r = framer.next();
    EXPECT_EQ(r.status.code, errc::bad_preamble);
    EXPECT_EQ(r.status.offset, first.offset);
    EXPECT_TRUE(r.value.bytes.empty());
  }
}

TEST(TcpFramerErrors, HandshakeFaultIsSticky) {
  tcp_framer framer;
  framer.append(test::from_hex("0003414243"));
  EXPECT_EQ(framer.next().status.code, errc::bad_imei_length);
  framer.append(test::official_bytes("imei_handshake_356307042441013"));
  EXPECT_EQ(framer.next().status.code, errc::bad_imei_length);
}

TEST(TcpFramerBuffer, SteadyStateReusesTheBuffer) {
  const stream s = official_stream();
  const std::span<const std::uint8_t> all(s.data);
  const std::size_t handshake = s.frames.front().data.size();
  tcp_framer framer;
  std::vector<owned_frame> frames;
  // Feeds the session after the handshake in 100-byte segments, as reads would.
  auto pass = [&] {
    frames.clear();
    for (std::size_t pos = handshake; pos < all.size(); pos += 100) {
      framer.append(all.subspan(pos, std::min<std::size_t>(100, all.size() - pos)));
      ASSERT_EQ(drain(framer, frames).code, errc::need_more);
    }
    ASSERT_EQ(frames.size(), s.frames.size() - 1);
  };
  framer.append(all.first(handshake));
  ASSERT_EQ(drain(framer, frames).code, errc::need_more);
  pass();
  const std::span<std::uint8_t> warm = framer.prepare(0);
  ASSERT_NE(warm.data(), nullptr);
  for (int round = 0; round < 3; ++round) {
    pass();
    const std::span<std::uint8_t> now = framer.prepare(0);
    EXPECT_EQ(now.data(), warm.data()) << "round " << round;
    EXPECT_EQ(now.size(), warm.size()) << "round " << round;
  }
}

TEST(TcpFramerBuffer, ShrinkKeepsPartialFrames) {
  const bytes frame = test::official_bytes("codec8e_tcp_wiki_example");
  tcp_framer framer(default_max_frame_size, false);
  framer.append(std::span(frame).first(20));
  framer.shrink();  // Something is buffered: a no-op.
  EXPECT_EQ(framer.buffered(), 20U);
  framer.append(std::span(frame).subspan(20));
  const frame_result r = framer.next();
  ASSERT_EQ(r.status.code, errc::ok);
  EXPECT_EQ(test::to_hex(r.value.bytes), test::to_hex(frame));
  framer.shrink();
  EXPECT_EQ(framer.buffered(), 0U);
  EXPECT_EQ(framer.prepare(0).size(), 0U);
  // And the framer still works afterwards.
  framer.append(frame);
  EXPECT_EQ(framer.next().status.code, errc::ok);
  EXPECT_EQ(framer.stream_offset(), 2 * frame.size());
}

TEST(TcpFramerBuffer, NeedMoreReportsStreamPosition) {
  const bytes frame = test::official_bytes("codec8_tcp_wiki_example_1");
  tcp_framer framer(default_max_frame_size, false);
  framer.append(frame);
  framer.append(std::span(frame).first(10));
  ASSERT_EQ(framer.next().status.code, errc::ok);
  EXPECT_EQ(framer.stream_offset(), frame.size());
  EXPECT_EQ(framer.buffered(), 10U);
  const frame_result r = framer.next();
  EXPECT_EQ(r.status.code, errc::need_more);
  EXPECT_EQ(r.status.offset, frame.size() + 10);
}

}  // namespace
}  // namespace tgw::codecs
