#include "actors/ports/command_store.hpp"

#include <charconv>
#include <cstdio>

#include "codecs/command.hpp"
#include "codecs/imei.hpp"

namespace tgw::ports {

command_entry parse_command_entry(std::string entry_id, const std::vector<std::string>& fields,
                                  bool body_present, std::size_t max_payload,
                                  bool allow_control_characters) {
  command_entry e;
  e.entry_id = std::move(entry_id);
  if (!body_present) {
    e.malformed = "entry body deleted";
    return e;
  }
  const std::string* codec = nullptr;
  const std::string* expires = nullptr;
  bool has_command_id = false;
  bool has_imei = false;
  bool has_payload = false;
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
    const std::string& name = fields[i];
    const std::string& v = fields[i + 1];
    if (name == "command_id") {
      e.command_id = v;
      has_command_id = !v.empty();
    } else if (name == "target_imei") {
      e.target_imei = v;
      has_imei = !v.empty();
    } else if (name == "payload") {
      e.payload = v;
      has_payload = !v.empty();
    } else if (name == "codec") {
      codec = &v;
    } else if (name == "expires_at") {
      expires = &v;
    }
  }
  if (!has_command_id) {
    e.malformed = "missing field command_id";
  } else if (!has_imei) {
    e.malformed = "missing field target_imei";
  } else if (!codecs::valid_imei(e.target_imei)) {
    e.malformed = "bad target_imei (not 15 or 16 digits)";
  } else if (codec == nullptr || codec->empty()) {
    e.malformed = "missing field codec";
  } else if (*codec != "12" && *codec != "14") {
    e.malformed = "bad codec " + *codec;
  } else if (!has_payload) {
    e.malformed = "missing field payload";
  } else if (e.payload.size() > max_payload) {
    e.malformed = "payload over " + std::to_string(max_payload) + " bytes";
  } else if (const auto at = codecs::find_control_character(e.payload);
             at && !allow_control_characters) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(e.payload[*at]));
    e.malformed = std::string("control character ") + byte + " at byte " + std::to_string(*at) +
                  " of the payload (refused unless the gateway runs with "
                  "--allow-command-control-chars)";
    e.control_characters = true;
  }
  if (e.malformed.empty()) e.codec = *codec == "12" ? 12 : 14;
  if (e.malformed.empty() && expires != nullptr && !expires->empty()) {
    const char* end = expires->data() + expires->size();
    const auto [ptr, ec] = std::from_chars(expires->data(), end, e.expires_at);
    if (ec != std::errc{} || ptr != end || e.expires_at < 0) {
      e.expires_at = 0;
      e.malformed = "bad expires_at " + *expires;
    }
  }
  return e;
}

}  // namespace tgw::ports
