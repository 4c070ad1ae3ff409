#include "codecs/errc.hpp"

namespace tgw::codecs {

std::string_view to_string(errc code) noexcept {
  switch (code) {
    case errc::ok:
      return "ok";
    case errc::need_more:
      return "need_more";
    case errc::bad_preamble:
      return "bad_preamble";
    case errc::length_too_large:
      return "length_too_large";
    case errc::length_too_small:
      return "length_too_small";
    case errc::length_mismatch:
      return "length_mismatch";
    case errc::unknown_codec:
      return "unknown_codec";
    case errc::wrong_codec:
      return "wrong_codec";
    case errc::bad_crc:
      return "bad_crc";
    case errc::record_count_mismatch:
      return "record_count_mismatch";
    case errc::zero_records:
      return "zero_records";
    case errc::truncated:
      return "truncated";
    case errc::bad_imei_length:
      return "bad_imei_length";
    case errc::bad_imei_digit:
      return "bad_imei_digit";
    case errc::bad_message_type:
      return "bad_message_type";
    case errc::bad_udp_header:
      return "bad_udp_header";
    case errc::value_out_of_range:
      return "value_out_of_range";
  }
  return "unknown";
}

}  // namespace tgw::codecs
