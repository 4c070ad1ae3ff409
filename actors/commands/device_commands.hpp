#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "actors/ports/command_store.hpp"
#include "codecs/imei.hpp"

namespace tgw::actors::commands {

using ports::command_entry;
using ports::resolution;

/// A command and how it ended.
struct resolved_command {
  command_entry entry;
  resolution outcome;
};

/// The outbound-command state of one device session, without CAF or sockets so that
/// it can be tested alone. It holds a bounded FIFO queue and at most one command in
/// flight; the session asks it what to write and tells it what the device answered.
/// A command is handed out only while no AVL packet of the device awaits its ACK, so a
/// command never lands between a packet and its ACK on the wire.
class device_commands {
 public:
  explicit device_commands(std::size_t queue_limit) : limit_(queue_limit) {}

  /// Queues `entry`; returns its failure (write_queue_full) when the queue is full.
  std::optional<resolved_command> enqueue(command_entry entry);

  /// The next command to write, if one may go now: none in flight, none waiting for an
  /// AVL ACK. Expired queued commands are moved to `failed` on the way.
  std::optional<command_entry> next(std::size_t avl_awaiting_ack, std::int64_t now_s,
                                    std::vector<resolved_command>& failed);

  /// The frame to write for `entry` (Codec 12, or 14 with `device`); empty with
  /// `why` set if it cannot be encoded.
  static std::vector<std::uint8_t> encode(const command_entry& entry, const codecs::imei& device,
                                          std::string& why);

  /// A Codec 12/13/14 frame from the device. Resolves the command in flight if the frame
  /// answers it: a Codec 12/13 response to a Codec 12 command, or a Codec 14 ACK naming
  /// the command's IMEI, is responded with its text; a Codec 14 nACK, or an ACK naming
  /// another IMEI, failed/imei_mismatch; an answer in the other codec family than the
  /// command's, failed/codec_mismatch (a failure keeps the reply's text). nullopt when
  /// nothing is in flight or the frame is not an answer.
  std::optional<resolved_command> on_reply(std::span<const std::uint8_t> frame);

  /// The response timeout of command `entry_id` fired; resolves it if still in flight.
  std::optional<resolved_command> on_timeout(const std::string& entry_id);

  /// The socket closed: every command in flight or queued fails with socket_closed.
  std::vector<resolved_command> on_closed();

  [[nodiscard]] bool busy() const noexcept { return in_flight_ != nullptr; }
  [[nodiscard]] std::size_t queued() const noexcept { return queue_.size(); }

 private:
  std::size_t limit_;
  // A vector, not a deque: an empty deque already allocates its first block, and
  // every idle session would pay it. The queue is bounded and short.
  std::vector<command_entry> queue_;
  // On the heap, not inline: every idle session would carry an empty entry's five
  // strings (about 190 bytes) for a command it rarely has.
  std::unique_ptr<command_entry> in_flight_;
};

}  // namespace tgw::actors::commands
