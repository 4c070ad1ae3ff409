#pragma once

// The checks of tests/data/teltonika_official.json: each vector against the values the
// documents give, field by field (official_vector_checks.cpp), and the known-bad
// examples refused with the precise error (official_vector_errata.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codecs/avl_decode.hpp"
#include "codecs/command.hpp"
#include "codecs/tcp_framer.hpp"
#include "tests/codecs/hex.hpp"

namespace tgw::codecs::official {

using json = nlohmann::json;
using bytes = std::vector<std::uint8_t>;

inline std::string describe(const decode_status& s) {
  return std::string(to_string(s.code)) + " at " + std::to_string(s.offset);
}

/// "2019-06-10T10:04:46Z", with ".140" before the Z when there are milliseconds.
std::string utc_text(std::uint64_t ms);

/// The fields of one "expected" object. Each check marks the keys it used, and
/// expect_all_checked() fails on any key no check looked at, so a value the documents
/// give can never be skipped silently.
class expected_fields {
 public:
  expected_fields(const json& object, std::string where)
      : object_(object), where_(std::move(where)) {}

  [[nodiscard]] bool has(const std::string& key) const { return object_.contains(key); }
  const json& use(const std::string& key) {
    used_.insert(key);
    return object_.at(key);
  }
  std::int64_t integer(const std::string& key) { return use(key).get<std::int64_t>(); }
  std::uint64_t natural(const std::string& key) { return use(key).get<std::uint64_t>(); }
  std::string text(const std::string& key) { return use(key).get<std::string>(); }
  /// A number written in hex, with or without 0x: "0xCAFE", "1b", "C7CF".
  std::uint64_t hex_number(const std::string& key) { return std::stoull(text(key), nullptr, 16); }
  /// A byte string written in hex, in upper case.
  std::string hex_bytes(const std::string& key) { return test::upper_hex(text(key)); }
  /// Marks keys that are prose for humans rather than values.
  void prose(std::initializer_list<const char*> keys) {
    for (const char* k : keys) {
      EXPECT_TRUE(has(k)) << where_ << ": expected prose field '" << k << "'";
      used_.insert(k);
    }
  }
  [[nodiscard]] const std::string& where() const { return where_; }

  void expect_all_checked() const {
    for (const auto& item : object_.items())
      EXPECT_TRUE(used_.contains(item.key()))
          << where_ << ": field '" << item.key() << "' = " << item.value().dump()
          << " is not checked by any test";
  }

 private:
  const json& object_;
  std::string where_;
  std::set<std::string> used_;
};

// --- Vectors as the documents give them (official_vector_checks.cpp) ----------------

/// Checks the documented records; `expected.records` may list only the first few.
void check_records(const avl_packet& p, expected_fields& f);
/// The framer must see a device frame of this kind (and so the session answers, or
/// does not answer, accordingly).
void expect_framed_as(std::span<const std::uint8_t> frame_bytes, frame_kind kind);
void check_imei_handshake(const bytes& packet, expected_fields& f);
void check_avl_tcp(const bytes& frame, std::uint8_t codec, expected_fields& f);
void check_avl_udp(const bytes& datagram, std::uint8_t codec, expected_fields& f);
/// Checks a Codec 12/13/14/15 frame; returns the decoded message for further checks.
command_message check_command(const bytes& frame, std::uint8_t codec, expected_fields& f,
                              crc_policy policy = crc_policy::strict);

// --- The documented errors (official_vector_errata.cpp) ------------------------------

void check_codec14_nack(const bytes& frame, expected_fields& f);
void check_codec16_udp_as_published(const bytes& datagram, expected_fields& f);
void check_codec8e_udp_mislabelled(const bytes& datagram, expected_fields& f);
void check_bare_avl_array(const json& vector, const bytes& data, expected_fields& f);
void check_codec13_eight_byte_timestamp(const bytes& frame, expected_fields& f);

}  // namespace tgw::codecs::official
