#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tgw::infra::redis {

/// Writes Redis commands in the wire protocol (RESP arrays of bulk strings) into one
/// buffer, for connection::pipeline_encoded. A hot writer builds its commands here
/// in one pass instead of collecting argument strings and having hiredis format
/// them again. The caller states each command's argument count up front.
class resp_writer {
 public:
  /// Starts a command of `argc` arguments; exactly that many arg() calls follow.
  void begin(std::size_t argc) {
    if (owed_ != 0) broken_ = true;  // the previous command was short of arguments
    buffer_ += '*';
    number(static_cast<std::int64_t>(argc));
    owed_ = argc;
    ++commands_;
  }
  void arg(std::string_view a) {
    if (owed_ == 0)
      broken_ = true;  // more arguments than announced
    else
      --owed_;
    buffer_ += '$';
    number(static_cast<std::int64_t>(a.size()));
    buffer_.append(a);
    buffer_ += "\r\n";
  }
  void arg(std::int64_t n) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
    arg(std::string_view(digits, static_cast<std::size_t>(end - digits)));
  }

  /// False when a command got more or fewer arguments than begin() announced: the
  /// bytes would desynchronise the connection and must not be sent.
  [[nodiscard]] bool complete() const noexcept { return !broken_ && owed_ == 0; }
  [[nodiscard]] const std::string& bytes() const noexcept { return buffer_; }
  [[nodiscard]] std::size_t commands() const noexcept { return commands_; }
  void clear() noexcept {
    buffer_.clear();
    commands_ = 0;
    owed_ = 0;
    broken_ = false;
  }

 private:
  void number(std::int64_t n) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
    buffer_.append(digits, end);
    buffer_ += "\r\n";
  }

  std::string buffer_;
  std::size_t commands_ = 0;
  std::size_t owed_ = 0;  ///< Arguments the current command still needs.
  bool broken_ = false;
};

}  // namespace tgw::infra::redis
