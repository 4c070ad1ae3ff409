#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tgw::infra::api {

/// What a token may do: read devices, records and commands; send commands; follow the
/// live events. A bit each.
enum class scope : std::uint8_t { read = 1, command = 2, events = 4 };

/// A set of scopes.
using scope_set = std::uint8_t;

/// "read,command" as a set; nullopt with `error` for an unknown or empty list.
[[nodiscard]] std::optional<scope_set> parse_scopes(std::string_view text, std::string& error);
/// The set as "read,command,events", in that order.
[[nodiscard]] std::string scopes_text(scope_set scopes);
[[nodiscard]] constexpr bool allows(scope_set scopes, scope s) noexcept {
  return (scopes & static_cast<scope_set>(s)) != 0;
}

/// One token of the tokens file: never the token itself, only its SHA-256.
struct token_entry {
  std::string name;  ///< Who holds it: the publisher of the commands it sends.
  scope_set scopes = 0;
  std::string sha256_hex;  ///< 64 lowercase hex digits.
  std::int64_t created_ms = 0;
};

/// Why `name` cannot name a token (1 to 64 of letters, digits, '.', '_', '@', '-'), or
/// empty when it can.
[[nodiscard]] std::string token_name_problem(std::string_view name);

/// A fresh token: "tgw_" then 64 hex digits of 32 random bytes from OpenSSL's CSPRNG.
/// Empty when OpenSSL has no randomness to give.
[[nodiscard]] std::string new_token();
/// SHA-256 of `text`, as 64 lowercase hex digits.
[[nodiscard]] std::string sha256_hex(std::string_view text);

/// The tokens of one file, read whole.
///
/// The file is text, one token a line: `NAME SCOPES SHA256 CREATED_MS`, blank lines and
/// lines starting with '#' ignored. `tgw api token add` writes it; an operator may edit
/// it (revoking is deleting the line) and send SIGHUP.
class token_table {
 public:
  token_table() = default;
  explicit token_table(std::vector<token_entry> entries) : entries_(std::move(entries)) {}

  /// Reads `text`; nullopt with `error` naming the line and what is wrong with it.
  [[nodiscard]] static std::optional<token_table> parse(std::string_view text, std::string& error);
  /// The file's text, with a header comment.
  [[nodiscard]] std::string text() const;

  /// The entry whose hash is the SHA-256 of `token`, compared with every entry in
  /// constant time (CRYPTO_memcmp over all of them, whether one matched or not), so the
  /// time taken tells nothing of how close a guess came.
  [[nodiscard]] const token_entry* find(std::string_view token) const;

  [[nodiscard]] const std::vector<token_entry>& entries() const noexcept { return entries_; }
  [[nodiscard]] const token_entry* named(std::string_view name) const;
  /// Adds an entry; false (and nothing added) when the name is taken.
  bool add(token_entry entry);
  /// Removes the named entry; false when there is none.
  bool remove(std::string_view name);

 private:
  std::vector<token_entry> entries_;
};

/// Reads a tokens file. nullopt with `error` (the path, and why) when it cannot be read
/// or parsed; a missing file is an error too unless `missing_is_empty`.
[[nodiscard]] std::optional<token_table> read_token_file(const std::string& path,
                                                         bool missing_is_empty, std::string& error);
/// Writes a tokens file whole, mode 0600, through a temporary file renamed over it, so
/// that a reader never sees half of it. False with `error`.
bool write_token_file(const std::string& path, const token_table& table, std::string& error);

}  // namespace tgw::infra::api
