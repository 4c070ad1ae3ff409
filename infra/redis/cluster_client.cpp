#include "infra/redis/cluster_client.hpp"

#include <algorithm>
#include <cctype>

#include <charconv>

#include "infra/redis/command_keys.hpp"
#include "infra/redis/key_slot.hpp"

namespace tgw::infra::redis {
namespace {

// Enough for a slot that moves while a reshard runs and then is asked for.
constexpr int max_redirects = 5;

std::string address_text(const host_port& a) {
  return (a.host.find(':') != std::string::npos ? "[" + a.host + "]" : a.host) + ":" +
         std::to_string(a.port);
}

bool same_name(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) ==
                  std::toupper(static_cast<unsigned char>(y));
         });
}

bool is_io_error(const value& v) {
  return v.is_error() && is_transport(v.failure);
}

std::vector<std::string_view> views_of(const std::vector<std::string>& argv) {
  return {argv.begin(), argv.end()};
}

bool is_wait(const std::vector<std::string>& argv) {
  return !argv.empty() && same_name(argv.front(), "WAIT");
}

// A master's address with the login of the cluster's URL (a cluster has database 0
// only).
endpoint node_endpoint(const endpoint& cluster, const host_port& at) {
  endpoint e = cluster;
  e.cluster_nodes.clear();
  e.host = at.host;
  e.port = at.port;
  e.db = 0;
  return e;
}

}  // namespace

cluster_client::cluster_client(client_options opts) : opts_(std::move(opts)) {}

cluster_client::~cluster_client() = default;

void cluster_client::disconnect() noexcept {
  for (auto& n : nodes_)
    if (n) n->close();
}

std::string cluster_client::server() const {
  std::string out = "cluster";
  if (table_) out += " of " + std::to_string(table_->masters.size()) + " masters";
  return out + " (" + opts_.where.describe() + ")";
}

std::vector<host_port> cluster_client::masters() const {
  return table_ ? table_->masters : std::vector<host_port>{};
}

value cluster_client::command_on_master(std::size_t index, std::span<const std::string_view> argv) {
  std::string error;
  if (!ensure_connected(error)) return value::make_unreachable(error);
  if (index >= table_->masters.size())
    return value::make_error("ERR no master " + std::to_string(index) + " in the cluster's map");
  bool sent = false;
  return send_to(index, argv, sent);
}

std::optional<std::size_t> cluster_client::master_of(std::uint16_t slot) {
  std::string error;
  if (!ensure_connected(error)) return std::nullopt;
  std::int32_t owner = table_->owner[slot];
  if (owner == slot_table::uncovered) {
    refresh(error);
    if (!table_) return std::nullopt;
    owner = table_->owner[slot];
  }
  if (owner == slot_table::uncovered) return std::nullopt;
  if (nodes_.size() < table_->masters.size()) nodes_.resize(table_->masters.size());
  return static_cast<std::size_t>(owner);
}

std::string cluster_client::master_address(std::size_t index) const {
  return table_ && index < table_->masters.size() ? address_text(table_->masters[index])
                                                  : std::string("(no master)");
}

bool cluster_client::send_encoded_to(std::size_t index, std::string_view commands, value& failed,
                                     bool& sent) {
  sent = false;
  if (!table_ || index >= table_->masters.size()) {
    failed = value::make_unreachable("no such master in the map");
    return false;
  }
  // No reload here, even when the master is gone: it would renumber the masters that
  // other pipelines of the same round were written to before their replies are read.
  if (std::string error; !reach(index, error)) {
    failed = value::make_unreachable(error);
    return false;
  }
  sent = true;
  last_ = index;
  return node(index).send_encoded(commands, failed);
}

std::vector<value> cluster_client::receive_from(std::size_t index, std::size_t count) {
  return node(index).receive_replies(count);
}

void cluster_client::learn(const value& reply) {
  if (!table_) return;
  if (const std::optional<redirect> r = parse_redirect(reply); r && !r->ask) {
    table_->owner[r->slot] = static_cast<std::int32_t>(table_->index_of(r->to));
    if (nodes_.size() < table_->masters.size()) nodes_.resize(table_->masters.size());
  } else if (is_io_error(reply)) {
    std::string ignored;
    refresh(ignored);
  }
}

bool cluster_client::ensure_connected(std::string& error) {
  return table_.has_value() || refresh(error);
}

server_link& cluster_client::node(std::size_t index) {
  if (!nodes_[index])
    nodes_[index] = std::make_unique<server_link>(
        server_link::settings{opts_.connect_timeout, opts_.io_timeout, opts_.client_name});
  return *nodes_[index];
}

bool cluster_client::open_node(std::size_t index, std::string& error) {
  server_link& link = node(index);
  if (link.is_open()) return true;
  const endpoint at = node_endpoint(opts_.where, table_->masters[index]);
  return link.open(at, at.describe(), error);
}

// Asks the known masters first, then the seeds of the URL, and takes the first map.
bool cluster_client::refresh(std::string& error) {
  std::vector<host_port> ask;
  if (table_) ask = table_->masters;
  ask.insert(ask.end(), opts_.where.cluster_nodes.begin(), opts_.where.cluster_nodes.end());
  std::string tried;
  const auto now = std::chrono::steady_clock::now();
  for (const host_port& at : ask) {
    // A master that just refused a connection would refuse this one too.
    if (std::any_of(refused_.begin(), refused_.end(), [&](const refusal& r) {
          return r.at == at && now - r.when < rest_after_refusal;
        }))
      continue;
    server_link asking({opts_.connect_timeout, opts_.io_timeout, ""});
    const endpoint node_at = node_endpoint(opts_.where, at);
    std::string unreachable;
    const value reply = asking.open(node_at, node_at.describe(), unreachable)
                            ? asking.command({"CLUSTER", "SHARDS"})
                            : value::make_unreachable(unreachable);
    std::string why;
    if (reply.is_error() && reply.text.find("cluster support disabled") != std::string::npos) {
      error = address_text(at) +
              " is not a cluster node (cluster support disabled): use redis:// for a single "
              "server";
      return false;
    }
    std::optional<slot_table> table = parse_cluster_shards(reply, why, opts_.where.tls.enabled);
    if (!table) {
      tried += (tried.empty() ? "" : "; ") + address_text(at) + ": " + why;
      continue;
    }
    if (!table->complete()) {
      // The map of a cluster that is down (or being set up) is still the best there
      // is: commands for covered slots go on, the others get CLUSTERDOWN.
      tried += (tried.empty() ? "" : "; ") + address_text(at) + ": " +
               std::to_string(table->owner.size() - table->covered) + " slots without a master";
    }
    // Keep the connections of masters that stay.
    std::vector<std::unique_ptr<server_link>> kept(table->masters.size());
    if (table_)
      for (std::size_t i = 0; i < table_->masters.size() && i < nodes_.size(); ++i)
        for (std::size_t j = 0; j < table->masters.size(); ++j)
          if (nodes_[i] && table->masters[j] == table_->masters[i]) kept[j] = std::move(nodes_[i]);
    nodes_ = std::move(kept);
    table_ = std::move(table);
    ++generation_;
    if (last_ >= table_->masters.size()) last_ = 0;
    if (!table_->complete()) {
      error = "cluster map incomplete: " + tried;
      return table_->covered > 0;
    }
    return true;
  }
  error = "no cluster node answered CLUSTER SHARDS (" + tried + ")";
  return false;
}

bool cluster_client::reach(std::size_t index, std::string& error) {
  const host_port& at = table_->masters[index];
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(refused_, [&](const refusal& r) { return now - r.when >= rest_after_refusal; });
  const auto resting =
      std::find_if(refused_.begin(), refused_.end(), [&](const refusal& r) { return r.at == at; });
  if (resting != refused_.end()) {
    error = resting->why;
    return false;
  }
  if (open_node(index, error)) return true;
  refused_.push_back({at, now, error});
  return false;
}

value cluster_client::send_to(std::size_t index, std::span<const std::string_view> argv,
                              bool& sent) {
  server_link& n = node(index);
  std::string error;
  sent = false;
  if (!reach(index, error)) {
    // Nothing was sent: a failover may have replaced this master. Reload and say so;
    // the caller's slot lookup then sends to the new master.
    std::string ignored;
    refresh(ignored);
    return value::make_unreachable(error);
  }
  sent = true;
  value v = n.command(argv);
  if (is_io_error(v)) {
    std::string ignored;
    refresh(ignored);
  }
  return v;
}

value cluster_client::follow_ask(const redirect& r, std::span<const std::string_view> argv) {
  const std::size_t index = table_->index_of(r.to);
  if (nodes_.size() < table_->masters.size()) nodes_.resize(table_->masters.size());
  std::string error;
  if (!open_node(index, error)) return value::make_unreachable(error);
  server_link& n = node(index);
  std::vector<std::vector<std::string>> both = {{"ASKING"}, {argv.begin(), argv.end()}};
  std::vector<value> replies = n.pipeline(both);
  return replies.size() == 2 ? replies[1] : value::make_unreachable("no reply to ASKING");
}

value cluster_client::send_to_slot(std::uint16_t slot, std::span<const std::string_view> argv) {
  bool reloaded = false;
  for (int attempt = 0; attempt <= max_redirects; ++attempt) {
    std::int32_t owner = table_->owner[slot];
    if (owner == slot_table::uncovered) {
      std::string ignored;
      if (!reloaded) {
        reloaded = true;
        refresh(ignored);
        if (!table_) return value::make_unreachable(ignored);
        owner = table_->owner[slot];
      }
      if (owner == slot_table::uncovered)
        return value::make_error("CLUSTERDOWN Hash slot " + std::to_string(slot) +
                                 " has no master in the cluster's map");
    }
    const auto index = static_cast<std::size_t>(owner);
    bool sent = false;
    value v = send_to(index, argv, sent);
    if (is_io_error(v)) {
      // Sent again only when it never left: the master did not accept the connection,
      // and the map send_to reloaded may name its promoted replica now.
      if (!sent && !reloaded && table_->owner[slot] != owner) {
        reloaded = true;
        continue;
      }
      return v;
    }
    std::optional<redirect> r = parse_redirect(v);
    if (!r) {
      last_ = index;
      return v;
    }
    if (r->to.host.empty()) r->to.host = table_->masters[index].host;
    if (r->ask) {
      v = follow_ask(*r, argv);
      std::optional<redirect> again = parse_redirect(v);
      if (!again) return v;
      continue;
    }
    table_->owner[r->slot] = static_cast<std::int32_t>(table_->index_of(r->to));
    if (nodes_.size() < table_->masters.size()) nodes_.resize(table_->masters.size());
  }
  return value::make_error("CLUSTER too many redirections for slot " + std::to_string(slot));
}

value cluster_client::to_every_master(std::span<const std::string_view> argv) {
  // Loading a library may skip a master that does not answer: Redis replicates the
  // library to its replicas, so the replica that replaces a dead master has it. Any
  // other command (FLUSHALL) must reach every master.
  const bool loading =
      !argv.empty() && (same_name(argv[0], "FUNCTION") || same_name(argv[0], "SCRIPT"));
  std::optional<value> first;
  value unanswered;
  for (std::size_t i = 0; i < table_->masters.size(); ++i) {
    bool sent = false;
    value v = send_to(i, argv, sent);
    if (v.is_error()) {
      const bool io = is_io_error(v);
      // The master's address leads the text; the kind stays the reply's.
      if (io)
        v = value::make_transport_error(v.failure, address_text(table_->masters[i]) + ": " +
                                                       std::string(transport_reason(v.text)));
      else
        v.text = address_text(table_->masters[i]) + ": " + v.text;
      if (io && loading) {
        unanswered = std::move(v);
        continue;
      }
      return v;
    }
    if (!first) first = std::move(v);
  }
  return first ? std::move(*first) : unanswered;
}

value cluster_client::command(std::span<const std::string_view> argv) {
  std::string error;
  if (!ensure_connected(error)) return value::make_unreachable(error);
  const command_target target = route_of(argv);
  switch (target.route) {
    case command_route::by_key:
      return send_to_slot(key_slot(target.key), argv);
    case command_route::all_masters:
      return to_every_master(argv);
    case command_route::any_master:
      break;
  }
  bool sent = false;
  return send_to(last_ < table_->masters.size() ? last_ : 0, argv, sent);
}

std::vector<value> cluster_client::pipeline(const std::vector<std::vector<std::string>>& commands) {
  std::vector<value> replies(commands.size());
  std::string error;
  if (!ensure_connected(error)) {
    replies.assign(commands.size(), value::make_unreachable(error));
    return replies;
  }
  // Commands by master, in their order; the rest (no owner, every master) one by one.
  std::vector<std::vector<std::size_t>> by_master(table_->masters.size());
  std::vector<std::size_t> alone;
  // A keyless command (WAIT) goes with the keyed command before it, so that a WAIT
  // after a master's writes waits on that master.
  auto follow = static_cast<std::int32_t>(last_);
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const std::vector<std::string_view> argv = views_of(commands[i]);
    const command_target target = route_of(argv);
    std::int32_t owner = follow;
    if (target.route == command_route::by_key) {
      owner = table_->owner[key_slot(target.key)];
      follow = owner;
    }
    if (target.route == command_route::all_masters || owner == slot_table::uncovered ||
        static_cast<std::size_t>(owner) >= by_master.size()) {
      alone.push_back(i);
      continue;
    }
    by_master[static_cast<std::size_t>(owner)].push_back(i);
  }
  std::vector<std::size_t> again;  // redirected, or not sent
  bool reload = false;             // after the loop: the groups index the current map
  // Masters that refused the connection, and why: their commands were not sent.
  std::vector<std::pair<host_port, std::string>> unreachable;
  for (std::size_t m = 0; m < by_master.size(); ++m) {
    if (by_master[m].empty()) continue;
    server_link& n = node(m);
    std::string why;
    if (!reach(m, why)) {
      unreachable.emplace_back(table_->masters[m], why);
      again.insert(again.end(), by_master[m].begin(), by_master[m].end());
      continue;
    }
    std::vector<std::vector<std::string>> batch;
    batch.reserve(by_master[m].size());
    for (const std::size_t i : by_master[m]) batch.push_back(commands[i]);
    std::vector<value> got = n.pipeline(batch);
    // A WAIT answers for the writes before it on this master. One of them that moved
    // (MOVED, ASK) or failed is sent again elsewhere, where this WAIT does not follow
    // it: its count would confirm a write it never saw, so it is an error instead.
    bool moved_before = false;
    for (std::size_t k = 0; k < got.size(); ++k) {
      const std::size_t i = by_master[m][k];
      if (is_wait(commands[i]) && moved_before) {
        replies[i] = value::make_unreachable(
            "WAIT not counted: a write before it was redirected or failed on " +
            address_text(table_->masters[m]));
        continue;
      }
      if (parse_redirect(got[k])) {
        again.push_back(i);
        moved_before = true;
      } else {
        reload = reload || is_io_error(got[k]);
        moved_before = moved_before || is_io_error(got[k]);
        replies[i] = std::move(got[k]);
      }
    }
    last_ = m;
  }
  if (reload || !again.empty()) {
    // A master failed or moved slots: the redirected and unsent go by a fresh map.
    std::string ignored;
    refresh(ignored);
  }
  again.insert(again.end(), alone.begin(), alone.end());
  for (const std::size_t i : again) {
    // A WAIT without the writes it was meant to follow (their slot had no master in the
    // map, or they were all sent elsewhere) would count another connection's writes.
    if (is_wait(commands[i])) {
      replies[i] = value::make_unreachable("WAIT not counted: the writes before it had no master");
      continue;
    }
    const std::vector<std::string_view> argv = views_of(commands[i]);
    // A command whose slot the fresh map still gives to a master that refused us fails
    // at once: until a replica is promoted, trying each command again would only cost
    // one connection attempt each and hold up the commands for the other masters.
    const command_target target = route_of(argv);
    if (target.route == command_route::by_key && table_ && !unreachable.empty()) {
      const std::int32_t owner = table_->owner[key_slot(target.key)];
      if (owner != slot_table::uncovered &&
          static_cast<std::size_t>(owner) < table_->masters.size()) {
        const host_port& now = table_->masters[static_cast<std::size_t>(owner)];
        const auto down = std::find_if(unreachable.begin(), unreachable.end(),
                                       [&](const auto& u) { return u.first == now; });
        if (down != unreachable.end()) {
          replies[i] = value::make_unreachable(down->second);
          continue;
        }
      }
    }
    replies[i] = command(argv);
  }
  return replies;
}

std::size_t cluster_client::master_count() {
  std::string ignored;
  return ensure_connected(ignored) ? table_->masters.size() : 0;
}

}  // namespace tgw::infra::redis
