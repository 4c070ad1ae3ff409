// Writes the benchmark corpus as text, one frame per line, so that other decoders
// (the npm parsers in tests/bench/npm) can be timed on exactly the same bytes.
//
// Line format: <set> <records> <io_elements> <first_timestamp_ms> <first_latitude> <hex>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "tests/bench/codec_corpus.hpp"

namespace {

constexpr const char* usage =
    "usage: write_corpus FILE\n"
    "Writes the codec benchmark corpus to FILE: one TCP AVL frame per line as\n"
    "  <set> <records> <io_elements> <first_timestamp_ms> <first_latitude> <hex>\n"
    "with set one of 8E, 8, 16, stress. Lines starting with # are comments.\n";

std::string to_hex(std::span<const std::uint8_t> bytes) {
  constexpr char digits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (const std::uint8_t b : bytes) {
    s += digits[b >> 4];
    s += digits[b & 0x0F];
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(usage, argc == 2 ? stdout : stderr);
    return argc == 2 ? 0 : 2;
  }
  try {
    const auto sets = tgw::bench::make_codec_corpus();
    std::ofstream out(argv[1], std::ios::trunc);
    if (!out) {
      std::cerr << "write_corpus: cannot open " << argv[1] << '\n';
      return 1;
    }
    out << "# tgw codec benchmark corpus\n"
           "# set records io_elements first_timestamp_ms first_latitude hex\n";
    for (const auto& set : sets) {
      for (const auto& f : set.frames)
        out << set.name << ' ' << f.records << ' ' << f.io_elements << ' ' << f.first_timestamp_ms
            << ' ' << f.first_latitude << ' ' << to_hex(set.frame_bytes(f)) << '\n';
      std::cerr << "write_corpus: set " << set.name << ": " << set.frames.size() << " frames, "
                << set.bytes.size() << " bytes, " << set.records << " records\n";
    }
    out.close();
    if (!out) {
      std::cerr << "write_corpus: cannot write " << argv[1] << '\n';
      return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "write_corpus: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
