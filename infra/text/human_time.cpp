#include "infra/text/human_time.hpp"

#include <chrono>
#include <cstdio>

namespace tgw::infra {

std::string utc_time(std::int64_t ms) {
  using namespace std::chrono;
  const sys_time<milliseconds> t{milliseconds{ms}};
  const sys_days day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss<seconds> clock{floor<seconds>(t - day)};
  char buf[32];
  (void)std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ",
                      static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                      static_cast<unsigned>(ymd.day()), static_cast<int>(clock.hours().count()),
                      static_cast<int>(clock.minutes().count()),
                      static_cast<int>(clock.seconds().count()));
  return buf;
}

std::string time_ago(std::int64_t then_ms, std::int64_t now_ms) {
  const bool ahead = then_ms > now_ms;
  std::int64_t s = (ahead ? then_ms - now_ms : now_ms - then_ms) / 1000;
  if (s == 0) return "just now";
  struct unit {
    std::int64_t seconds;
    const char* name;
  };
  static constexpr unit units[] = {{86400, "d"}, {3600, "h"}, {60, "min"}, {1, "s"}};
  std::string text;
  int shown = 0;
  for (const unit& u : units) {
    // Two units say enough: "3 h 12 min", not "3 h 12 min 5 s".
    if (shown == 2 || (shown == 1 && s < u.seconds)) break;
    if (s < u.seconds) continue;
    text += (text.empty() ? "" : " ") + std::to_string(s / u.seconds) + ' ' + u.name;
    s %= u.seconds;
    ++shown;
  }
  return ahead ? "in " + text : text + " ago";
}

std::string time_and_age(std::int64_t then_ms, std::int64_t now_ms) {
  return utc_time(then_ms) + " (" + time_ago(then_ms, now_ms) + ")";
}

std::optional<std::int64_t> parse_utc_time(std::string_view text) {
  using namespace std::chrono;
  int y = 0;
  unsigned mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  char tail = 0;
  const std::string t(text);
  const bool date_only = t.size() == 10 && std::sscanf(t.c_str(), "%4d-%2u-%2u", &y, &mo, &d) == 3;
  const bool full =
      t.size() == 20 &&
      std::sscanf(t.c_str(), "%4d-%2u-%2uT%2u:%2u:%2u%c", &y, &mo, &d, &h, &mi, &sec, &tail) == 7 &&
      tail == 'Z';
  if (!date_only && !full) return std::nullopt;
  const year_month_day ymd{year{y}, month{mo}, day{d}};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 59) return std::nullopt;
  const auto at = sys_days{ymd} + hours{h} + minutes{mi} + seconds{sec};
  return duration_cast<milliseconds>(at.time_since_epoch()).count();
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace tgw::infra
