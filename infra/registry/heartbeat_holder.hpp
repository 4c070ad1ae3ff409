#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tgw::infra::registry {

/// The process that writes an instance's heartbeat: the value of
/// `instance:heartbeat:{id}`. Two gateways started with one --instance-id would share
/// that key, its command stream and its reverse index; the value tells them apart, so
/// that the second refuses to start and a running one sees its heartbeat taken over.
struct heartbeat_holder {
  std::string host;
  std::int64_t pid = 0;
  std::string boot_id;            ///< The kernel's boot id: the same machine, since the same boot.
  std::string pid_namespace;      ///< The pid namespace: pids mean the same only within it.
  std::uint64_t start_ticks = 0;  ///< The process's start time (/proc/PID/stat), against pid reuse.
  std::int64_t interval_ms = 0;   ///< How often it renews the heartbeat.

  /// This process, renewing every `interval`.
  [[nodiscard]] static heartbeat_holder of_this_process(std::chrono::milliseconds interval);
  /// A value written by value(); nullopt for anything else (an older tgw wrote the time).
  [[nodiscard]] static std::optional<heartbeat_holder> parse(std::string_view value);

  /// The key's value: "host=H pid=P boot=B pidns=N start=S every_ms=I".
  [[nodiscard]] std::string value() const;
  /// As an operator finds it: "pid 4242 on host web-1".
  [[nodiscard]] std::string describe() const;
  /// True when it is a process of this machine and pid namespace that no longer runs
  /// (or a zombie, or another process now has its pid): its heartbeat is a leftover.
  [[nodiscard]] bool gone_from_this_host() const;

  bool operator==(const heartbeat_holder&) const = default;
};

}  // namespace tgw::infra::registry
