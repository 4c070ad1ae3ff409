#pragma once

#include <string>

namespace tgw::infra::net {

/// What the process did to keep TLS secrets out of memory that outlives them and out of
/// core dumps; a warning names what it could not do and how to fix it.
struct tls_memory_guard {
  /// OpenSSL clears what it frees (zeroing_limit bytes or fewer a block).
  bool clears_freed = false;
  /// Private keys and session ticket keys live in OpenSSL's secure heap: locked in
  /// RAM and left out of core dumps (MADV_DONTDUMP).
  bool secure_heap = false;
  std::string warning;
};

/// OpenSSL blocks of at most this many bytes are cleared when freed: the SSL object
/// with its traffic secrets, cipher contexts and key schedules, sessions. The record
/// buffers above it hold records, not keys, and are freed after every read of an idle
/// session; clearing 17 KiB each time would cost every packet a few microseconds.
inline constexpr std::size_t zeroing_limit = 16 * 1024;

/// Sets OpenSSL's allocator to one that clears freed blocks, and starts its secure
/// heap. Must run before anything in the process calls OpenSSL (first in main): the
/// allocator can only be set then.
tls_memory_guard guard_tls_memory();

/// What guard_tls_memory() did, for the start-up of a TLS listener to report.
[[nodiscard]] const tls_memory_guard& tls_memory_status();

}  // namespace tgw::infra::net
