#include "infra/sink/copy_binary.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <optional>

namespace tgw::infra::sink {
namespace {

position_row row(const std::string& id, std::int64_t ts_ms) {
  position_row r;
  r.stream_id = id;
  r.stored_ms = 1;
  r.imei = "356307042441013";
  r.codec = "8";
  r.ts_ms = ts_ms;
  r.priority = 2;
  r.latitude_e7 = -546992512;
  r.longitude_e7 = 252616688;
  r.altitude = -12;
  r.angle = 359;
  r.satellites = 12;
  r.speed = 41;
  r.event_io = 239;
  r.io = "{}";
  r.io_named = "{}";
  return r;
}

// Reads a binary COPY stream back: per tuple, each field's bytes (nullopt for NULL).
class reader {
 public:
  explicit reader(const std::string& data) : data_(data) {}
  std::int64_t be(std::size_t n) {
    std::int64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(data_.at(at_++));
    // Sign-extend from n bytes.
    const int shift = static_cast<int>(64 - 8 * n);
    return (v << shift) >> shift;
  }
  std::optional<std::string> field() {
    const auto n = be(4);
    if (n < 0) return std::nullopt;
    std::string out = data_.substr(at_, static_cast<std::size_t>(n));
    at_ += static_cast<std::size_t>(n);
    return out;
  }
  std::string take(std::size_t n) {
    std::string out = data_.substr(at_, n);
    at_ += n;
    return out;
  }
  [[nodiscard]] bool done() const { return at_ == data_.size(); }

 private:
  const std::string& data_;
  std::size_t at_ = 0;
};

std::int64_t be_of(const std::string& bytes) {
  std::int64_t v = 0;
  for (const char c : bytes) v = (v << 8) | static_cast<unsigned char>(c);
  const int shift = static_cast<int>(64 - 8 * bytes.size());
  return (v << shift) >> shift;
}

TEST(CopyBinary, HeaderTuplesAndTrailerAsPostgresReadsThem) {
  position_row full = row("1700000001000-0", 1700000000123);
  full.generation = 5;
  full.extra = R"({"k":"tab	and \\ backslash"})";
  position_row bare = row("1-1", 0);
  bare.codec.reset();
  const std::string data = copy_binary({full, bare});
  reader in(data);
  EXPECT_EQ(in.take(11), std::string("PGCOPY\n\377\r\n\0", 11));
  EXPECT_EQ(in.be(4), 0);  // flags
  EXPECT_EQ(in.be(4), 0);  // header extension

  EXPECT_EQ(in.be(2), 17);
  EXPECT_EQ(in.field(), "1700000001000-0");
  EXPECT_EQ(be_of(*in.field()), pg_timestamp(1));
  EXPECT_EQ(in.field(), "356307042441013");
  EXPECT_EQ(in.field(), "8");
  // 2023-11-14 22:13:20.123 UTC is 753315200123000 us after 2000-01-01.
  EXPECT_EQ(be_of(*in.field()), 753315200123000);
  EXPECT_EQ(be_of(*in.field()), 2);
  EXPECT_EQ(std::bit_cast<double>(be_of(*in.field())), -54.6992512);
  EXPECT_EQ(std::bit_cast<double>(be_of(*in.field())), 25.2616688);
  EXPECT_EQ(be_of(*in.field()), -12);
  EXPECT_EQ(be_of(*in.field()), 359);
  EXPECT_EQ(be_of(*in.field()), 12);
  EXPECT_EQ(be_of(*in.field()), 41);
  EXPECT_EQ(be_of(*in.field()), 239);
  EXPECT_EQ(be_of(*in.field()), 5);
  EXPECT_EQ(in.field(), std::string("\1{}"));
  EXPECT_EQ(in.field(), std::string("\1{}"));
  EXPECT_EQ(in.field(), "\1" + full.extra);  // Bytes as they are: nothing escaped.

  EXPECT_EQ(in.be(2), 17);
  EXPECT_EQ(in.field(), "1-1");
  (void)in.field();
  (void)in.field();
  EXPECT_EQ(in.field(), std::nullopt);  // codec
  EXPECT_EQ(be_of(*in.field()), pg_timestamp(0));
  for (int i = 0; i < 8; ++i) (void)in.field();
  EXPECT_EQ(in.field(), std::nullopt);  // generation
  (void)in.field();
  (void)in.field();
  EXPECT_EQ(in.field(), std::nullopt);  // extra

  EXPECT_EQ(in.be(2), -1);
  EXPECT_TRUE(in.done());
}

TEST(CopyBinary, NoRowsIsHeaderAndTrailerOnly) {
  EXPECT_EQ(copy_binary({}).size(), 11U + 8U + 2U);
}

}  // namespace
}  // namespace tgw::infra::sink
