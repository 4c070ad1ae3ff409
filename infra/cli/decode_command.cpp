#include "infra/cli/decode_command.hpp"

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "infra/cli/frame_inspector.hpp"
#include "infra/cli/io_name_options.hpp"
#include "infra/telemetry/io_dictionary.hpp"
#include "infra/telemetry/named_io.hpp"
#include "infra/text/hex.hpp"

namespace tgw::infra {
namespace {

struct decode_settings {
  std::vector<std::string> hex_frames;
  std::string file;
  std::string crc = "strict";
  std::string transport = "auto";
  std::size_t max_frame_size = std::size_t{64} * 1024;
  bool pretty = false;
  io_name_options io_names;
};

// Adds to every IO element the dictionary knows its name, its value as io_named gives
// it ("named": the physical value, an error state, or the raw decimal) and its unit;
// the id and the raw value stay. A fixed-width element whose size on the wire is not the
// dictionary's also gets "dictionary_size": its value is read at the wire's size.
void add_io_names(json& frame, const telemetry::io_dictionary& names) {
  const auto records = frame.find("records");
  if (records == frame.end()) return;
  for (auto& record : *records) {
    const auto io = record.find("io");
    if (io == record.end()) continue;
    for (auto& element : *io) {
      const auto* info = names.find(element.at("id").get<std::uint16_t>());
      if (info == nullptr) continue;
      element["name"] = info->name;
      telemetry::stored_io_value stored{info->id, telemetry::stored_io_value::kind_t::integer, {}};
      if (const auto hex = element.find("hex"); hex != element.end()) {
        stored.kind = telemetry::stored_io_value::kind_t::bytes;
        stored.text = hex->get<std::string>();
      } else {
        stored.text = element.at("value").get<std::string>();
        stored.size = element.at("size").get<std::uint8_t>();
      }
      std::string named;
      telemetry::append_named_value(named, *info, stored);
      element["named"] = json::parse(named);
      if (!info->unit.empty()) element["unit"] = info->unit;
      if (const auto m = telemetry::size_mismatch(*info, stored))
        element["dictionary_size"] = m->dictionary_size;
    }
  }
}

class decoder_output {
 public:
  decoder_output(const decode_settings& settings, inspect_options options,
                 std::optional<telemetry::io_dictionary> names)
      : settings_(settings), options_(options), names_(std::move(names)) {}

  void blob(std::span<const std::uint8_t> bytes, std::size_t input_index) {
    const inspection result = inspect_blob(bytes, options_);
    failed_ |= result.failed;
    for (json frame : result.frames) {
      frame["input"] = input_index;
      if (names_) add_io_names(frame, *names_);
      print(frame);
    }
  }

  void bad_hex(std::size_t input_index) {
    failed_ = true;
    print({{"kind", "error"}, {"error", "bad_hex"}, {"input", input_index}});
  }

  [[nodiscard]] bool failed() const { return failed_; }

 private:
  void print(const json& j) const { std::cout << j.dump(settings_.pretty ? 2 : -1) << '\n'; }

  const decode_settings& settings_;
  inspect_options options_;
  std::optional<telemetry::io_dictionary> names_;
  bool failed_ = false;
};

int run_decode(const decode_settings& settings) {
  // An argument that is not hex is a usage error (exit 2), found before any output; a
  // line of stdin that is not hex is bad input, reported in line like a bad frame.
  for (std::size_t i = 0; i < settings.hex_frames.size(); ++i) {
    if (!parse_hex(settings.hex_frames[i])) {
      std::cerr << "tgw decode: argument " << i + 1 << " is not hex: '" << settings.hex_frames[i]
                << "' (hex digits, optionally separated by spaces)\n";
      return 2;
    }
  }
  inspect_options options;
  options.crc = settings.crc == "ignore" ? codecs::crc_policy::ignore : codecs::crc_policy::strict;
  options.transport = settings.transport == "tcp"   ? transport_hint::tcp
                      : settings.transport == "udp" ? transport_hint::udp
                                                    : transport_hint::automatic;
  options.max_frame_size = settings.max_frame_size;
  int exit_code = 0;
  auto names = load_io_names(settings.io_names, "tgw decode", exit_code);
  if (exit_code != 0) return exit_code;
  decoder_output out(settings, options, std::move(names));
  std::size_t index = 0;

  if (!settings.file.empty()) {
    std::ifstream in(settings.file, std::ios::binary);
    if (!in) {
      std::cerr << "tgw decode: cannot open " << settings.file << '\n';
      return 2;
    }
    const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in),
                                          std::istreambuf_iterator<char>()};
    out.blob(bytes, index++);
  }
  for (const std::string& text : settings.hex_frames) out.blob(*parse_hex(text), index++);
  if (settings.file.empty() && settings.hex_frames.empty()) {
    std::string line;
    while (std::getline(std::cin, line)) {
      if (line.empty() || line.front() == '#') continue;
      const auto bytes = parse_hex(line);
      if (bytes && !bytes->empty())
        out.blob(*bytes, index);
      else if (!bytes)
        out.bad_hex(index);
      ++index;
    }
  }
  return out.failed() ? 1 : 0;
}

}  // namespace

void add_decode_command(CLI::App& app, int& exit_code) {
  auto settings = std::make_shared<decode_settings>();
  CLI::App* cmd = app.add_subcommand(
      "decode",
      "Decode Teltonika frames (IMEI, TCP/UDP AVL, Codec 12/13/14/15) into JSON lines.\n"
      "Frames come from hex arguments, else from --file, else as hex lines on stdin.\n"
      "Exit code: 0 all frames valid, 1 some frame invalid (or a stdin line not hex), 2 usage\n"
      "or I/O error (an argument that is not hex, a file that cannot be read).");
  cmd->add_option("frames", settings->hex_frames, "Frames as hex (each may hold a TCP stream)");
  cmd->add_option("-f,--file", settings->file, "Binary file holding a TCP stream or one datagram")
      ->envname("TGW_DECODE_FILE")
      ->check(CLI::ExistingFile);
  cmd->add_option("--crc", settings->crc, "strict: refuse bad CRCs; ignore: decode and flag them")
      ->envname("TGW_DECODE_CRC")
      ->check(CLI::IsMember({"strict", "ignore"}))
      ->capture_default_str();
  cmd->add_option("--transport", settings->transport, "auto, tcp or udp")
      ->envname("TGW_DECODE_TRANSPORT")
      ->check(CLI::IsMember({"auto", "tcp", "udp"}))
      ->capture_default_str();
  cmd->add_option("--max-frame-size", settings->max_frame_size, "Largest TCP frame accepted")
      ->envname("TGW_DECODE_MAX_FRAME_SIZE")
      ->check(CLI::Range(std::size_t{16}, std::size_t{1} << 24))
      ->capture_default_str();
  cmd->add_flag("--pretty", settings->pretty, "Indent the JSON")->envname("TGW_DECODE_PRETTY");
  add_io_name_options(cmd, settings->io_names,
                      "Name each IO element the dictionary knows (\"name\"), with its "
                      "value as io_named gives it (\"named\": physical value, error state or "
                      "raw decimal) and \"unit\"; ids and raw values stay");
  cmd->callback([settings, &exit_code] { exit_code = run_decode(*settings); });
}

}  // namespace tgw::infra
