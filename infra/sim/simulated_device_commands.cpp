// The simulated device's answers to Codec 12 and Codec 14 commands, at once or after
// --reply-delay-ms.
#include "infra/sim/simulated_device.hpp"

#include <string>
#include <string_view>

#include "codecs/command.hpp"

namespace tgw::infra::sim {

namespace {

using boost::system::error_code;

// The reply text with "{command}" replaced by the command's text.
void expand_reply(std::string_view pattern, std::string_view command, std::string& out) {
  constexpr std::string_view placeholder = "{command}";
  out.clear();
  std::size_t from = 0;
  for (std::size_t at = pattern.find(placeholder); at != std::string_view::npos;
       at = pattern.find(placeholder, from)) {
    out.append(pattern.substr(from, at - from));
    out.append(command);
    from = at + placeholder.size();
  }
  out.append(pattern.substr(from));
}

}  // namespace

void simulated_device::on_command(std::span<const std::uint8_t> frame) {
  codecs::command_message message;
  const codecs::decode_status status = codecs::decode_command_frame(frame, message);
  const bool command = status.ok() && message.type == codecs::message_type::command &&
                       (message.codec == 0x0C || message.codec == 0x0E);
  if (!command) {
    bump(env_.counters.commands_invalid);
    return;
  }
  bump(env_.counters.commands_received);
  const double ignore = env_.options.ignore_command_share;
  if (ignore > 0.0 && next_unit(motion_.rng) < ignore) {
    bump(env_.counters.commands_ignored);
    return;
  }
  // Commands are rare next to packets, so building the text may allocate.
  std::string text;
  expand_reply(env_.options.reply_text, message.payload_text(), text);
  codecs::command_fields reply;
  reply.type = codecs::message_type::response;
  reply.payload = codecs::as_bytes(text);
  if (message.codec == 0x0E) {
    reply.codec = codecs::codec_id::codec14;
    reply.device = imei_;
    if (!(message.device == imei_)) {
      // Codec 14 addressed to another IMEI: nACK with our IMEI and no payload.
      reply.type = codecs::message_type::nack;
      reply.payload = {};
    }
  }
  const bool delay = env_.options.reply_delay.count() > 0;
  if (codecs::encode_command_frame(reply, delay ? delayed_ : control_) != codecs::errc::ok) {
    bump(env_.counters.commands_invalid);
    return;
  }
  bump(reply.type == codecs::message_type::nack ? env_.counters.commands_nacked
                                                : env_.counters.commands_replied);
  if (!delay) {
    flush();
  } else if (!reply_timer_armed_) {
    // Replies that arrive while one waits go out with it.
    reply_timer_armed_ = true;
    reply_timer_.expires_after(env_.options.reply_delay);
    reply_timer_.async_wait([this, seq = conn_seq_](const error_code& ec) {
      if (ec || seq != conn_seq_ || phase_ == phase::done) return;
      release_delayed_replies();
    });
  }
}

void simulated_device::release_delayed_replies() {
  reply_timer_armed_ = false;
  control_.insert(control_.end(), delayed_.begin(), delayed_.end());
  delayed_.clear();
  flush();
}

}  // namespace tgw::infra::sim
