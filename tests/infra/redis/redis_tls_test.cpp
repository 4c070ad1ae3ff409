// TLS to Redis (rediss://) against Debian's redis-server with --tls-port: the link's
// commands, pipelines and blocking reads over OpenSSL; client certificates; and each
// failure a managed Redis can give, with the one line that names it and its fix.
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "infra/redis/connection.hpp"
#include "infra/redis/failure_cause.hpp"
#include "infra/redis/link_errors.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/redis_tls.hpp"
#include "tests/support/run_tgw.hpp"

namespace tgw::infra::redis {
namespace {

using namespace std::chrono_literals;
using test::redis_server;
using test::redis_tls_files;
using test::redis_transport;

connection connect_to(const endpoint& where, std::chrono::milliseconds io = 2000ms) {
  return connection({where, 2000ms, io, "tls-test"});
}

/// Why connecting to `where` failed, classified as tgw reports it.
ports::failure_cause refusal(const endpoint& where) {
  connection c = connect_to(where);
  std::string error;
  EXPECT_FALSE(c.ensure_connected(error)) << where.describe();
  return redis::classify_redis_failure("IO " + error);
}

void expect_cause(const ports::failure_cause& cause, std::string_view label,
                  std::string_view phrase, std::string_view fix) {
  EXPECT_EQ(cause.label, label) << ports::describe(cause);
  EXPECT_NE(cause.detail.find(phrase), std::string::npos) << ports::describe(cause);
  EXPECT_NE(cause.fix.find(fix), std::string::npos) << ports::describe(cause);
  EXPECT_TRUE(redis::is_setup_failure(cause) || label == "timeout") << ports::describe(cause);
}

TEST(RedisTls, CommandsPipelinesAndLargeRepliesGoThroughTls) {
  redis_server server(false, redis_transport::tls);
  connection c = connect_to(server.endpoint());
  EXPECT_EQ(c.command({"PING"}).text, "PONG");
  // More than one TLS record (16 KiB) each way, and more than the link's read buffer.
  const std::string big(1'000'000, 'x');
  EXPECT_EQ(c.command({"SET", "big", big}).text, "OK");
  EXPECT_EQ(c.command({"GET", "big"}).text, big);
  std::vector<std::vector<std::string>> many;
  for (int i = 0; i < 2000; ++i) many.push_back({"INCR", "n"});
  const auto replies = c.pipeline(many);
  ASSERT_EQ(replies.size(), 2000U);
  EXPECT_EQ(replies.back().integer, 2000);
  EXPECT_EQ(c.server(), "rediss://127.0.0.1:" + std::to_string(server.port()) + "/0");
}

// XREADGROUP BLOCK under TLS: the read waits for the server's answer, up to the IO
// timeout and no longer.
TEST(RedisTls, BlockingReadsKeepTheirDeadlines) {
  redis_server server(false, redis_transport::tls);
  connection c = connect_to(server.endpoint(), 1000ms);
  ASSERT_EQ(c.command({"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"}).text, "OK");
  // A BLOCK shorter than the IO timeout ends with the server's nil.
  EXPECT_TRUE(
      c.command({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "200", "STREAMS", "s", ">"}).is_nil());
  // One longer is cut at the IO timeout, with a message that names it.
  const value cut =
      c.command({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">"});
  ASSERT_TRUE(cut.is_error());
  EXPECT_NE(cut.text.find(link_errors::silent), std::string::npos) << cut.text;
  EXPECT_NE(cut.text.find("1000 ms"), std::string::npos) << cut.text;
  EXPECT_FALSE(c.connected());
  EXPECT_EQ(c.command({"PING"}).text, "PONG");  // a fresh connection
}

TEST(RedisTls, AServerThatAsksForClientCertificatesGetsThem) {
  redis_server server(false, redis_transport::tls_client_certificates);
  connection c = connect_to(server.endpoint());
  EXPECT_EQ(c.command({"PING"}).text, "PONG");

  endpoint without = server.endpoint();
  without.tls.cert_file.clear();
  without.tls.key_file.clear();
  expect_cause(refusal(without), "tls", link_errors::tls_client_certificate_required,
               "--redis-tls-cert");

  // A certificate of another CA is refused by the server.
  const auto& files = redis_tls_files::shared();
  const test::pem_files rogue_ca = test::make_ca(files.dir, "rogue-client-ca");
  const test::pem_files rogue = test::make_signed(files.dir, "rogue-client", rogue_ca, 9);
  endpoint other = server.endpoint();
  other.tls.cert_file = rogue.cert;
  other.tls.key_file = rogue.key;
  expect_cause(refusal(other), "tls", link_errors::tls_client_certificate_refused,
               "tls-ca-cert-file");
}

TEST(RedisTls, ACertificateOfAnotherCaIsRefusedNamingTheCaOption) {
  redis_server server(false, redis_transport::tls);
  const auto& files = redis_tls_files::shared();
  const test::pem_files other_ca = test::make_ca(files.dir, "other-ca");
  endpoint where = server.endpoint();
  where.tls.ca_file = other_ca.cert;
  expect_cause(refusal(where), "tls", link_errors::tls_untrusted, "--redis-tls-ca");
  // Without --redis-tls-ca the system's store knows nothing of a private CA either.
  where.tls.ca_file.clear();
  expect_cause(refusal(where), "tls", link_errors::tls_untrusted, "--redis-tls-ca");
}

TEST(RedisTls, ANameTheCertificateDoesNotHoldIsRefused) {
  redis_server server(false, redis_transport::tls);
  endpoint where = server.endpoint();
  where.tls.server_name = "redis.example.com";
  const auto cause = refusal(where);
  expect_cause(cause, "tls", link_errors::tls_name_mismatch, "--redis-tls-server-name");
  EXPECT_NE(cause.detail.find("redis.example.com"), std::string::npos) << cause.detail;
  EXPECT_NE(cause.detail.find("localhost"), std::string::npos) << cause.detail;
  // A name it holds, given for an address: accepted.
  where.tls.server_name = "localhost";
  EXPECT_EQ(connect_to(where).command({"PING"}).text, "PONG");
}

TEST(RedisTls, AnExpiredServerCertificateIsRefused) {
  const auto& files = redis_tls_files::shared();
  const test::pem_files expired =
      test::make_signed(files.dir, "expired", files.ca, 11, {"IP:127.0.0.1", -30, -1});
  const std::uint16_t port = test::free_port();
  const std::string dir = files.dir;
  test::child_process redis(
      {"redis-server", "--port", "0", "--tls-port", std::to_string(port), "--tls-cert-file",
       expired.cert, "--tls-key-file", expired.key, "--tls-ca-cert-file", files.ca.cert,
       "--tls-auth-clients", "no", "--save", "", "--dir", dir},
      dir + "/expired-redis.log");
  endpoint where;
  where.port = port;
  where.tls = files.client();
  ports::failure_cause cause;
  for (int i = 0; i < 100; ++i) {
    cause = refusal(where);
    if (cause.label != "connection") break;  // not listening yet
    std::this_thread::sleep_for(50ms);
  }
  expect_cause(cause, "tls", link_errors::tls_expired, "renew");
}

// The two ways round of a scheme that does not fit the port.
TEST(RedisTls, TlsAgainstAPlainPortAndPlainAgainstATlsPortAreNamed) {
  redis_server plain;
  endpoint tls_to_plain = plain.endpoint();
  tls_to_plain.tls = redis_tls_files::shared().client();
  expect_cause(refusal(tls_to_plain), "tls", link_errors::tls_handshake_silent, "use redis://");

  redis_server tls(false, redis_transport::tls);
  endpoint plain_to_tls = tls.endpoint();
  plain_to_tls.tls = {};
  expect_cause(refusal(plain_to_tls), "tls", link_errors::closed_before_reply, "use rediss://");
}

TEST(RedisTls, UnreadableTlsFilesAreNamed) {
  redis_server server(false, redis_transport::tls);
  endpoint where = server.endpoint();
  where.tls.ca_file = "/nonexistent/ca.pem";
  const auto cause = refusal(where);
  expect_cause(cause, "tls", "/nonexistent/ca.pem", "--redis-tls-ca");
}

// The same failures at `tgw serve`'s start: exit 2 (a set-up error), one error line that
// names the cause, and the device port never opens.
TEST(RedisTls, EachTlsFailureStopsServeAtStartWithExit2AndOneLine) {
  redis_server tls(false, redis_transport::tls);
  redis_server tls_certs(false, redis_transport::tls_client_certificates);
  redis_server plain;
  const auto& files = redis_tls_files::shared();
  const test::pem_files other_ca = test::make_ca(files.dir, "serve-other-ca");
  const std::string ca = " --redis-tls-ca " + files.ca.cert;
  const std::string at_tls = " --redis " + tls.url();
  const std::pair<std::string, std::string_view> cases[] = {
      {at_tls + " --redis-tls-ca " + other_ca.cert, link_errors::tls_untrusted},
      {at_tls + ca + " --redis-tls-server-name redis.example.com", link_errors::tls_name_mismatch},
      {" --redis rediss://127.0.0.1:" + std::to_string(plain.port()) + ca,
       link_errors::tls_handshake_silent},
      {" --redis redis://127.0.0.1:" + std::to_string(tls.port()),
       link_errors::closed_before_reply},
      {" --redis " + tls_certs.url() + ca, link_errors::tls_client_certificate_required},
  };
  for (const auto& [flags, phrase] : cases) {
    const auto r = test::run_tgw("serve --port 0 --metrics-addr '' --log-format text" + flags);
    EXPECT_EQ(r.exit_code, 2) << flags << ": " << r.out;
    EXPECT_NE(r.out.find(phrase), std::string::npos) << flags << ": " << r.out;
    std::size_t errors = 0;
    for (auto at = r.out.find(" error "); at != std::string::npos;
         at = r.out.find(" error ", at + 1))
      ++errors;
    EXPECT_EQ(errors, 1U) << r.out;
    EXPECT_EQ(r.out.find("listening"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace tgw::infra::redis
