#include "infra/redis/server_mode.hpp"

namespace tgw::infra::redis {
namespace {

std::string address_of(const endpoint& e) {
  return e.unix_socket.empty() ? e.host + ":" + std::to_string(e.port) : e.unix_socket;
}

}  // namespace

std::string server_mode(connection& conn) {
  // HELLO 2 keeps the protocol and the login as they are, and answers field/value
  // pairs, "mode" among them; it is a connection command every ACL user may run.
  const value hello = conn.command({"HELLO", "2"});
  if (hello.is_array())
    for (std::size_t i = 0; i + 1 < hello.elements.size(); i += 2)
      if (hello.elements[i].text == "mode") return hello.elements[i + 1].text;
  const value info = conn.command({"INFO", "server"});
  constexpr std::string_view field = "redis_mode:";
  const auto at = info.text.find(field);
  if (info.is_error() || at == std::string::npos) return {};
  const auto end = info.text.find_first_of("\r\n", at);
  return info.text.substr(at + field.size(), end - at - field.size());
}

std::string wrong_url_scheme(connection& conn) {
  const endpoint& where = conn.settings().where;
  if (where.via_sentinel() || where.via_cluster()) return {};
  const std::string mode = server_mode(conn);
  const std::string address = address_of(where);
  if (mode == "cluster")
    return where.describe() +
           " is a node of a Redis Cluster: use "
           "redis+cluster://" +
           address;
  if (mode == "sentinel") {
    std::string masters;
    const value listed = conn.command({"SENTINEL", "MASTERS"});
    for (const value& m : listed.elements)
      for (std::size_t i = 0; i + 1 < m.elements.size(); i += 2)
        if (m.elements[i].text == "name")
          masters += (masters.empty() ? "" : ", ") + m.elements[i + 1].text;
    return where.describe() + " is a Redis Sentinel, not a data server: use redis+sentinel://" +
           address + "/MASTER" +
           (masters.empty() ? std::string() : " (it watches: " + masters + ")");
  }
  return {};
}

std::optional<std::int64_t> server_time_ms(connection& conn, std::string& error) {
  const value t = conn.command({"TIME"});
  if (t.is_error() || t.elements.size() != 2) {
    error = t.is_error() ? t.text : "TIME: unexpected reply";
    return std::nullopt;
  }
  const auto s = t.elements[0].as_int();
  const auto us = t.elements[1].as_int();
  if (!s || !us) {
    error = "TIME: unexpected reply";
    return std::nullopt;
  }
  return *s * 1000 + *us / 1000;
}

}  // namespace tgw::infra::redis
