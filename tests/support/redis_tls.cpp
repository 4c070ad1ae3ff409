#include "tests/support/redis_tls.hpp"

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace tgw::test {

const redis_tls_files& redis_tls_files::shared() {
  static const redis_tls_files files = [] {
    redis_tls_files f;
    char tmpl[] = "/tmp/tgw-redis-tls-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    f.dir = tmpl;
    f.ca = make_ca(f.dir, "redis-ca");
    f.server = make_signed(f.dir, "redis-server", f.ca, 2, {"IP:127.0.0.1,DNS:localhost"});
    f.client_pem = make_signed(f.dir, "redis-client", f.ca, 3, {"DNS:tgw"});
    return f;
  }();
  // Removed when the test binary exits, after the servers that read it were stopped.
  static const struct remover {
    std::string dir;
    ~remover() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{files.dir};
  return files;
}

std::vector<std::string> redis_tls_files::server_args(std::uint16_t port, bool auth_clients) const {
  return {"--port",
          "0",
          "--tls-port",
          std::to_string(port),
          "--tls-cert-file",
          server.cert,
          "--tls-key-file",
          server.key,
          "--tls-ca-cert-file",
          ca.cert,
          "--tls-auth-clients",
          auth_clients ? "yes" : "no",
          "--tls-replication",
          "yes",
          "--tls-cluster",
          "yes"};
}

std::string redis_tls_files::server_config(std::uint16_t port) const {
  return "port 0\ntls-port " + std::to_string(port) + "\ntls-cert-file " + server.cert +
         "\ntls-key-file " + server.key + "\ntls-ca-cert-file " + ca.cert +
         "\ntls-auth-clients no\ntls-replication yes\n";
}

infra::redis::tls_options redis_tls_files::client(bool with_certificate) const {
  infra::redis::tls_options o;
  o.enabled = true;
  o.ca_file = ca.cert;
  if (with_certificate) {
    o.cert_file = client_pem.cert;
    o.key_file = client_pem.key;
  }
  return o;
}

std::string redis_tls_files::flags(bool with_certificate) const {
  std::string out = " --redis-tls-ca " + ca.cert;
  if (with_certificate)
    out += " --redis-tls-cert " + client_pem.cert + " --redis-tls-key " + client_pem.key;
  return out;
}

}  // namespace tgw::test
