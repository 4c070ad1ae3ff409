#include "actors/commands/device_commands.hpp"

#include <array>

#include "codecs/command.hpp"

namespace tgw::actors::commands {
namespace {

resolved_command failure(command_entry entry, std::string reason) {
  return {std::move(entry), resolution{"failed", "", std::move(reason)}};
}

// Whether a Codec 14 reply names `target`, compared as the 8 BCD bytes on the wire: a
// 16-digit IMEI that starts with 0 reads back from them as its last 15 digits.
bool same_imei(const codecs::imei& replied, const std::string& target) {
  codecs::imei addressed;
  if (codecs::imei::parse(target, addressed) != codecs::errc::ok) return false;
  std::array<std::uint8_t, 8> a{};
  std::array<std::uint8_t, 8> b{};
  codecs::imei_to_bcd(replied, a);
  codecs::imei_to_bcd(addressed, b);
  return a == b;
}

}  // namespace

std::optional<resolved_command> device_commands::enqueue(command_entry entry) {
  // The bound counts the command in flight too: that is what the device still owes.
  if (queue_.size() + (in_flight_ ? 1 : 0) >= limit_)
    return failure(std::move(entry), "write_queue_full");
  queue_.push_back(std::move(entry));
  return std::nullopt;
}

std::optional<command_entry> device_commands::next(std::size_t avl_awaiting_ack, std::int64_t now_s,
                                                   std::vector<resolved_command>& failed) {
  if (in_flight_ || avl_awaiting_ack > 0) return std::nullopt;
  while (!queue_.empty()) {
    command_entry e = std::move(queue_.front());
    queue_.erase(queue_.begin());
    if (e.expires_at > 0 && now_s > e.expires_at) {
      failed.push_back(failure(std::move(e), "expired_before_delivery"));
      continue;
    }
    in_flight_ = std::make_unique<command_entry>(e);
    return e;
  }
  return std::nullopt;
}

std::vector<std::uint8_t> device_commands::encode(const command_entry& entry,
                                                  const codecs::imei& device, std::string& why) {
  codecs::command_fields fields;
  fields.codec = entry.codec == 14 ? codecs::codec_id::codec14 : codecs::codec_id::codec12;
  fields.type = codecs::message_type::command;
  fields.device = device;
  fields.payload = codecs::as_bytes(entry.payload);
  std::vector<std::uint8_t> out;
  const codecs::errc e = codecs::encode_command_frame(fields, out);
  if (e != codecs::errc::ok) {
    why = "cannot encode: " + std::string(codecs::to_string(e));
    out.clear();
  }
  return out;
}

std::optional<resolved_command> device_commands::on_reply(std::span<const std::uint8_t> frame) {
  if (!in_flight_) return std::nullopt;
  codecs::command_message m;
  if (!codecs::decode_command_frame(frame, m).ok()) return std::nullopt;
  const bool codec14 = m.codec == static_cast<std::uint8_t>(codecs::codec_id::codec14);
  const bool nack = codec14 && m.type == codecs::message_type::nack;
  if (m.type != codecs::message_type::response && !nack) return std::nullopt;
  // A Codec 14 ACK carries the command's answer as its payload, like Codec 12. A
  // failure keeps it too: the device's own words say what went wrong.
  std::string reply(m.payload_text());
  std::optional<resolved_command> out;
  if (codec14 != (in_flight_->codec == 14)) {
    // Codec 14 asks the device to check its IMEI first; a Codec 12/13 answer says that
    // check never ran, and a Codec 14 one to a Codec 12 command answers something else.
    out = failure(*in_flight_, "codec_mismatch");
    out->outcome.response = std::move(reply);
  } else if (nack) {
    out = failure(*in_flight_, "imei_mismatch");
  } else if (codec14 && !same_imei(m.device, in_flight_->target_imei)) {
    // An ACK in another device's name: not the answer of the device addressed.
    out = failure(*in_flight_, "imei_mismatch");
    out->outcome.response = std::move(reply);
  } else {
    out = resolved_command{*in_flight_, resolution{"responded", std::move(reply), ""}};
  }
  in_flight_.reset();
  return out;
}

std::optional<resolved_command> device_commands::on_timeout(const std::string& entry_id) {
  if (!in_flight_ || in_flight_->entry_id != entry_id) return std::nullopt;
  auto out = failure(std::move(*in_flight_), "timeout");
  in_flight_.reset();
  return out;
}

std::vector<resolved_command> device_commands::on_closed() {
  std::vector<resolved_command> out;
  if (in_flight_) out.push_back(failure(std::move(*in_flight_), "socket_closed"));
  in_flight_.reset();
  for (command_entry& e : queue_) out.push_back(failure(std::move(e), "socket_closed"));
  queue_.clear();
  return out;
}

}  // namespace tgw::actors::commands
