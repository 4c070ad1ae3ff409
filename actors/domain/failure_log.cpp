#include "actors/domain/failure_log.hpp"

#include <cstdio>

#include <spdlog/spdlog.h>

namespace tgw::domain {

std::string seconds_text(clock::duration d) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s",
                std::chrono::duration_cast<std::chrono::duration<double>>(d).count());
  return text;
}

failure_log::failure_log(settings s, line_sink sink)
    : settings_(std::move(s)), sink_(std::move(sink)) {
  if (!sink_) sink_ = [](const std::string& line) { spdlog::warn("{}", line); };
}

void failure_log::failed(const ports::failure_cause& cause, std::uint64_t lost,
                         clock::time_point now) {
  std::string line;
  {
    const std::lock_guard lock(mutex_);
    if (!failing_.load(std::memory_order_relaxed)) {
      since_ = now;
      failures_total_ = 0;
      lost_total_ = 0;
      causes_.clear();
      failing_.store(true, std::memory_order_release);
    }
    ++failures_total_;
    lost_total_ += lost;
    last_failure_ = now;
    recovered_ = false;
    auto [it, first] = causes_.try_emplace(cause.label);
    per_cause& c = it->second;
    ++c.failures;
    c.lost += lost;
    if (first) {
      line = settings_.component + ": failing, " + settings_.consequence + ": " + describe(cause);
    } else if (now - c.last_line >= settings_.interval) {
      line = settings_.component + ": still failing after " + seconds_text(now - since_) + ": " +
             describe(cause) + " (" + std::to_string(c.failures) + " failure(s), " +
             std::to_string(c.lost) + " " + settings_.unit + " in the last " +
             seconds_text(now - c.last_line) + ")";
    } else {
      return;
    }
    c.last_line = now;
    c.failures = 0;
    c.lost = 0;
  }
  sink_(line);
}

clock::duration failure_log::succeeded(clock::time_point now) {
  if (!failing_.load(std::memory_order_acquire)) return clock::duration::zero();
  std::string line;
  {
    const std::lock_guard lock(mutex_);
    if (!failing_.load(std::memory_order_relaxed)) return clock::duration::zero();
    if (!recovered_) {
      recovered_ = true;
      recovered_at_ = now;
    }
    if (now - last_failure_ < settings_.settle) return settings_.settle - (now - last_failure_);
    line = end_spell_locked(recovered_at_);
  }
  sink_(line);
  return clock::duration::zero();
}

clock::duration failure_log::settled(clock::time_point now) {
  if (!failing_.load(std::memory_order_acquire)) return clock::duration::zero();
  std::string line;
  {
    const std::lock_guard lock(mutex_);
    if (!failing_.load(std::memory_order_relaxed) || !recovered_) return clock::duration::zero();
    if (now - last_failure_ < settings_.settle) return settings_.settle - (now - last_failure_);
    line = end_spell_locked(recovered_at_);
  }
  sink_(line);
  return clock::duration::zero();
}

std::string failure_log::end_spell_locked(clock::time_point recovered_at) {
  failing_.store(false, std::memory_order_release);
  recovered_ = false;
  std::string causes;
  for (const auto& [label, c] : causes_) causes += (causes.empty() ? "" : ", ") + label;
  return settings_.component + ": recovered after " + seconds_text(recovered_at - since_) + " (" +
         causes + "); " + std::to_string(failures_total_) + " failure(s), " +
         std::to_string(lost_total_) + " " + settings_.unit + " meanwhile";
}

}  // namespace tgw::domain
