#include "codecs/crc16.hpp"

#include <array>
#include <bit>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TGW_CRC16_CLMUL 1
#include <immintrin.h>
#endif

namespace tgw::codecs {
namespace {

constexpr std::uint16_t reflected_poly = 0xA001;
constexpr std::size_t slices = 8;

using crc_tables = std::array<std::array<std::uint16_t, 256>, slices>;

// Slicing-by-8: eight tables let the loop fold eight input bytes per step (bytewise
// tables run at roughly a third of the speed because every byte waits on the
// previous one). It serves short inputs, CPUs without carry-less multiplication, and
// the last bytes of the folding path below.
constexpr crc_tables make_tables() {
  crc_tables t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint16_t crc = static_cast<std::uint16_t>(i);
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc & 1U) ? static_cast<std::uint16_t>((crc >> 1) ^ reflected_poly)
                       : static_cast<std::uint16_t>(crc >> 1);
    t[0][i] = crc;
  }
  for (std::size_t k = 1; k < slices; ++k)
    for (std::size_t i = 0; i < 256; ++i)
      t[k][i] = static_cast<std::uint16_t>((t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFFU]);
  return t;
}

constexpr crc_tables tables = make_tables();

/// Continues the CRC `crc` over n bytes at p with the tables.
std::uint32_t crc16_tables(std::uint32_t crc, const std::uint8_t* p, std::size_t n) noexcept {
  while (n >= slices) {
    std::uint64_t x;
    std::memcpy(&x, p, sizeof x);
    if constexpr (std::endian::native == std::endian::big) x = __builtin_bswap64(x);
    x ^= crc;
    crc = tables[7][x & 0xFFU] ^ tables[6][(x >> 8) & 0xFFU] ^ tables[5][(x >> 16) & 0xFFU] ^
          tables[4][(x >> 24) & 0xFFU] ^ tables[3][(x >> 32) & 0xFFU] ^
          tables[2][(x >> 40) & 0xFFU] ^ tables[1][(x >> 48) & 0xFFU] ^ tables[0][x >> 56];
    p += slices;
    n -= slices;
  }
  while (n-- > 0) crc = (crc >> 8) ^ tables[0][(crc ^ *p++) & 0xFFU];
  return crc;
}

#ifdef TGW_CRC16_CLMUL

// Folding with carry-less multiplication (PCLMULQDQ), after Intel's "Fast CRC
// Computation for Generic Polynomials Using PCLMULQDQ Instruction" (2009). Even
// slicing-by-8 leaves every 8 bytes waiting on the previous ones, which made the CRC
// about half the cost of decoding a frame; folding keeps four independent 16-byte
// lanes in flight and runs several times faster.
//
// With initial value 0 the CRC of a message depends only on its polynomial modulo P
// (leading zero bytes change nothing), so the loop replaces the message by a shorter
// one with the same remainder: a 16-byte block A followed d bits later by more data
// contributes A * x^d, and A * x^d = A_hi * x^(d+64) + A_lo * x^d is congruent to
// A_hi * (x^(d+64) mod P) + A_lo * (x^d mod P), which fits in 128 bits again. What is
// left at the end, one block and fewer than 16 bytes, goes through the tables.
//
// The CRC is reflected: a little-endian 128-bit load holds the block's polynomial
// bit-reversed (byte 0 bit 0 is the highest coefficient). The carry-less product of
// two bit-reversed 64-bit values is the bit-reversed product over 127 bits, one bit
// short of 128, so each constant is taken one degree lower: x^(d-1) mod P.

constexpr std::uint32_t poly = 0x1'8005;  // x^16 + x^15 + x^2 + 1, not reflected.

constexpr std::uint64_t x_pow_mod_p(unsigned n) {
  std::uint32_t r = 1;
  for (unsigned i = 0; i < n; ++i) {
    r <<= 1;
    if (r & 0x1'0000U) r ^= poly;
  }
  return r;
}

constexpr std::uint64_t reflect64(std::uint64_t v) {
  std::uint64_t r = 0;
  for (unsigned j = 0; j < 64; ++j)
    if ((v >> j) & 1U) r |= std::uint64_t{1} << (63 - j);
  return r;
}

/// The multiplier for a block half whose lowest coefficient is x^d after the shift.
constexpr std::uint64_t fold_constant(unsigned d) {
  return reflect64(x_pow_mod_p(d - 1));
}

constexpr std::size_t block = 16;
constexpr std::size_t lanes = 4;
/// Below this the tables are as fast: setting up the lanes costs more than it saves.
constexpr std::size_t clmul_min_size = block * lanes;

struct fold_constants {
  std::uint64_t low_half;   // For the block's low 64 bits (its higher-degree half).
  std::uint64_t high_half;  // For the block's high 64 bits.
};

constexpr fold_constants constants_for(unsigned d) {
  return {fold_constant(d + 64), fold_constant(d)};
}

__attribute__((target("pclmul,sse2"))) inline __m128i load(const std::uint8_t* p) noexcept {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

__attribute__((target("pclmul,sse2"))) inline __m128i make(fold_constants c) noexcept {
  return _mm_set_epi64x(static_cast<long long>(c.high_half), static_cast<long long>(c.low_half));
}

/// A block moved d bits further, reduced to 128 bits; k = make(constants_for(d)).
__attribute__((target("pclmul,sse2"))) inline __m128i fold(__m128i a, __m128i k) noexcept {
  return _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00), _mm_clmulepi64_si128(a, k, 0x11));
}

__attribute__((target("pclmul,sse2"))) std::uint16_t crc16_clmul(const std::uint8_t* p,
                                                                 std::size_t n) noexcept {
  const __m128i k512 = make(constants_for(512));
  __m128i x0 = load(p);
  __m128i x1 = load(p + block);
  __m128i x2 = load(p + 2 * block);
  __m128i x3 = load(p + 3 * block);
  p += lanes * block;
  n -= lanes * block;
  while (n >= lanes * block) {
    x0 = _mm_xor_si128(fold(x0, k512), load(p));
    x1 = _mm_xor_si128(fold(x1, k512), load(p + block));
    x2 = _mm_xor_si128(fold(x2, k512), load(p + 2 * block));
    x3 = _mm_xor_si128(fold(x3, k512), load(p + 3 * block));
    p += lanes * block;
    n -= lanes * block;
  }
  const __m128i k128 = make(constants_for(128));
  __m128i x = _mm_xor_si128(
      _mm_xor_si128(fold(x0, make(constants_for(384))), fold(x1, make(constants_for(256)))),
      _mm_xor_si128(fold(x2, k128), x3));
  while (n >= block) {
    x = _mm_xor_si128(fold(x, k128), load(p));
    p += block;
    n -= block;
  }
  std::uint8_t rest[block];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(rest), x);
  return static_cast<std::uint16_t>(crc16_tables(crc16_tables(0, rest, block), p, n));
}

bool have_clmul() noexcept {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("pclmul") != 0;
  }();
  return yes;
}

#endif  // TGW_CRC16_CLMUL

}  // namespace

std::uint16_t crc16_ibm(std::span<const std::uint8_t> data) noexcept {
#ifdef TGW_CRC16_CLMUL
  if (data.size() >= clmul_min_size && have_clmul()) return crc16_clmul(data.data(), data.size());
#endif
  return static_cast<std::uint16_t>(crc16_tables(0, data.data(), data.size()));
}

}  // namespace tgw::codecs
