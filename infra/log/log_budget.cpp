#include "infra/log/log_budget.hpp"

#include <algorithm>
#include <atomic>

namespace tgw::infra {
namespace {

std::atomic<std::int64_t> interval_ms{10'000};
std::atomic<std::uint32_t> refusal_lines{5};
std::atomic<std::uint32_t> session_lines{100};

// The budgets that have held lines back at least once. They are function-local
// statics (or outlive every caller), so the list never points at a dead one.
std::mutex list_mutex;
log_budget* listed_head = nullptr;

std::chrono::milliseconds interval() {
  return std::chrono::milliseconds{interval_ms.load(std::memory_order_relaxed)};
}

}  // namespace

void configure_log_budgets(const log_budget_settings& settings) {
  interval_ms.store(std::max<std::int64_t>(1, settings.interval.count()));
  refusal_lines.store(settings.refusal_lines);
  session_lines.store(settings.session_lines);
}

// A fixed window per cause: the first lines of a window are written, the rest held
// back and counted; the next line written, or the next flush once the window closed,
// tells their number.
bool log_budget::take(std::uint64_t& held_back, spdlog::level::level_enum level,
                      std::chrono::steady_clock::time_point now) {
  const std::uint32_t budget =
      (kind_ == log_kind::refusal ? refusal_lines : session_lines).load(std::memory_order_relaxed);
  bool list = false;
  {
    const std::lock_guard lock(mutex_);
    if (now - window_start_ >= interval()) {
      window_start_ = now;
      written_in_window_ = 0;
    }
    if (written_in_window_ < budget) {
      ++written_in_window_;
      held_back = held_back_;
      held_back_ = 0;
      level_ = spdlog::level::info;
      return true;
    }
    if (held_back_++ == 0) held_since_ = now;
    level_ = std::max(level_, level);
    list = !listed_;
    listed_ = true;
  }
  if (list) {
    const std::lock_guard lock(list_mutex);
    next_ = listed_head;
    listed_head = this;
  }
  return false;
}

std::uint64_t log_budget::take_unreported(std::chrono::steady_clock::time_point now,
                                          spdlog::level::level_enum& level,
                                          std::chrono::steady_clock::time_point& since) {
  const std::lock_guard lock(mutex_);
  if (held_back_ == 0 || now - window_start_ < interval()) return 0;
  level = level_;
  since = held_since_;
  level_ = spdlog::level::info;
  // The flush line counts as the new window's first.
  window_start_ = now;
  written_in_window_ = 1;
  return std::exchange(held_back_, 0);
}

std::string log_budget::suffix(std::uint64_t held_back) const {
  return fmt::format(" ({} more like this held back by the log budget of '{}')", held_back, cause_);
}

void flush_log_budgets(std::chrono::steady_clock::time_point now) {
  log_budget* head = nullptr;
  {
    const std::lock_guard lock(list_mutex);
    head = listed_head;
  }
  for (log_budget* b = head; b != nullptr; b = b->next_) {
    spdlog::level::level_enum level = spdlog::level::info;
    std::chrono::steady_clock::time_point since;
    const std::uint64_t n = b->take_unreported(now, level, since);
    if (n > 0)
      spdlog::log(level, "{} line(s) of '{}' held back by the log budget in the last {:.1f} s", n,
                  b->cause_, std::chrono::duration<double>(now - since).count());
  }
}

}  // namespace tgw::infra
