#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace tgw::actors::commands {

/// Settings of the command reader (command_reader.hpp).
struct reader_config {
  std::chrono::milliseconds block{1000};  ///< XREADGROUP BLOCK
  std::size_t count = 16;                 ///< XREADGROUP COUNT
  std::chrono::milliseconds max_backoff{5000};
  /// A failure that goes on is logged again at most this often (domain::failure_log).
  std::chrono::milliseconds failure_log_interval{30'000};
  std::int64_t journal_maxlen = 1000;
};

/// Settings of the command responder (command_responder.hpp).
struct responder_config {
  std::int64_t journal_maxlen = 1000;
  std::chrono::milliseconds max_backoff{5000};
  /// A failure that goes on is logged again at most this often (domain::failure_log).
  std::chrono::milliseconds failure_log_interval{30'000};
};

}  // namespace tgw::actors::commands
