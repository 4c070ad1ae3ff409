#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tgw::infra::process {

/// How the kernel schedules a process's threads. `batch` is Linux's SCHED_BATCH: the
/// same fair share of the CPU, but a thread that wakes up does not preempt the one
/// running. A gateway's threads hand each packet to one another (io thread, session,
/// writer, back), so under load every hand-off used to cost a preemption and a
/// context switch; with `batch` the woken thread waits for a core to come free.
/// `keep` changes nothing: for a process started under a policy of the operator's
/// choosing (`chrt`).
enum class cpu_policy { normal, batch, keep };

/// "normal", "batch" or "keep"; nothing for anything else.
[[nodiscard]] std::optional<cpu_policy> parse_cpu_policy(std::string_view text);
[[nodiscard]] std::string_view to_string(cpu_policy policy);
/// Every name parse_cpu_policy() takes, for a command line's list of choices.
[[nodiscard]] std::vector<std::string> cpu_policy_names();

/// Gives the calling thread `policy`. Threads it starts afterwards inherit it, so called
/// before any thread is started it covers the whole process. Returns what went wrong
/// (a container may forbid the call), or an empty string.
[[nodiscard]] std::string apply_cpu_policy(cpu_policy policy);

/// The calling thread's policy, normal or batch; nothing for any other (a real-time one).
[[nodiscard]] std::optional<cpu_policy> current_cpu_policy();

}  // namespace tgw::infra::process
