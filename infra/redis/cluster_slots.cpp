#include "infra/redis/cluster_slots.hpp"

#include <charconv>

#include "infra/redis/key_slot.hpp"

namespace tgw::infra::redis {
namespace {

// A node's address as clients should use it: its announced endpoint, or its ip when
// the endpoint is unknown ("?") or empty; its TLS port for a TLS client.
std::optional<host_port> node_address(const value& node, bool tls) {
  const value* endpoint = map_field(node, "endpoint");
  const value* ip = map_field(node, "ip");
  const value* port = tls && map_field(node, "tls-port") != nullptr ? map_field(node, "tls-port")
                                                                    : map_field(node, "port");
  if (port == nullptr) return std::nullopt;
  host_port out;
  if (endpoint != nullptr && !endpoint->text.empty() && endpoint->text != "?")
    out.host = endpoint->text;
  else if (ip != nullptr && !ip->text.empty())
    out.host = ip->text;
  else
    return std::nullopt;
  const auto p = port->as_int();
  if (!p || *p <= 0 || *p > 65535) return std::nullopt;
  out.port = static_cast<std::uint16_t>(*p);
  return out;
}

}  // namespace

std::size_t slot_table::index_of(const host_port& address) {
  for (std::size_t i = 0; i < masters.size(); ++i)
    if (masters[i] == address) return i;
  masters.push_back(address);
  return masters.size() - 1;
}

std::optional<slot_table> parse_cluster_shards(const value& reply, std::string& error, bool tls) {
  if (!reply.is_array()) {
    error = reply.is_error() ? reply.text : "CLUSTER SHARDS: not an array";
    return std::nullopt;
  }
  slot_table table;
  table.owner.assign(cluster_slots, slot_table::uncovered);
  for (const value& shard : reply.elements) {
    const value* slots = map_field(shard, "slots");
    const value* nodes = map_field(shard, "nodes");
    if (slots == nullptr || nodes == nullptr || !slots->is_array() || !nodes->is_array() ||
        slots->elements.size() % 2 != 0) {
      error = "CLUSTER SHARDS: a shard without slots and nodes";
      return std::nullopt;
    }
    if (slots->elements.empty()) continue;  // a master with no slots (yet) serves nothing
    std::optional<host_port> master;
    for (const value& node : nodes->elements) {
      const value* role = map_field(node, "role");
      if (role != nullptr && role->text == "master") master = node_address(node, tls);
    }
    if (!master) continue;  // no master known for these slots: they stay uncovered
    const auto index = static_cast<std::int32_t>(table.index_of(*master));
    for (std::size_t i = 0; i < slots->elements.size(); i += 2) {
      const auto from = slots->elements[i].as_int();
      const auto to = slots->elements[i + 1].as_int();
      if (!from || !to || *from < 0 || *to >= cluster_slots || *from > *to) {
        error = "CLUSTER SHARDS: a bad slot range";
        return std::nullopt;
      }
      for (auto s = *from; s <= *to; ++s) {
        if (table.owner[static_cast<std::size_t>(s)] == slot_table::uncovered) ++table.covered;
        table.owner[static_cast<std::size_t>(s)] = index;
      }
    }
  }
  return table;
}

std::optional<redirect> parse_redirect(const value& reply) {
  if (!reply.is_error()) return std::nullopt;
  redirect r;
  std::string_view text = reply.text;
  if (text.starts_with("MOVED ")) {
    text.remove_prefix(6);
  } else if (text.starts_with("ASK ")) {
    r.ask = true;
    text.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const auto space = text.find(' ');
  const auto colon = text.rfind(':');
  if (space == std::string_view::npos || colon == std::string_view::npos || colon < space)
    return std::nullopt;
  const std::string_view slot = text.substr(0, space);
  const std::string_view port = text.substr(colon + 1);
  std::uint32_t s = 0;
  std::uint32_t p = 0;
  if (std::from_chars(slot.data(), slot.data() + slot.size(), s).ec != std::errc{} ||
      s >= cluster_slots ||
      std::from_chars(port.data(), port.data() + port.size(), p).ec != std::errc{} || p == 0 ||
      p > 65535)
    return std::nullopt;
  r.slot = static_cast<std::uint16_t>(s);
  r.to.host = text.substr(space + 1, colon - space - 1);
  r.to.port = static_cast<std::uint16_t>(p);
  // An IPv6 address comes without brackets; an empty host means "the node you asked".
  return r;
}

}  // namespace tgw::infra::redis
