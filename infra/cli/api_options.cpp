#include "infra/cli/api_options.hpp"

#include <CLI/CLI.hpp>

#include "infra/cli/listen_address.hpp"
#include "infra/cli/value_checks.hpp"
#include "infra/text/duration.hpp"

namespace tgw::infra {

void add_api_options(CLI::App* cmd, api::api_server_settings& s, api_flag_values& flags,
                     const std::string& env_prefix, bool in_serve) {
  const std::string p = in_serve ? "--api-" : "--";
  const auto env = [&](const std::string& name) { return env_prefix + "_" + name; };
  if (in_serve) {
    s.listen.clear();
    cmd->add_option("--api-addr", s.listen,
                    "Serve the application API here too (host:port, docs/API.md); off when "
                    "empty. For small set-ups: tgw api runs it on its own")
        ->envname(env("ADDR"))
        ->check(listen_address());
  } else {
    cmd->add_option("--listen", s.listen, "Where to serve the API (host:port)")
        ->envname(env("LISTEN"))
        ->check(listen_address())
        ->capture_default_str();
  }
  cmd->add_option(p + "tokens", s.tokens_file,
                  "The tokens file (tgw api token add); re-read on SIGHUP")
      ->envname(env("TOKENS"));
  cmd->add_flag(p + "no-auth", s.no_auth,
                "Let every request in without a token; only on a loopback address")
      ->envname(env("NO_AUTH"));
  cmd->add_option(p + "tls-cert", s.tls_cert,
                  "Serve HTTPS with this certificate (PEM, chain after it); with " + p +
                      "tls-key; re-read on SIGHUP")
      ->envname(env("TLS_CERT"));
  cmd->add_option(p + "tls-key", s.tls_key, "The certificate's private key (PEM)")
      ->envname(env("TLS_KEY"));
  cmd->add_option(p + "seen-within", flags.seen_within,
                  "GET /v1/devices lists the devices online, and those seen within this")
      ->envname(env("SEEN_WITHIN"))
      ->check(duration_check())
      ->capture_default_str();
  cmd->add_option(p + "workers", s.api.workers,
                  "Threads that run the API's Redis work, each with its own connection")
      ->envname(env("WORKERS"))
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option(p + "queue", s.api.max_queued,
                  "Requests that may wait for a worker; more are answered 503 overloaded")
      ->envname(env("QUEUE"))
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option(p + "max-waits", s.api.max_waits,
                  "Requests that may await a command's outcome (?wait) at once; more are "
                  "answered 503 too_many_waits")
      ->envname(env("MAX_WAITS"))
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option(p + "max-wait", flags.max_wait, "The longest ?wait a request may ask for")
      ->envname(env("MAX_WAIT"))
      ->check(duration_check())
      ->capture_default_str();
  cmd->add_option(p + "max-event-clients", s.max_event_clients,
                  "Clients that may follow /v1/events at once; more are answered 503")
      ->envname(env("MAX_EVENT_CLIENTS"))
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option(p + "event-buffer", s.limits.max_stream_queue_bytes,
                  "Bytes of events an event client may have waiting; a client that falls "
                  "further behind is cut off with a last event saying why")
      ->envname(env("EVENT_BUFFER"))
      ->check(CLI::Range(std::size_t{4096}, std::size_t{1} << 30))
      ->capture_default_str();
  cmd->add_option(p + "rate", s.rate_per_token, "Requests a second each token may make")
      ->envname(env("RATE"))
      ->check(CLI::Range(0.1, 1e6))
      ->capture_default_str();
  cmd->add_option(p + "burst", s.rate_burst, "Requests a token may make at once above its rate")
      ->envname(env("BURST"))
      ->check(CLI::Range(1.0, 1e6))
      ->capture_default_str();
  cmd->add_option(p + "idempotency-ttl", flags.idempotency_ttl,
                  "How long an Idempotency-Key is kept (24h at least)")
      ->envname(env("IDEMPOTENCY_TTL"))
      ->check(duration_check())
      ->capture_default_str();
  cmd->add_option(p + "command-max-payload", s.api.commands.max_text_bytes,
                  "The longest command text, in bytes")
      ->envname(env("COMMAND_MAX_PAYLOAD"))
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  cmd->add_flag(p + "allow-command-control-chars", s.api.commands.allow_control_characters,
                "Accept command texts with control characters (the gateway must allow them "
                "too: --allow-command-control-chars)")
      ->envname(env("ALLOW_COMMAND_CONTROL_CHARS"));
  cmd->add_option(p + "io-threads", s.io_threads, "Threads serving the API's sockets")
      ->envname(env("IO_THREADS"))
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option(p + "max-connections", s.limits.max_connections,
                  "Connections the API holds at once; more are closed on accept")
      ->envname(env("MAX_CONNECTIONS"))
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option(p + "per-address-connections", s.limits.max_connections_per_address,
                  "Connections one client address may hold at once (0: no cap)")
      ->envname(env("PER_ADDRESS_CONNECTIONS"))
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
}

bool apply_api_flags(const api_flag_values& flags, api::api_server_settings& s,
                     std::string& error) {
  const auto seen = parse_duration(flags.seen_within);
  const auto wait = parse_duration(flags.max_wait);
  const auto ttl = parse_duration(flags.idempotency_ttl);
  if (!seen || !wait || !ttl) {
    error = "a duration flag is not a duration";
    return false;
  }
  if (*ttl < std::chrono::hours{24}) {
    error = "--idempotency-ttl " + flags.idempotency_ttl +
            ": keys are kept 24h at least, so that a client's retries within a day never "
            "send a command twice";
    return false;
  }
  if (*wait < std::chrono::seconds{1} || *wait > std::chrono::hours{1}) {
    error = "--max-wait " + flags.max_wait + ": from 1s to 1h";
    return false;
  }
  s.api.seen_within_ms = seen->count();
  s.api.max_wait_s = std::chrono::duration_cast<std::chrono::seconds>(*wait).count();
  s.api.idempotency_ttl = std::chrono::duration_cast<std::chrono::seconds>(*ttl);
  return true;
}

}  // namespace tgw::infra
