#include "infra/sink/copy_text.hpp"

#include <gtest/gtest.h>

namespace tgw::infra::sink {
namespace {

position_row row(const std::string& id, std::int64_t ts_ms) {
  position_row r;
  r.stream_id = id;
  r.stored_ms = 1;
  r.imei = "356307042441013";
  r.codec = "8";
  r.ts_ms = ts_ms;
  r.latitude_e7 = -546992512;
  r.longitude_e7 = 252616688;
  r.io = "{}";
  r.io_named = "{}";
  return r;
}

TEST(CopyText, ALineARowWithEveryColumnInOrder) {
  position_row r = row("1700000001000-0", 1700000000123);
  r.generation = 5;
  EXPECT_EQ(copy_text({r, row("1-1", 0)}),
            "1700000001000-0\t1970-01-01T00:00:00.001Z\t356307042441013\t8\t"
            "2023-11-14T22:13:20.123Z\t0\t-54.6992512\t25.2616688\t0\t0\t0\t0\t0\t5\t{}\t{}\t\\N\n"
            "1-1\t1970-01-01T00:00:00.001Z\t356307042441013\t8\t1970-01-01T00:00:00.000Z\t0\t"
            "-54.6992512\t25.2616688\t0\t0\t0\t0\t0\t\\N\t{}\t{}\t\\N\n");
}

TEST(CopyText, EscapesWhatCopyTextFormatTreatsAsSyntax) {
  position_row r = row("1-0", 0);
  r.codec.reset();
  r.io = "{\"1\":\"a\\\\b\"}";
  r.extra = "x\ny\rz";
  const std::string text = copy_text({r});
  EXPECT_NE(text.find("\t\\N\t1970-01-01T00:00:00.000Z\t"), std::string::npos) << text;
  EXPECT_NE(text.find("{\"1\":\"a\\\\\\\\b\"}"), std::string::npos) << text;
  EXPECT_NE(text.find("x\\ny\\rz\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace tgw::infra::sink
