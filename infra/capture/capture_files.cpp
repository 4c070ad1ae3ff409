#include "infra/capture/capture_files.hpp"

#include <algorithm>
#include <ctime>
#include <system_error>

#include <spdlog/spdlog.h>

#include "infra/capture/tcp_synth.hpp"

namespace tgw::infra::capture {
namespace {

constexpr const char* file_prefix = "tgw-";
constexpr const char* file_suffix = ".pcap";

bool is_ours(const std::filesystem::path& p) {
  const std::string name = p.filename().string();
  return name.starts_with(file_prefix) && name.ends_with(file_suffix);
}

std::string file_name(std::int64_t unix_us, std::uint64_t sequence) {
  const std::time_t seconds = static_cast<std::time_t>(unix_us / 1'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32] = {};
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  char seq[16] = {};
  std::snprintf(seq, sizeof seq, "%06llu", static_cast<unsigned long long>(sequence % 1'000'000));
  return std::string(file_prefix) + stamp + "-" + seq + file_suffix;
}

// Initial sequence numbers derived from the connection id: deterministic, distinct.
std::uint32_t initial_seq(std::uint64_t id, bool device) {
  const std::uint64_t mixed = (id + (device ? 1 : 2)) * 0x9E3779B97F4A7C15ULL;
  return static_cast<std::uint32_t>(mixed >> 32);
}

}  // namespace

capture_files::capture_files(rotation_policy policy) : policy_(std::move(policy)) {}

bool capture_files::ready(std::int64_t unix_us) {
  const bool too_big = file_.is_open() && file_.size() >= policy_.max_file_bytes;
  const bool too_old =
      file_.is_open() && unix_us - opened_us_ >= std::chrono::microseconds(policy_.max_age).count();
  if (!file_.is_open() || too_big || too_old) rotate(unix_us);
  return file_.is_open();
}

void capture_files::rotate(std::int64_t unix_us) {
  file_.close();
  std::error_code ec;
  std::filesystem::create_directories(policy_.dir, ec);
  // Names only ever grow, even when the clock steps back or a file of a previous run
  // has the same second.
  std::filesystem::path next;
  do {
    next = policy_.dir / file_name(unix_us, ++sequence_);
  } while (std::filesystem::exists(next, ec) || (!current_.empty() && next <= current_));
  std::string error;
  if (!file_.open(next.string(), error)) {
    if (!failed_logged_) spdlog::error("capture: {}; capture data is dropped", error);
    failed_logged_ = true;
    return;
  }
  failed_logged_ = false;
  current_ = next;
  opened_us_ = unix_us;
  enforce_total();
}

void capture_files::enforce_total() {
  std::error_code ec;
  std::vector<std::pair<std::filesystem::path, std::uint64_t>> found;
  for (const auto& entry : std::filesystem::directory_iterator(policy_.dir, ec)) {
    if (!entry.is_regular_file(ec) || !is_ours(entry.path())) continue;
    found.emplace_back(entry.path(), entry.file_size(ec));
  }
  std::sort(found.begin(), found.end());
  std::uint64_t total = 0;
  for (const auto& f : found) total += f.second;
  for (const auto& [path, size] : found) {
    if (total <= policy_.max_total_bytes || path == current_) break;
    if (std::filesystem::remove(path, ec)) total -= size;
  }
}

std::vector<std::filesystem::path> capture_files::files() const {
  std::error_code ec;
  std::vector<std::filesystem::path> found;
  for (const auto& entry : std::filesystem::directory_iterator(policy_.dir, ec))
    if (is_ours(entry.path())) found.push_back(entry.path());
  std::sort(found.begin(), found.end());
  return found;
}

bool capture_files::emit(std::int64_t unix_us, const connection& c, bool from_device,
                         std::uint8_t flags, std::span<const std::uint8_t> payload) {
  if (!ready(unix_us)) return false;
  packet_.clear();
  tcp_segment_spec s;
  s.from = from_device ? c.device : c.gateway;
  s.to = from_device ? c.gateway : c.device;
  s.seq = from_device ? c.device_seq : c.gateway_seq;
  s.ack = from_device ? c.gateway_seq : c.device_seq;
  s.flags = flags;
  s.payload = payload;
  append_ethernet_tcp(packet_, s);
  return file_.write(unix_us, packet_);
}

void capture_files::open_connection(std::uint64_t id, std::int64_t unix_us,
                                    const net::ip_endpoint& device,
                                    const net::ip_endpoint& gateway) {
  connection c{device, gateway, initial_seq(id, true), initial_seq(id, false)};
  // SYN, SYN-ACK, ACK: each SYN takes one sequence number.
  emit(unix_us, c, true, tcp_flags::syn);
  ++c.device_seq;
  emit(unix_us, c, false, tcp_flags::syn | tcp_flags::ack);
  ++c.gateway_seq;
  emit(unix_us, c, true, tcp_flags::ack);
  connections_[id] = c;
}

void capture_files::data(std::uint64_t id, std::int64_t unix_us, bool from_device,
                         std::span<const std::uint8_t> bytes) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) {
    payload_lost_ += bytes.size();
    return;
  }
  connection& c = it->second;
  while (!bytes.empty()) {
    const auto part = bytes.first(std::min(bytes.size(), max_segment_payload));
    if (emit(unix_us, c, from_device, tcp_flags::psh | tcp_flags::ack, part))
      payload_written_ += part.size();
    else
      payload_lost_ += part.size();
    // The sequence advances even for a lost write, so the gap shows in the capture.
    auto& seq = from_device ? c.device_seq : c.gateway_seq;
    seq += static_cast<std::uint32_t>(part.size());
    bytes = bytes.subspan(part.size());
  }
}

void capture_files::close_connection(std::uint64_t id, std::int64_t unix_us, bool by_device) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  connection& c = it->second;
  const std::uint8_t fin = tcp_flags::fin | tcp_flags::ack;
  emit(unix_us, c, by_device, fin);
  (by_device ? c.device_seq : c.gateway_seq) += 1;
  emit(unix_us, c, !by_device, fin);
  (by_device ? c.gateway_seq : c.device_seq) += 1;
  emit(unix_us, c, by_device, tcp_flags::ack);
  connections_.erase(it);
}

void capture_files::flush() {
  file_.flush();
}

}  // namespace tgw::infra::capture
