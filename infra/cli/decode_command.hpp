#pragma once

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds `tgw decode`: frames from hex arguments, hex lines on stdin or a binary file,
/// printed as one JSON object per frame. The exit code is 1 when any frame is invalid.
void add_decode_command(CLI::App& app, int& exit_code);

}  // namespace tgw::infra
