#include "infra/api/tokens.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tgw::infra::api {
namespace {

constexpr std::array<std::pair<std::string_view, scope>, 3> scope_names = {
    {{"read", scope::read}, {"command", scope::command}, {"events", scope::events}}};

std::string hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(digits[bytes[i] >> 4U]);
    out.push_back(digits[bytes[i] & 0xFU]);
  }
  return out;
}

bool is_hash(std::string_view text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

std::optional<scope_set> parse_scopes(std::string_view text, std::string& error) {
  scope_set out = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view word = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    bool known = false;
    for (const auto& [name, s] : scope_names)
      if (word == name) {
        out |= static_cast<scope_set>(s);
        known = true;
      }
    if (!known) {
      error = "unknown scope '" + std::string(word) + "' (scopes: read, command, events)";
      return std::nullopt;
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string scopes_text(scope_set scopes) {
  std::string out;
  for (const auto& [name, s] : scope_names)
    if (allows(scopes, s)) out.append(out.empty() ? "" : ",").append(name);
  return out;
}

std::string token_name_problem(std::string_view name) {
  if (name.empty() || name.size() > 64) return "a token name is 1 to 64 characters";
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '@' || c == '-';
    if (!ok)
      return "a token name is letters, digits, '.', '_', '@' and '-': '" + std::string(name) + "'";
  }
  return {};
}

std::string new_token() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) return {};
  return "tgw_" + hex(bytes.data(), bytes.size());
}

std::string sha256_hex(std::string_view text) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  return hex(digest.data(), digest.size());
}

std::optional<token_table> token_table::parse(std::string_view text, std::string& error) {
  token_table table;
  std::size_t line_no = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    std::string_view line =
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    start = end == std::string_view::npos ? text.size() : end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto w = words(line);
    if (w.empty() || w.front().starts_with('#')) continue;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (w.size() != 4) {
      error = where + "expected NAME SCOPES SHA256 CREATED_MS, found " + std::to_string(w.size()) +
              " words";
      return std::nullopt;
    }
    token_entry e;
    e.name = std::string(w[0]);
    if (const std::string problem = token_name_problem(e.name); !problem.empty()) {
      error = where + problem;
      return std::nullopt;
    }
    std::string scope_error;
    const auto scopes = parse_scopes(w[1], scope_error);
    if (!scopes) {
      error = where + scope_error;
      return std::nullopt;
    }
    e.scopes = *scopes;
    if (!is_hash(w[2])) {
      error = where + "the hash is not 64 lowercase hex digits (a SHA-256)";
      return std::nullopt;
    }
    e.sha256_hex = std::string(w[2]);
    const auto [ptr, ec] = std::from_chars(w[3].data(), w[3].data() + w[3].size(), e.created_ms);
    if (ec != std::errc() || ptr != w[3].data() + w[3].size()) {
      error = where + "CREATED_MS is not a number";
      return std::nullopt;
    }
    if (!table.add(std::move(e))) {
      error = where + "the name '" + std::string(w[0]) + "' is taken by an earlier line";
      return std::nullopt;
    }
  }
  return table;
}

std::string token_table::text() const {
  std::ostringstream out;
  out << "# tgw api tokens: NAME SCOPES SHA256 CREATED_MS (the tokens themselves are not kept)\n";
  for (const token_entry& e : entries_)
    out << e.name << ' ' << scopes_text(e.scopes) << ' ' << e.sha256_hex << ' ' << e.created_ms
        << '\n';
  return out.str();
}

const token_entry* token_table::find(std::string_view token) const {
  const std::string presented = sha256_hex(token);
  const token_entry* found = nullptr;
  for (const token_entry& e : entries_) {
    // Every entry is compared, whether one matched already or not; each comparison
    // takes the same time whatever the bytes.
    const bool same = e.sha256_hex.size() == presented.size() &&
                      CRYPTO_memcmp(e.sha256_hex.data(), presented.data(), presented.size()) == 0;
    if (same && found == nullptr) found = &e;
  }
  return found;
}

const token_entry* token_table::named(std::string_view name) const {
  for (const token_entry& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

bool token_table::add(token_entry entry) {
  if (named(entry.name) != nullptr) return false;
  entries_.push_back(std::move(entry));
  return true;
}

bool token_table::remove(std::string_view name) {
  return std::erase_if(entries_, [&](const token_entry& e) { return e.name == name; }) > 0;
}

std::optional<token_table> read_token_file(const std::string& path, bool missing_is_empty,
                                           std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    if (e == ENOENT && missing_is_empty) return token_table{};
    error = "cannot read the tokens file " + path + ": " + std::strerror(e);
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string why;
  auto table = token_table::parse(text.str(), why);
  if (!table) error = "the tokens file " + path + ", " + why;
  return table;
}

bool write_token_file(const std::string& path, const token_table& table, std::string& error) {
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = "cannot write " + temporary + ": " + std::strerror(errno);
    return false;
  }
  const std::string text = table.text();
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = "cannot write " + temporary + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(temporary.c_str());
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  // Durable before it replaces the old file: a crash leaves one or the other whole.
  const bool synced = ::fsync(fd) == 0;
  const bool closed = ::close(fd) == 0;
  if (!synced || !closed) {
    error = "cannot write " + temporary + ": " + std::strerror(errno);
    ::unlink(temporary.c_str());
    return false;
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    error = "cannot replace " + path + ": " + std::strerror(errno);
    ::unlink(temporary.c_str());
    return false;
  }
  return true;
}

}  // namespace tgw::infra::api
