// Every example of tests/data/teltonika_official.json, checked field by field against
// the values the documents give. The known-bad examples (see the vectors' notes and
// TELTONIKA_PROTOCOL.md section 9) must be refused with the precise error.

#include <gtest/gtest.h>

#include <cctype>
#include <exception>
#include <set>
#include <string>
#include <vector>

#include "codecs/command.hpp"
#include "tests/codecs/official_vector_checks.hpp"
#include "tests/codecs/test_support.hpp"

namespace tgw::codecs::official {
namespace {

std::uint8_t codec_of(const json& vector) {
  return static_cast<std::uint8_t>(std::stoul(vector.at("codec").get<std::string>(), nullptr, 16));
}

void check_vector(const json& vector) {
  const std::string name = vector.at("name").get<std::string>();
  expected_fields f(vector.at("expected"), name);
  const bytes data = test::from_hex(vector.at("hex").get<std::string>());
  const std::string codec = vector.at("codec").get<std::string>();
  const std::string transport = vector.at("transport").get<std::string>();

  if (name == "codec14_nack_response") {
    check_codec14_nack(data, f);
  } else if (name == "codec16_udp_wiki_example_as_published") {
    check_codec16_udp_as_published(data, f);
  } else if (name == "codec8e_udp_fm64_pdf_example_mislabelled") {
    check_codec8e_udp_mislabelled(data, f);
  } else if (name == "codec8_avl_array_fmxxxx_pdf_example_no_tcp_framing") {
    check_bare_avl_array(vector, data, f);
  } else if (name == "codec13_wiki_example_pre2021_8byte_timestamp") {
    check_codec13_eight_byte_timestamp(data, f);
  } else if (codec == "imei") {
    check_imei_handshake(data, f);
  } else if (is_avl_codec(codec_of(vector)) && transport == "tcp") {
    check_avl_tcp(data, codec_of(vector), f);
  } else if (is_avl_codec(codec_of(vector)) && transport == "udp") {
    check_avl_udp(data, codec_of(vector), f);
  } else if (is_command_codec(codec_of(vector)) && transport == "tcp") {
    check_command(data, codec_of(vector), f);
  } else {
    FAIL() << name << ": no check for codec " << codec << " over " << transport;
  }
  f.expect_all_checked();
}

std::vector<std::string> vector_names() {
  std::vector<std::string> names;
  try {
    for (const json& v : test::official_vectors()) names.push_back(v.at("name").get<std::string>());
  } catch (const std::exception&) {
    // OfficialVectorsFile.Loads reports the failure; registering no cases here keeps
    // test discovery working.
  }
  return names;
}

class OfficialVector : public ::testing::TestWithParam<std::string> {};

TEST_P(OfficialVector, MatchesTheDocument) {
  const json& vector = test::official_vector(GetParam());
  if (vector.at("hex").is_null()) {
    // Illustrative skeletons (elided data elements): nothing to decode.
    EXPECT_NE(vector.at("notes").get<std::string>().find("Illustrative"), std::string::npos);
    GTEST_SKIP() << GetParam() << " has no bytes: " << vector.at("notes").get<std::string>();
  }
  check_vector(vector);
}

INSTANTIATE_TEST_SUITE_P(Teltonika, OfficialVector, ::testing::ValuesIn(vector_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(OfficialVectorsFile, Loads) {
  const json& vectors = test::official_vectors();
  EXPECT_EQ(vectors.size(), 28U);
  std::set<std::string> names;
  for (const json& v : vectors)
    EXPECT_TRUE(names.insert(v.at("name").get<std::string>()).second) << v.at("name");
  // The documented errors must stay covered.
  for (const char* name : {"codec14_nack_response", "codec16_udp_wiki_example_as_published",
                           "codec8e_udp_fm64_pdf_example_mislabelled",
                           "codec8_avl_array_fmxxxx_pdf_example_no_tcp_framing",
                           "codec13_wiki_example_pre2021_8byte_timestamp"})
    EXPECT_TRUE(names.contains(name)) << name;
}

}  // namespace
}  // namespace tgw::codecs::official
