#pragma once

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds `tgw api` (the application API: docs/API.md) and `tgw api token add|list|revoke`.
void add_api_command(CLI::App& app, int& exit_code);

}  // namespace tgw::infra
