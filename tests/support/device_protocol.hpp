#pragma once

// The device side of the protocol and the operator's HTTP probe, for tests that drive
// a real gateway over sockets: the IMEI handshake, reading and answering a Codec 12
// command, and GET on the metrics address.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codecs/avl_encode.hpp"
#include "codecs/command.hpp"
#include "codecs/imei.hpp"
#include "tests/support/test_device.hpp"

namespace tgw::test {

/// The handshake packet for `digits` (which must be a valid IMEI).
inline bytes handshake_packet(std::string_view digits) {
  codecs::imei id;
  (void)codecs::imei::parse(digits, id);
  bytes out;
  codecs::encode_imei_packet(id, out);
  return out;
}

/// The next command frame the gateway wrote to `d`, decoded to its text; nullopt if
/// none came within the socket's timeout or it did not decode.
inline std::optional<std::string> receive_command(const device& d) {
  auto head = d.receive(8);
  if (!head) return std::nullopt;
  const std::size_t length = (std::size_t{(*head)[4]} << 24) | (std::size_t{(*head)[5]} << 16) |
                             (std::size_t{(*head)[6]} << 8) | (*head)[7];
  auto rest = d.receive(length + 4);
  if (!rest) return std::nullopt;
  bytes frame = *head;
  frame.insert(frame.end(), rest->begin(), rest->end());
  codecs::command_message m;
  if (!codecs::decode_command_frame(frame, m).ok()) return std::nullopt;
  return std::string(m.payload_text());
}

/// Sends a Codec 12 response carrying `text`, as a device answering a command.
inline bool answer_command(const device& d, const std::string& text) {
  codecs::command_fields f;
  f.codec = codecs::codec_id::codec12;
  f.type = codecs::message_type::response;
  f.payload = codecs::as_bytes(text);
  bytes out;
  if (codecs::encode_command_frame(f, out) != codecs::errc::ok) return false;
  d.send(out);
  return true;
}

/// GET http://127.0.0.1:port/path, the whole response; empty when unreachable.
/// A Codec 8 Extended frame of `records` records one second apart from `t0` (ms), each
/// with four IO elements of 1, 2, 4 and 8 bytes.
inline bytes codec8e_packet(int records, std::uint64_t t0) {
  std::vector<codecs::avl_record_data> rs;
  for (int i = 0; i < records; ++i) {
    codecs::avl_record_data r;
    r.timestamp_ms = t0 + static_cast<std::uint64_t>(i) * 1000;
    r.priority = 1;
    r.io = {{239, 1, 1, {}}, {66, 2, 12345, {}}, {16, 4, 987654, {}}, {78, 8, 1234, {}}};
    rs.push_back(r);
  }
  bytes out;
  (void)codecs::encode_avl_frame(codecs::codec_id::codec8e, rs, out);
  return out;
}

inline std::string http_get(std::uint16_t port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request =
        "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    timeval tv{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buffer[4096];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;)
      out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

/// The value of the Prometheus sample line in `text` that starts with `series` (name,
/// labels and the space), or -1 when there is none.
inline double metric_value(const std::string& text, const std::string& series) {
  std::size_t at = 0;
  while ((at = text.find(series, at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') {
      const std::size_t end = text.find('\n', at);
      return std::stod(text.substr(at + series.size(), end - at - series.size()));
    }
    at += series.size();
  }
  return -1;
}

}  // namespace tgw::test
