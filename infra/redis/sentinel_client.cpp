#include "infra/redis/sentinel_client.hpp"

#include "infra/redis/link_errors.hpp"
#include "infra/redis/sentinel_watch.hpp"

namespace tgw::infra::redis {

sentinel_client::sentinel_client(client_options opts)
    : single_server_client(opts), opts_(std::move(opts)), watch_(sentinel_watch::of(opts_.where)) {}

sentinel_client::~sentinel_client() = default;

std::string sentinel_client::server() const {
  return "master " + opts_.where.master_name + " at " +
         (master_.host.empty() ? std::string("(unknown)")
                               : master_.host + ":" + std::to_string(master_.port));
}

bool sentinel_client::ensure_connected(std::string& error) {
  if (link_.is_open() && watch_->epoch() != epoch_) link_.close();
  if (link_.is_open()) return true;
  // Read before asking the sentinels: a switch announced after this is seen next time.
  epoch_ = watch_->epoch();
  endpoint target = opts_.where;
  if (!find_master(target, error)) return false;
  if (!link_.open(target, server(), error)) return false;
  // The sentinels' answer can be stale by a failover; ROLE is the server's own word.
  const value role = link_.command({"ROLE"});
  if (role.is_array() && !role.elements.empty() && role.elements.front().text == "master")
    return true;
  error = server() + ": ROLE says " +
          (role.is_array() && !role.elements.empty() ? role.elements.front().text : role.text) +
          ", not master (a failover in progress?)";
  link_.close();
  return false;
}

namespace {

// The master names a sentinel watches, for a message that a name is wrong.
std::string watched_names(server_link& sentinel) {
  std::string names;
  const value masters = sentinel.command({"SENTINEL", "MASTERS"});
  for (const value& m : masters.elements)
    if (const value* name = map_field(m, "name"); name != nullptr)
      names += (names.empty() ? "" : ", ") + name->text;
  return names.empty() ? "none" : names;
}

}  // namespace

// Asks every sentinel and follows the one with the highest configuration epoch: each
// failover raises it, so a sentinel that was down during the last one (and still names
// the old master, which may be back as an empty master until it is reconfigured) is
// outvoted by any that took part. A sentinel that does not know the name is not proof
// that none does. The error says which of three things went wrong: no sentinel
// answered, the addresses are not sentinels (a data server's port in the URL), or the
// name after the last / is not one they watch.
bool sentinel_client::find_master(endpoint& target, std::string& error) {
  const std::string& name = opts_.where.master_name;
  std::string tried;
  std::string not_sentinels;
  std::string unknown;
  std::int64_t best_epoch = -1;
  host_port best;
  for (const host_port& sentinel : opts_.where.sentinels) {
    endpoint at;
    at.host = sentinel.host;
    at.port = sentinel.port;
    at.tls = opts_.where.tls;
    const std::string where = sentinel.host + ":" + std::to_string(sentinel.port);
    server_link asking({opts_.connect_timeout, opts_.connect_timeout, ""});
    std::string unreachable;
    const value v = asking.open(at, at.describe(), unreachable)
                        ? asking.command({"SENTINEL", "MASTER", name})
                        : value::make_unreachable(unreachable);
    if (v.is_array()) {
      std::string ip;
      std::int64_t port = 0;
      std::int64_t epoch = -1;
      for (std::size_t i = 0; i + 1 < v.elements.size(); i += 2) {
        const std::string& field = v.elements[i].text;
        if (field == "ip") ip = v.elements[i + 1].text;
        if (field == "port") port = v.elements[i + 1].as_int().value_or(0);
        if (field == "config-epoch") epoch = v.elements[i + 1].as_int().value_or(-1);
      }
      if (!ip.empty() && port > 0 && port <= 65535 && epoch > best_epoch) {
        best_epoch = epoch;
        best = {ip, static_cast<std::uint16_t>(port)};
      }
      continue;
    }
    if (v.is_error() && v.text.find("No such master") != std::string::npos) {
      unknown += (unknown.empty() ? "" : "; ") + where + " watches " + watched_names(asking);
    } else if (v.is_error() && (v.text.starts_with("ERR unknown command") ||
                                v.text.starts_with("ERR unknown subcommand"))) {
      not_sentinels += (not_sentinels.empty() ? "" : ", ") + where;
    } else {
      tried += (tried.empty() ? "" : "; ") + where + ": " +
               (!v.is_error()             ? std::string("unexpected reply")
                : is_transport(v.failure) ? std::string(transport_reason(v.text))
                                          : v.text);
    }
  }
  if (best_epoch >= 0) {
    master_ = best;
    target.host = master_.host;
    target.port = master_.port;
    target.unix_socket.clear();
    return true;
  }
  if (!unknown.empty())
    error = std::string(link_errors::unknown_master) + " '" + name + "' (" + unknown + ")";
  else if (!not_sentinels.empty())
    error = not_sentinels + " " + std::string(link_errors::not_a_sentinel) +
            " (it does not know the SENTINEL command)";
  else
    error = std::string(link_errors::no_sentinel) + " for master '" + name + "' (" + tried + ")";
  return false;
}

}  // namespace tgw::infra::redis
