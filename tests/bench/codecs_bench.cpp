// Throughput of the codec library over the generated corpus (see codec_corpus.hpp):
// AVL frame decoding per codec, a memcpy of the same frames as the ceiling to compare
// it with, the CRC alone, and the TCP framer splitting a device stream.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "codecs/avl_decode.hpp"
#include "codecs/crc16.hpp"
#include "codecs/tcp_framer.hpp"
#include "tests/bench/codec_corpus.hpp"

namespace tgw::bench {
namespace {

const std::vector<corpus_set>& corpus() {
  static const std::vector<corpus_set> sets = make_codec_corpus();
  return sets;
}

const corpus_set& set_named(std::string_view name) {
  for (const corpus_set& s : corpus())
    if (s.name == name) return s;
  throw std::invalid_argument("no corpus set named " + std::string(name));
}

void set_throughput(benchmark::State& state, std::size_t bytes, std::uint64_t records,
                    std::size_t frames) {
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.counters["records/s"] = benchmark::Counter(static_cast<double>(records),
                                                   benchmark::Counter::kIsIterationInvariantRate);
  state.counters["frames/s"] = benchmark::Counter(static_cast<double>(frames),
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

// decode_avl_frame over every frame of a set, CRC checked, into one reused packet.
void decode(benchmark::State& state, std::string_view name) {
  const corpus_set& set = set_named(name);
  codecs::avl_packet packet;
  // One untimed pass grows the packet's vectors to the largest frame, so the timed
  // loop measures decoding alone and allocates nothing, as a gateway's steady state.
  for (const corpus_frame& f : set.frames)
    (void)codecs::decode_avl_frame(set.frame_bytes(f), packet);
  std::uint64_t records = 0;
  for (auto _ : state) {
    for (const corpus_frame& f : set.frames) {
      const auto status = codecs::decode_avl_frame(set.frame_bytes(f), packet);
      if (!status.ok()) {
        state.SkipWithError("a corpus frame failed to decode");
        return;
      }
      records += packet.records.size();
    }
  }
  benchmark::DoNotOptimize(records);
  set_throughput(state, set.bytes.size(), set.records, set.frames.size());
}

// The same frames copied one by one: what touching the bytes costs at the least.
void copy(benchmark::State& state, std::string_view name) {
  const corpus_set& set = set_named(name);
  std::size_t largest = 0;
  for (const corpus_frame& f : set.frames) largest = std::max(largest, f.size);
  std::vector<std::uint8_t> target(largest);
  benchmark::DoNotOptimize(target.data());
  for (auto _ : state) {
    for (const corpus_frame& f : set.frames) {
      std::memcpy(target.data(), set.bytes.data() + f.offset, f.size);
      // Each copy must happen: without this the compiler may keep only the last.
      benchmark::ClobberMemory();
    }
  }
  set_throughput(state, set.bytes.size(), set.records, set.frames.size());
}

// CRC-16/IBM over the AVL data of every 8E frame, as decode_avl_frame computes it.
void crc16(benchmark::State& state) {
  const corpus_set& set = set_named("8E");
  std::size_t bytes = 0;
  for (const corpus_frame& f : set.frames)
    bytes += f.size - codecs::tcp_frame_header - codecs::tcp_frame_trailer;
  std::uint32_t sink = 0;
  for (auto _ : state) {
    for (const corpus_frame& f : set.frames) {
      const auto frame = set.frame_bytes(f);
      sink += codecs::crc16_ibm(frame.subspan(
          codecs::tcp_frame_header, f.size - codecs::tcp_frame_header - codecs::tcp_frame_trailer));
    }
  }
  benchmark::DoNotOptimize(sink);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}

// The tcp_framer splitting the 8E, 8 and 16 frames sent back to back, fed in
// segments of a typical TCP MSS (1460 bytes) as a socket read would deliver them.
void framer(benchmark::State& state) {
  std::vector<std::uint8_t> stream;
  std::size_t frames = 0;
  std::uint64_t records = 0;
  for (const std::string_view name : {"8E", "8", "16"}) {
    const corpus_set& set = set_named(name);
    stream.insert(stream.end(), set.bytes.begin(), set.bytes.end());
    frames += set.frames.size();
    records += set.records;
  }
  constexpr std::size_t segment = 1460;
  codecs::tcp_framer splitter(codecs::default_max_frame_size, /*expect_imei=*/false);
  std::size_t seen = 0;
  for (auto _ : state) {
    for (std::size_t pos = 0; pos < stream.size(); pos += segment) {
      const std::size_t n = std::min(segment, stream.size() - pos);
      std::memcpy(splitter.prepare(n).data(), stream.data() + pos, n);
      splitter.commit(n);
      for (;;) {
        const codecs::frame_result r = splitter.next();
        if (r.status.code == codecs::errc::need_more) break;
        if (!r.status.ok()) {
          state.SkipWithError("the framer refused the corpus stream");
          return;
        }
        ++seen;
      }
    }
  }
  if (seen != frames * static_cast<std::size_t>(state.iterations()))
    state.SkipWithError("the framer lost frames");
  set_throughput(state, stream.size(), records, frames);
}

BENCHMARK_CAPTURE(decode, 8E, "8E");
BENCHMARK_CAPTURE(decode, 8, "8");
BENCHMARK_CAPTURE(decode, 16, "16");
BENCHMARK_CAPTURE(decode, stress, "stress");
BENCHMARK_CAPTURE(copy, 8E, "8E");
BENCHMARK_CAPTURE(copy, 8, "8");
BENCHMARK_CAPTURE(copy, 16, "16");
BENCHMARK_CAPTURE(copy, stress, "stress");
BENCHMARK(crc16);
BENCHMARK(framer);

}  // namespace
}  // namespace tgw::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // The corpus shape goes into the report's context, for the summary and for readers.
  for (const auto& set : tgw::bench::corpus()) {
    const std::string prefix = "corpus_" + set.name + "_";
    benchmark::AddCustomContext(prefix + "frames", std::to_string(set.frames.size()));
    benchmark::AddCustomContext(prefix + "bytes", std::to_string(set.bytes.size()));
    benchmark::AddCustomContext(prefix + "records", std::to_string(set.records));
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
