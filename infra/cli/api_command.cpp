#include "infra/cli/api_command.hpp"

#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "infra/api/api_server.hpp"
#include "infra/api/tokens.hpp"
#include "infra/cli/api_options.hpp"
#include "infra/cli/io_name_options.hpp"
#include "infra/cli/log_options.hpp"
#include "infra/cli/redis_choice.hpp"
#include "infra/log/log.hpp"
#include "infra/process/termination.hpp"
#include "infra/text/human_time.hpp"

namespace tgw::infra {
namespace {

constexpr const char* me = "tgw api";

struct api_options {
  redis_choice redis;
  api::api_server_settings server;
  api_flag_values flags;
  io_name_options io_names;
  std::string log_level = "info";
  std::string log_format = "text";
};

int run_api(api_options& o) {
  setup_logging(o.log_level, o.log_format);
  std::string error;
  if (!apply_api_flags(o.flags, o.server, error)) {
    std::cerr << me << ": " << error << '\n';
    return 2;
  }
  if (const std::string problem = api::settings_problem(o.server); !problem.empty()) {
    std::cerr << me << ": " << problem << '\n';
    return 2;
  }
  int usage_code = 0;
  const auto names = load_io_dictionary(o.io_names, me, usage_code);
  if (!names) return usage_code;
  bool usage = false;
  const auto where = resolve_redis(o.redis, error, usage);
  if (!where) {
    std::cerr << me << ": " << error << '\n';
    return usage ? 2 : 1;
  }
  const redis::connection::options redis{*where, std::chrono::milliseconds{2000},
                                         std::chrono::milliseconds{5000}, "tgw-api"};
  auto server = api::api_server::start(o.server, redis, &*names, error);
  if (!server) {
    std::cerr << me << ": " << error << '\n';
    return 1;
  }
  spdlog::info(
      "{}: serving {}://{} on {} ({})", me, o.server.tls_cert.empty() ? "http" : "https",
      o.server.listen, where->describe(),
      o.server.no_auth ? "no authentication: --no-auth" : "tokens from " + o.server.tokens_file);
  for (;;) {
    const int signal = process::wait_for_signal();
    if (signal != SIGHUP) break;
    std::string report;
    if (server->reload(report))
      spdlog::info("{}: SIGHUP: {}", me, report);
    else
      spdlog::warn("{}: SIGHUP: {}", me, report);
  }
  spdlog::info("{}: stopping", me);
  server.reset();
  return 0;
}

void add_token_commands(CLI::App* api, int& exit_code) {
  CLI::App* token = api->add_subcommand(
      "token",
      "Manage the API's bearer tokens in a tokens file: only each token's SHA-256 is kept, with\n"
      "its name (the publisher of the commands it sends) and scopes. A running tgw api reads\n"
      "the file again on SIGHUP.");
  token->require_subcommand(1);
  struct token_options {
    std::string name;
    std::string scopes = "read";
    std::string file;
  };
  auto o = std::make_shared<token_options>();
  const auto file_option = [&o](CLI::App* cmd) {
    cmd->add_option("--tokens", o->file, "The tokens file")->envname("TGW_API_TOKENS")->required();
  };

  CLI::App* add = token->add_subcommand(
      "add", "Create a token: prints it once (it is not kept); stores its hash, name and scopes");
  add->add_option("NAME", o->name, "Who holds it (letters, digits, '.', '_', '@', '-')")
      ->required();
  add->add_option("--scopes", o->scopes, "What it may do: read, command, events (comma-separated)")
      ->envname("TGW_API_TOKEN_SCOPES")
      ->capture_default_str();
  file_option(add);
  add->callback([o, &exit_code] {
    std::string error;
    if (const std::string problem = api::token_name_problem(o->name); !problem.empty()) {
      std::cerr << me << " token add: " << problem << '\n';
      exit_code = 2;
      return;
    }
    const auto scopes = api::parse_scopes(o->scopes, error);
    if (!scopes) {
      std::cerr << me << " token add: --scopes: " << error << '\n';
      exit_code = 2;
      return;
    }
    auto table = api::read_token_file(o->file, true, error);
    if (!table) {
      std::cerr << me << " token add: " << error << '\n';
      exit_code = 1;
      return;
    }
    const std::string secret = api::new_token();
    if (secret.empty()) {
      std::cerr << me << " token add: OpenSSL has no randomness to give; nothing written\n";
      exit_code = 1;
      return;
    }
    if (!table->add({o->name, *scopes, api::sha256_hex(secret), now_ms()})) {
      std::cerr << me << " token add: a token named '" << o->name << "' exists in " << o->file
                << "; revoke it first, or choose another name\n";
      exit_code = 1;
      return;
    }
    if (!api::write_token_file(o->file, *table, error)) {
      std::cerr << me << " token add: " << error << '\n';
      exit_code = 1;
      return;
    }
    std::cout << secret << '\n';
    std::cerr << "token '" << o->name << "' (" << api::scopes_text(*scopes) << ") added to "
              << o->file << "; it is shown once. A running tgw api takes it on SIGHUP.\n";
  });

  CLI::App* list = token->add_subcommand("list", "The tokens of a file: name, scopes, created");
  file_option(list);
  list->callback([o, &exit_code] {
    std::string error;
    const auto table = api::read_token_file(o->file, false, error);
    if (!table) {
      std::cerr << me << " token list: " << error << '\n';
      exit_code = 1;
      return;
    }
    for (const auto& e : table->entries())
      std::cout << e.name << '\t' << api::scopes_text(e.scopes) << '\t' << utc_time(e.created_ms)
                << '\n';
  });

  CLI::App* revoke = token->add_subcommand("revoke", "Remove a token from the file");
  revoke->add_option("NAME", o->name, "The token's name")->required();
  file_option(revoke);
  revoke->callback([o, &exit_code] {
    std::string error;
    auto table = api::read_token_file(o->file, false, error);
    if (!table) {
      std::cerr << me << " token revoke: " << error << '\n';
      exit_code = 1;
      return;
    }
    if (!table->remove(o->name)) {
      std::cerr << me << " token revoke: no token named '" << o->name << "' in " << o->file << '\n';
      exit_code = 1;
      return;
    }
    if (!api::write_token_file(o->file, *table, error)) {
      std::cerr << me << " token revoke: " << error << '\n';
      exit_code = 1;
      return;
    }
    std::cerr << "token '" << o->name << "' revoked in " << o->file
              << "; a running tgw api drops it on SIGHUP.\n";
  });
}

}  // namespace

void add_api_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<api_options>();
  CLI::App* cmd = app.add_subcommand(
      "api",
      "The application API: HTTP/1.1 (and TLS) for back offices: devices, records, commands\n"
      "with their outcome, and live events (Server-Sent Events), with bearer tokens\n"
      "(docs/API.md). Stateless: several run behind a balancer on the same Redis. Exit code:\n"
      "0 stopped (SIGTERM, Ctrl-C), 1 Redis unreachable or the address taken, 2 usage error.");
  cmd->require_subcommand(0, 1);
  add_redis_options(cmd, o->redis);
  add_api_options(cmd, o->server, o->flags, "TGW_API", false);
  add_io_name_options(cmd, o->io_names, "", false);
  add_log_options(cmd, o->log_level, o->log_format);
  add_token_commands(cmd, exit_code);
  cmd->callback([o, cmd, &exit_code] {
    if (!cmd->get_subcommands().empty()) return;  // tgw api token ...
    exit_code = run_api(*o);
  });
}

}  // namespace tgw::infra
