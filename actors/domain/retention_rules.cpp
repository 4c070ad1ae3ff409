#include "actors/domain/retention_rules.hpp"

#include <algorithm>
#include <cmath>

namespace tgw::domain {

std::int64_t ungrouped_keep(const ports::retention_view& view, const ungrouped_floor& floor,
                            const std::optional<ports::memory_use>& memory) {
  std::int64_t keep = view.length;
  if (floor.maxlen > 0) keep = std::min(keep, floor.maxlen);
  if (memory && memory->max > 0 && view.length > 0 && view.bytes > 0 &&
      static_cast<double>(memory->used) >=
          ungrouped_floor::full * static_cast<double>(memory->max)) {
    const double per_entry = static_cast<double>(view.bytes) / static_cast<double>(view.length);
    const double excess = static_cast<double>(memory->used) -
                          ungrouped_floor::relief * static_cast<double>(memory->max);
    const auto drop = static_cast<std::int64_t>(std::ceil(excess / per_entry));
    keep = std::min(keep, std::max<std::int64_t>(0, view.length - drop));
  }
  return keep;
}

bool ungrouped_nearing_floor(const ports::retention_view& view, const ungrouped_floor& floor,
                             const std::optional<ports::memory_use>& memory) {
  if (floor.maxlen > 0 && view.length * 2 >= floor.maxlen) return true;
  return memory && memory->max > 0 && view.length > 0 &&
         static_cast<double>(memory->used) >=
             ungrouped_floor::relief * static_cast<double>(memory->max);
}

ports::retention_view combine(const std::vector<ports::retention_view>& shards) {
  ports::retention_view total;
  for (const ports::retention_view& v : shards) {
    total.length += v.length;
    total.bytes += v.bytes;
    for (const ports::group_progress& g : v.groups) {
      auto it = std::find_if(total.groups.begin(), total.groups.end(),
                             [&](const ports::group_progress& t) { return t.name == g.name; });
      if (it == total.groups.end()) {
        total.groups.push_back(g);
        continue;
      }
      it->lag_entries =
          it->lag_entries < 0 || g.lag_entries < 0 ? -1 : it->lag_entries + g.lag_entries;
      it->pending += g.pending;
      if (g.oldest_needed_stored_ms &&
          (!it->oldest_needed_stored_ms ||
           *g.oldest_needed_stored_ms < *it->oldest_needed_stored_ms)) {
        it->oldest_needed_stored_ms = g.oldest_needed_stored_ms;
        it->oldest_needed = g.oldest_needed;
      }
    }
  }
  return total;
}

}  // namespace tgw::domain
