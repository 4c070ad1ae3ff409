// Recording and reading captures: synthesised packets that other tools accept, TCP
// reassembly from captures in any order, rotation, and damaged files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "infra/capture/capture_files.hpp"
#include "infra/capture/capture_loader.hpp"
#include "infra/capture/capture_recorder.hpp"
#include "infra/capture/packet_parser.hpp"
#include "tests/support/replay_scenarios.hpp"

namespace tgw::infra::capture {
namespace {

using bytes = std::vector<std::uint8_t>;
namespace sc = test::scenarios;

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / ("capture_test_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

bytes stream_of(const recorded_connection& c, bool from_device) {
  bytes out;
  for (const auto& chunk : c.chunks)
    if (chunk.from_device == from_device)
      out.insert(out.end(), chunk.bytes.begin(), chunk.bytes.end());
  return out;
}

bytes concat(std::initializer_list<bytes> parts) {
  bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::uint32_t ones_sum(std::span<const std::uint8_t> b, std::uint32_t sum = 0) {
  for (std::size_t i = 0; i < b.size(); i += 2)
    sum += static_cast<std::uint32_t>(b[i] << 8 | (i + 1 < b.size() ? b[i + 1] : 0));
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum;
}

TEST(TcpSynth, ChecksumsVerifyForIpv4AndIpv6) {
  const bytes payload = {1, 2, 3, 4, 5};
  for (const char* address : {"10.0.0.1", "2001:db8::1"}) {
    tcp_segment_spec s;
    net::ip_endpoint::parse(address, 40000, s.from);
    net::ip_endpoint::parse(
        std::string(address).find(':') != std::string::npos ? "2001:db8::9" : "10.0.0.9", 5027,
        s.to);
    s.seq = 7;
    s.payload = payload;
    bytes packet;
    append_ethernet_tcp(packet, s);
    const std::size_t ip = 14;
    const std::size_t tcp = s.from.v6 ? ip + 40 : ip + 20;
    if (!s.from.v6) {
      EXPECT_EQ(ones_sum(std::span(packet).subspan(ip, 20)), 0xFFFFU);
    }
    const std::size_t n = s.from.v6 ? 16 : 4;
    std::uint32_t pseudo = ones_sum(std::span(s.from.address).first(n));
    pseudo = ones_sum(std::span(s.to.address).first(n), pseudo);
    pseudo += 6 + static_cast<std::uint32_t>(packet.size() - tcp);
    EXPECT_EQ(ones_sum(std::span(packet).subspan(tcp), pseudo), 0xFFFFU) << address;

    tcp_packet parsed;
    std::string why;
    ASSERT_EQ(parse_packet(1, packet, packet.size(), parsed, why), parse_outcome::tcp) << why;
    EXPECT_EQ(parsed.from, s.from);
    EXPECT_EQ(parsed.to, s.to);
    EXPECT_EQ(parsed.seq, 7U);
    EXPECT_EQ(bytes(parsed.payload.begin(), parsed.payload.end()), payload);
  }
}

TEST(CaptureLoader, ReassemblesOutOfOrderRetransmittedAndInterleavedStreams) {
  const auto path = (fresh_dir("reassembly") / "two.pcap").string();
  ASSERT_TRUE(sc::two_devices().write(path));
  const capture_set set = load_captures({path}, 5027);
  EXPECT_TRUE(set.errors.empty());
  ASSERT_EQ(set.connections.size(), 2U);
  const auto& a = set.connections[0];
  const auto& b = set.connections[1];
  EXPECT_EQ(a.device.to_string(), "10.0.0.1:40001");
  EXPECT_EQ(a.gateway.to_string(), "10.0.0.9:5027");
  const bytes p = sc::avl(codecs::codec_id::codec8e, 3, 1'699'999'000'000);
  EXPECT_EQ(stream_of(a, true), concat({sc::handshake("356307042441013"), p, p, {0xFF}}));
  EXPECT_EQ(stream_of(a, false), concat({{0x01}, sc::ack(3), sc::ack(3)}));
  EXPECT_EQ(stream_of(b, true),
            concat({sc::handshake("356307042441021"),
                    sc::avl(codecs::codec_id::codec8, 1, 1'699'999'100'000, true),
                    sc::avl(codecs::codec_id::codec8, 2, 1'699'999'200'000)}));
  EXPECT_EQ(a.closed, close_cause::device_fin);
  EXPECT_EQ(b.closed, close_cause::device_fin);
  EXPECT_TRUE(a.problems.empty());
  // The out-of-order packet becomes available whole when its first segment arrives.
  ASSERT_GE(a.chunks.size(), 3U);
  EXPECT_EQ(a.chunks[2].bytes, p);
  EXPECT_EQ(a.chunks[2].unix_us, sc::ms(12));
}

TEST(CaptureLoader, ReadsIpv6) {
  const auto path = (fresh_dir("ipv6") / "v6.pcap").string();
  ASSERT_TRUE(sc::ipv6_device().write(path));
  const capture_set set = load_captures({path}, 5027);
  ASSERT_EQ(set.connections.size(), 1U);
  EXPECT_EQ(set.connections[0].device.to_string(), "[2001:db8::1]:40003");
  EXPECT_EQ(stream_of(set.connections[0], false), concat({{0x01}, sc::ack(1), sc::ack(2)}));
}

TEST(CaptureLoader, NamesFileAndOffsetOfATruncatedRecordAndKeepsTheRest) {
  const auto path = (fresh_dir("truncated") / "cut.pcap").string();
  ASSERT_TRUE(sc::complete_then_cut().write(path));
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 20);
  const capture_set set = load_captures({path}, 5027);
  ASSERT_EQ(set.errors.size(), 1U);
  // The last record starts at its 16-byte header before the packet.
  const bytes last = sc::avl(codecs::codec_id::codec8, 4, 1'699'999'100'000);
  const auto record = 16 + 14 + 20 + 20 + last.size();
  EXPECT_NE(set.errors[0].find(path + ": packet "), std::string::npos) << set.errors[0];
  EXPECT_NE(set.errors[0].find("at byte offset " + std::to_string(size - record)),
            std::string::npos)
      << set.errors[0];
  ASSERT_EQ(set.connections.size(), 2U);
  EXPECT_EQ(set.connections[0].closed, close_cause::device_fin);
  EXPECT_EQ(stream_of(set.connections[0], false), concat({{0x01}, sc::ack(1)}));
  EXPECT_EQ(set.connections[1].closed, close_cause::none);
  EXPECT_EQ(stream_of(set.connections[1], true), sc::handshake("356307042441021"));
}

TEST(CaptureLoader, SkipsAMalformedPacketAndReportsItsNumber) {
  const auto path = (fresh_dir("malformed") / "bad.pcap").string();
  {
    pcap_file f;
    std::string error;
    ASSERT_TRUE(f.open(path, error));
    bytes bad(14 + 6, 0);
    bad[12] = 0x08;  // IPv4, but only 6 bytes of header
    ASSERT_TRUE(f.write(sc::ms(0), bad));
  }
  const capture_set set = load_captures({path, path + ".missing"}, 5027);
  ASSERT_EQ(set.errors.size(), 2U);
  EXPECT_NE(set.errors[0].find("packet 1 at byte offset 24: IPv4 header"), std::string::npos)
      << set.errors[0];
  EXPECT_NE(set.errors[1].find(".missing: cannot read"), std::string::npos) << set.errors[1];
}

TEST(CaptureFiles, RotatesBySizeCapsTheTotalAndStreamsSpanFiles) {
  const auto dir = fresh_dir("rotation");
  rotation_policy policy{dir, 4000, std::chrono::seconds{3600}, 12'000};
  bytes sent_by_device;
  {
    capture_files files(policy);
    files.open_connection(1, sc::ms(0), test::capture_builder::at("10.0.0.1", 40001),
                          test::capture_builder::at("10.0.0.9", 5027));
    files.data(1, sc::ms(1), true, sc::handshake("356307042441013"));
    for (int i = 0; i < 40; ++i) {
      const bytes p = sc::avl(
          codecs::codec_id::codec8, 3,
          std::uint64_t{1'699'999'000'000} + std::uint64_t{10'000} * static_cast<std::uint64_t>(i));
      files.data(1, sc::ms(2 + i), true, p);
      files.data(1, sc::ms(2 + i), false, sc::ack(3));
    }
    files.close_connection(1, sc::ms(100), true);
    files.flush();
    EXPECT_GT(files.payload_written(), 0U);
    EXPECT_EQ(files.payload_lost(), 0U);
  }
  std::vector<std::string> names;
  std::uintmax_t total = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().string());
    total += e.file_size();
  }
  std::sort(names.begin(), names.end());
  EXPECT_GE(names.size(), 3U);
  EXPECT_LE(total, 12'000U + 4000U);
  // The set that is left replays as one capture; the deleted head is simply absent.
  const capture_set set = load_captures(names, 5027);
  EXPECT_TRUE(set.errors.empty());
  ASSERT_EQ(set.connections.size(), 1U);
  EXPECT_EQ(set.connections[0].closed, close_cause::device_fin);
}

TEST(CaptureFiles, RotatesByAge) {
  const auto dir = fresh_dir("age");
  capture_files files(rotation_policy{dir, 1 << 20, std::chrono::seconds{10}, 1 << 30});
  files.open_connection(1, sc::ms(0), test::capture_builder::at("10.0.0.1", 40001),
                        test::capture_builder::at("10.0.0.9", 5027));
  files.data(1, sc::ms(11'000), true, bytes{0xFF});
  files.flush();
  EXPECT_EQ(files.files().size(), 2U);
}

TEST(CaptureRecorder, DropsAndCountsWhatDoesNotFitTheQueue) {
  const auto dir = fresh_dir("recorder");
  const recorder_counters counters{std::make_shared<std::atomic<std::uint64_t>>(0),
                                   std::make_shared<std::atomic<std::uint64_t>>(0)};
  {
    capture_recorder recorder(rotation_policy{dir}, queue_limits{100, 1000}, counters);
    const auto id = recorder.open(test::capture_builder::at("10.0.0.1", 40001),
                                  test::capture_builder::at("10.0.0.9", 5027));
    const bytes big(80, 0xAB);
    // The writer may drain between the two; at most one of them is dropped, and what
    // is not dropped is written.
    recorder.data(id, true, big);
    recorder.data(id, true, big);
    recorder.data(id, true, bytes(200, 0xCD));  // larger than the whole queue
    recorder.close(id, true);
  }
  EXPECT_GE(counters.dropped->load(), 200U);
  EXPECT_EQ(counters.dropped->load() + counters.bytes_written->load(), 360U);
  const auto files = capture_files(rotation_policy{dir}).files();
  ASSERT_EQ(files.size(), 1U);
  const capture_set set = load_captures({files[0].string()}, 5027);
  ASSERT_EQ(set.connections.size(), 1U);
}

}  // namespace
}  // namespace tgw::infra::capture
