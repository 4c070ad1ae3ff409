#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

namespace tgw::infra {

/// What a line that a peer can cause is, for its budget: a refusal or bad input
/// (a malformed frame, a connection refused, a TLS failure), or a session coming or
/// going. A session line is worth more to an operator, so its budget is larger.
enum class log_kind : std::uint8_t { refusal, session };

/// The process-wide budgets of log_budget, from `tgw serve` flags: per cause, at most
/// `refusal_lines` (or `session_lines`) lines per `interval`.
struct log_budget_settings {
  std::chrono::milliseconds interval{10'000};
  std::uint32_t refusal_lines = 5;
  std::uint32_t session_lines = 100;
};

/// Sets the budgets every log_budget uses from now on. Thread-safe.
void configure_log_budgets(const log_budget_settings& settings);

/// Writes, for every cause whose lines were held back and whose window has closed,
/// one line with their count, so that the end of a flood is told even when no line of
/// its cause follows. A process calls it every interval or so. Thread-safe.
void flush_log_budgets(
    std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

/// The log lines of one cause that a peer can make the instance write: bad frames,
/// refused connections, allowlist misses, bad datagrams, TLS failures, sessions
/// opening and closing. Each cause gets a budget of lines per interval; past it, lines
/// are counted instead of written, and the next line written says how many were held
/// back. So a flood moves counters, never the disk. One object per cause, usually a
/// function-local static at the line's call site; thread-safe.
class log_budget {
 public:
  constexpr log_budget(const char* cause, log_kind kind) : cause_(cause), kind_(kind) {}
  log_budget(const log_budget&) = delete;
  log_budget& operator=(const log_budget&) = delete;

  /// Whether a line may be written now. When it may, `held_back` is the number of
  /// lines suppressed since the last one written (and is reset).
  bool take(std::uint64_t& held_back, spdlog::level::level_enum level = spdlog::level::info,
            std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

  /// Logs at `level` if the budget allows, with " (N more like this held back)"
  /// appended when lines were suppressed.
  template <class... Args>
  void log(spdlog::level::level_enum level, spdlog::format_string_t<Args...> format,
           Args&&... args) {
    if (!spdlog::should_log(level)) return;
    std::uint64_t held_back = 0;
    if (!take(held_back, level)) return;
    std::string line = fmt::format(format, std::forward<Args>(args)...);
    if (held_back > 0) line += suffix(held_back);
    spdlog::log(level, "{}", line);
  }

  [[nodiscard]] const char* cause() const { return cause_; }

 private:
  friend void flush_log_budgets(std::chrono::steady_clock::time_point now);
  std::string suffix(std::uint64_t held_back) const;
  /// Held-back lines of a closed window, taken for a flush line (0: none), with the
  /// level of the most severe of them and when the first was held back.
  std::uint64_t take_unreported(std::chrono::steady_clock::time_point now,
                                spdlog::level::level_enum& level,
                                std::chrono::steady_clock::time_point& since);

  const char* cause_;
  log_kind kind_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point window_start_{};
  std::uint32_t written_in_window_ = 0;
  std::uint64_t held_back_ = 0;
  std::chrono::steady_clock::time_point held_since_{};
  bool listed_ = false;         ///< In the list flush_log_budgets() walks.
  log_budget* next_ = nullptr;  ///< That list: budgets live as long as the process.
  spdlog::level::level_enum level_ =
      spdlog::level::info;  ///< Of the lines held back, for their flush line.
};

}  // namespace tgw::infra
