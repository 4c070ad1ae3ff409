#include "infra/net/tls_memory.hpp"

#include <malloc.h>
#include <openssl/crypto.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tgw::infra::net {
namespace {

// The secure heap's size: an RSA-4096 key's BIGNUMs take under 3 KiB, a P-256 key's a
// few hundred bytes, each SSL_CTX's ticket keys 100; a reload briefly holds two of
// each.
constexpr std::size_t secure_heap_size = 64 * 1024;
constexpr int secure_heap_min_block = 32;

void clear(void* p) {
  const std::size_t n = malloc_usable_size(p);
  if (n <= zeroing_limit) explicit_bzero(p, n);
}

void* tls_malloc(std::size_t n, const char*, int) {
  return std::malloc(n);
}

void tls_free(void* p, const char*, int) {
  if (p == nullptr) return;
  clear(p);
  std::free(p);
}

// realloc would leave the old block uncleared when it moves: move by hand instead.
void* tls_realloc(void* p, std::size_t n, const char*, int) {
  if (p == nullptr) return std::malloc(n);
  if (n == 0) {
    tls_free(p, nullptr, 0);
    return nullptr;
  }
  void* moved = std::malloc(n);
  if (moved == nullptr) return nullptr;
  std::memcpy(moved, p, std::min(n, malloc_usable_size(p)));
  tls_free(p, nullptr, 0);
  return moved;
}

tls_memory_guard status;

}  // namespace

const tls_memory_guard& tls_memory_status() {
  return status;
}

tls_memory_guard guard_tls_memory() {
  tls_memory_guard& g = status;
  g.clears_freed = CRYPTO_set_mem_functions(tls_malloc, tls_realloc, tls_free) == 1;
  if (!g.clears_freed)
    g.warning =
        "OpenSSL allocated memory before its allocator could be set: TLS secrets may "
        "stay in freed memory (a build problem: guard_tls_memory() must run first)";
  const int heap = CRYPTO_secure_malloc_init(secure_heap_size, secure_heap_min_block);
  g.secure_heap = heap == 1;
  if (heap == 2) {
    if (!g.warning.empty()) g.warning += "; ";
    g.warning +=
        "OpenSSL's secure heap for private keys could not be locked in RAM (raise "
        "RLIMIT_MEMLOCK, e.g. LimitMEMLOCK=1M in the unit): keys may reach swap";
  } else if (heap == 0) {
    if (!g.warning.empty()) g.warning += "; ";
    g.warning +=
        "OpenSSL's secure heap for private keys could not be set up: keys are in "
        "ordinary memory and may reach swap and core dumps";
  }
  return g;
}

}  // namespace tgw::infra::net
