#include "infra/registry/heartbeat_holder.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>
#include <system_error>

namespace tgw::infra::registry {
namespace {

std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string link_of(const std::string& path) {
  char buffer[256];
  const ssize_t n = ::readlink(path.c_str(), buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

// Field 22 of /proc/PID/stat (the start time in clock ticks) and field 3 (the state);
// nullopt when the process does not exist. The command name (field 2) may hold spaces
// and parentheses: the fields after it are counted from its last ')'.
struct process_stat {
  char state = '?';
  std::uint64_t start_ticks = 0;
};
std::optional<process_stat> stat_of(std::int64_t pid) {
  const std::string text = first_line_of("/proc/" + std::to_string(pid) + "/stat");
  const auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  process_stat out;
  fields >> out.state;
  std::string skip;
  for (int field = 4; field < 22 && fields >> skip; ++field) {
  }
  fields >> out.start_ticks;
  if (!fields) return std::nullopt;
  return out;
}

std::string hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  std::string out(name);
  for (char& c : out)
    if (c == ' ' || c == '=') c = '_';
  return out.empty() ? "unknown" : out;
}

template <class Int>
bool number(std::string_view text, Int& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

heartbeat_holder heartbeat_holder::of_this_process(std::chrono::milliseconds interval) {
  heartbeat_holder me;
  me.host = hostname();
  me.pid = ::getpid();
  me.boot_id = first_line_of("/proc/sys/kernel/random/boot_id");
  me.pid_namespace = link_of("/proc/self/ns/pid");
  if (const auto stat = stat_of(me.pid)) me.start_ticks = stat->start_ticks;
  me.interval_ms = interval.count();
  // Values are space separated: nothing read from the system may hold a space.
  for (std::string* s : {&me.boot_id, &me.pid_namespace})
    for (char& c : *s)
      if (c == ' ' || c == '=') c = '_';
  return me;
}

std::optional<heartbeat_holder> heartbeat_holder::parse(std::string_view value) {
  heartbeat_holder h;
  int seen = 0;
  while (!value.empty()) {
    const auto space = value.find(' ');
    const std::string_view word = value.substr(0, space);
    value = space == std::string_view::npos ? std::string_view() : value.substr(space + 1);
    const auto equals = word.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const std::string_view key = word.substr(0, equals);
    const std::string_view text = word.substr(equals + 1);
    bool ok = true;
    if (key == "host")
      h.host = text;
    else if (key == "pid")
      ok = number(text, h.pid);
    else if (key == "boot")
      h.boot_id = text;
    else if (key == "pidns")
      h.pid_namespace = text;
    else if (key == "start")
      ok = number(text, h.start_ticks);
    else if (key == "every_ms")
      ok = number(text, h.interval_ms);
    else
      continue;  // a later version's field
    if (!ok) return std::nullopt;
    ++seen;
  }
  if (h.host.empty() || h.pid <= 0 || h.interval_ms <= 0) return std::nullopt;
  return seen >= 3 ? std::optional(h) : std::nullopt;
}

std::string heartbeat_holder::value() const {
  return "host=" + host + " pid=" + std::to_string(pid) + " boot=" + boot_id +
         " pidns=" + pid_namespace + " start=" + std::to_string(start_ticks) +
         " every_ms=" + std::to_string(interval_ms);
}

std::string heartbeat_holder::describe() const {
  return "pid " + std::to_string(pid) + " on host " + host;
}

bool heartbeat_holder::gone_from_this_host() const {
  const heartbeat_holder me = of_this_process(std::chrono::milliseconds{1});
  if (boot_id.empty() || boot_id != me.boot_id || pid_namespace != me.pid_namespace)
    return false;  // another machine, or pids of another namespace: cannot tell
  const auto stat = stat_of(pid);
  if (!stat) return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
  return stat->state == 'Z' || stat->state == 'X' || stat->start_ticks != start_ticks;
}

}  // namespace tgw::infra::registry
