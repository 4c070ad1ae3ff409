#include <array>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <sys/wait.h>

namespace {

struct run_result {
  int exit_code = -1;
  std::string out;
};

// Runs the real `tgw` binary, so the test covers flag parsing and exit codes too.
run_result run_tgw(const std::string& args, const std::string& stdin_text = "") {
  const std::string command = stdin_text.empty() ? std::string(TGW_BINARY) + " " + args + " 2>&1"
                                                 : "printf '%b' '" + stdin_text + "' | " +
                                                       TGW_BINARY + " " + args + " 2>&1";
  run_result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

constexpr const char* wiki_codec8 =
    "000000000000003608010000016B40D8EA30010000000000000000000000000000000105021503010101425E0F01"
    "F10000601A014E0000000000000000010000C7CF";

TEST(DecodeCommand, PrintsTheDocumentedRecord) {
  const run_result r = run_tgw(std::string("decode ") + wiki_codec8);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(R"("timestamp":"2019-06-10T10:04:46.000Z")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"({"id":66,"size":2,"value":"24079"})"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"("ack":"00000001")"), std::string::npos) << r.out;
}

TEST(DecodeCommand, ReadsHexLinesFromStdin) {
  const run_result r =
      run_tgw("decode", std::string("# a comment\\n") + wiki_codec8 + "\\n\\n" + wiki_codec8);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(R"("input":1)"), std::string::npos) << r.out;
}

TEST(DecodeCommand, InvalidFrameGivesJsonErrorAndExitCodeOne) {
  std::string bad = wiki_codec8;
  bad.back() = '0';
  const run_result r = run_tgw("decode " + bad);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(R"("error":"bad_crc")"), std::string::npos) << r.out;
}

TEST(DecodeCommand, CrcIgnoreDecodesAndFlags) {
  std::string bad = wiki_codec8;
  bad.back() = '0';
  const run_result r = run_tgw("decode --crc ignore " + bad);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(R"("ok":false)"), std::string::npos) << r.out;
}

// The help reserves 2 for usage errors: an argument that is not hex is one, and
// nothing is decoded; a stdin line that is not hex is bad input, reported in line.
TEST(DecodeCommand, NonHexArgumentIsAUsageError) {
  const run_result r = run_tgw("decode " + std::string(wiki_codec8) + " zz");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("argument 2 is not hex: 'zz'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(R"("kind":"avl")"), std::string::npos) << r.out;
  const run_result line = run_tgw("decode", "zz\\n");
  EXPECT_EQ(line.exit_code, 1) << line.out;
  EXPECT_NE(line.out.find(R"("error":"bad_hex")"), std::string::npos) << line.out;
}

TEST(DecodeCommand, BadFlagsExitWithUsageError) {
  EXPECT_EQ(run_tgw("decode --crc sometimes 00").exit_code, 2);
  EXPECT_EQ(run_tgw("decode --no-such-flag").exit_code, 2);
  EXPECT_EQ(run_tgw("").exit_code, 2);
}

TEST(DecodeCommand, HelpListsTheFlags) {
  const run_result r = run_tgw("decode --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--crc"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--file"), std::string::npos) << r.out;
}

}  // namespace

namespace {

TEST(DecodeCommand, NamesTheIoElementsItsModelTableKnowsAndKeepsTheIds) {
  const run_result r = run_tgw(std::string("decode --names ") + wiki_codec8);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(R"({"id":21,"size":1,"value":"3","name":"gsm_signal","named":"3"})"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(R"({"id":66,"size":2,"value":"24079","name":"external_voltage",)"
                       R"("named":24.079,"unit":"V"})"),
            std::string::npos)
      << r.out;
  // Without --names the output is as before: ids and raw values only.
  const run_result plain = run_tgw(std::string("decode ") + wiki_codec8);
  EXPECT_EQ(plain.out.find("\"name\""), std::string::npos) << plain.out;
}

// A device's binary reply to a command (Codec 12 type 0x06): its bytes exactly as hex,
// no text, and the line ASCII.
TEST(DecodeCommand, ABinaryCodec12ReplyIsGivenAsItsBytes) {
  // Payload C5 01 1B 5B 32 4A FF 00 5A (9 bytes).
  const run_result r = run_tgw("decode 00000000000000110C010600000009C5011B5B324AFF005A0100006348");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(R"("payload_hex":"C5011B5B324AFF005A")"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("payload_text"), std::string::npos) << r.out;
  for (const char c : r.out) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7F)) << r.out;
}

TEST(DecodeCommand, AnUnknownModelIsAUsageError) {
  const run_result r = run_tgw(std::string("decode --names --model xyz ") + wiki_codec8);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("--model"), std::string::npos) << r.out;
}

}  // namespace
