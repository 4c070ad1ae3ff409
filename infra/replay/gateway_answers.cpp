#include "infra/replay/gateway_answers.hpp"

namespace tgw::infra::replay {
namespace {

std::uint32_t be32(std::span<const std::uint8_t> s, std::size_t at) {
  return static_cast<std::uint32_t>(s[at]) << 24 | static_cast<std::uint32_t>(s[at + 1]) << 16 |
         static_cast<std::uint32_t>(s[at + 2]) << 8 | s[at + 3];
}

}  // namespace

gateway_answers read_answers(std::span<const std::uint8_t> stream) {
  gateway_answers a;
  if (stream.empty()) return a;
  a.handshake = stream[0] == 0x01 ? 1 : 0;
  std::size_t at = 1;
  while (at + 4 <= stream.size()) {
    const std::uint32_t word = be32(stream, at);
    // A command frame starts with a zero preamble; an ACK of zero records is never
    // sent, so a zero word is always a frame: preamble, length, body, CRC.
    if (word == 0) {
      if (at + 8 > stream.size()) break;
      const std::size_t length = be32(stream, at + 4);
      if (at + 12 + length > stream.size()) break;
      ++a.commands;
      at += 12 + length;
      continue;
    }
    a.acks.push_back(word);
    at += 4;
  }
  a.trailing = stream.size() - at;
  return a;
}

namespace {

// The [start, end) ranges of the command frames in a gateway-to-device stream, found
// the way read_answers() walks it.
std::vector<std::pair<std::size_t, std::size_t>> command_ranges(
    std::span<const std::uint8_t> stream) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t at = stream.empty() ? 0 : 1;
  while (at + 4 <= stream.size()) {
    if (be32(stream, at) != 0) {
      at += 4;
      continue;
    }
    if (at + 8 > stream.size()) break;
    const std::size_t end = at + 12 + be32(stream, at + 4);
    if (end > stream.size()) {
      out.emplace_back(at, stream.size());  // a frame cut short: still not an answer
      break;
    }
    out.emplace_back(at, end);
    at = end;
  }
  return out;
}

}  // namespace

std::vector<std::size_t> answer_bytes(std::span<const std::uint8_t> stream) {
  std::vector<std::size_t> prefix(stream.size() + 1, 0);
  const auto ranges = command_ranges(stream);
  std::size_t r = 0;
  for (std::size_t i = 0; i < stream.size(); ++i) {
    while (r < ranges.size() && i >= ranges[r].second) ++r;
    const bool in_command = r < ranges.size() && i >= ranges[r].first;
    prefix[i + 1] = prefix[i] + (in_command ? 0 : 1);
  }
  return prefix;
}

std::vector<std::uint8_t> without_commands(std::span<const std::uint8_t> stream) {
  std::vector<std::uint8_t> out;
  std::size_t at = 0;
  for (const auto& [start, end] : command_ranges(stream)) {
    out.insert(out.end(), stream.begin() + static_cast<std::ptrdiff_t>(at),
               stream.begin() + static_cast<std::ptrdiff_t>(start));
    at = end;
  }
  out.insert(out.end(), stream.begin() + static_cast<std::ptrdiff_t>(at), stream.end());
  return out;
}

std::string describe(const gateway_answers& a) {
  std::string out = a.handshake < 0    ? "no handshake reply"
                    : a.handshake == 1 ? "handshake 01"
                                       : "handshake 00";
  out += ", " + std::to_string(a.acks.size()) + " ACK" + (a.acks.size() == 1 ? "" : "s");
  if (!a.acks.empty()) {
    out += " (";
    for (std::size_t i = 0; i < a.acks.size(); ++i) {
      if (i == 8) {
        out += ",...";
        break;
      }
      if (i > 0) out += ',';
      out += std::to_string(a.acks[i]);
    }
    out += ')';
  }
  if (a.commands > 0) out += ", " + std::to_string(a.commands) + " command(s)";
  if (a.trailing > 0) out += ", " + std::to_string(a.trailing) + " trailing byte(s)";
  return out;
}

std::string describe(const connection_report& r) {
  std::string out = "connection " + std::to_string(r.number) + " (" + r.device +
                    (r.imei.empty() ? "" : ", " + r.imei) + "): ";
  if (r.as_recorded()) {
    out += "as recorded: " + describe(r.replayed);
    if (r.recorded.commands > 0)
      out += " (the recording's " + std::to_string(r.recorded.commands) +
             " command(s) came from an operator and are not replayed)";
    return out;
  }
  out += "DIFFERS: recorded " + describe(r.recorded) + "; replayed " + describe(r.replayed);
  for (const auto& p : r.problems) out += "; " + p;
  return out;
}

}  // namespace tgw::infra::replay
