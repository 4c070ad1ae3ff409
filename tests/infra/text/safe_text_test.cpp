#include "infra/text/safe_text.hpp"

#include <gtest/gtest.h>

namespace tgw::infra {
namespace {

TEST(SafeText, ValidUtf8IsWellFormedUtf8Only) {
  EXPECT_TRUE(valid_utf8(""));
  EXPECT_TRUE(
      valid_utf8("FW:1.2 \xC2\xB0"
                 "C \xE2\x82\xAC \xF0\x9F\x9B\xB0"));
  EXPECT_TRUE(valid_utf8(std::string("a\0b", 3)));
  EXPECT_FALSE(valid_utf8("\xC5"));              // truncated
  EXPECT_FALSE(valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(valid_utf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(valid_utf8("\xFF"));
}

TEST(SafeText, TerminalSafeEscapesEveryByteATerminalWouldActOn) {
  EXPECT_EQ(terminal_safe("FW:1.2 \xC2\xB0"
                          "C"),
            "FW:1.2 \xC2\xB0"
            "C");
  EXPECT_EQ(terminal_safe("\x1B[2J\r\n\t"), "\\x1b[2J\\x0d\\x0a\\x09");
  EXPECT_EQ(terminal_safe("\x7F"), "\\x7f");
  EXPECT_EQ(terminal_safe("\xC2\x9B"), "\\xc2\\x9b");  // C1 CSI, as UTF-8
  EXPECT_EQ(terminal_safe("\xC5\x01\xFF"), "\\xc5\\x01\\xff");
  EXPECT_EQ(terminal_safe("a\\x41"), "a\\\\x41");  // a backslash cannot fake an escape
  EXPECT_EQ(terminal_safe(std::string("\0", 1)), "\\x00");
}

}  // namespace
}  // namespace tgw::infra
