// The defaults `tgw serve` fills in from the host and the Redis it is given.

#include <algorithm>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "infra/cli/serve_options.hpp"

namespace tgw::infra {
namespace {

int half_the_cores() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 2);
}

app::gateway_plan plan_for(const std::string& redis_url, int writer_shards = 0) {
  serve_options o;
  o.redis_url = redis_url;
  o.writer_shards = writer_shards;
  std::string error;
  const auto plan = plan_gateway(o, error);
  EXPECT_TRUE(plan.has_value()) << error;
  return plan.value_or(app::gateway_plan{});
}

// A second writer keeps one server busy while the first waits for its replies.
TEST(ServePlan, OneServerGetsAtLeastTwoWriters) {
  EXPECT_EQ(plan_for("redis://127.0.0.1:6379").writer_shards, std::max(2, half_the_cores()));
  EXPECT_EQ(plan_for("redis+sentinel://127.0.0.1:26379/tgw").writer_shards,
            std::max(2, half_the_cores()));
}

// One writer's round trip is a pipeline to every master at once: a second one on few
// cores doubled the sends and wake-ups for no more throughput.
TEST(ServePlan, AClusterGetsAtLeastOneWriter) {
  EXPECT_EQ(plan_for("redis+cluster://127.0.0.1:7000,127.0.0.1:7001").writer_shards,
            std::max(1, half_the_cores()));
}

// The defaults are written once, in the plan; the settings start from them. Planning
// the default settings must give that plan back, field by field, through every
// conversion (seconds to milliseconds, text to enum): a default written again in the
// settings, or a conversion that loses it, fails here. Only what the host decides
// (instance id, thread counts) is left out.
TEST(ServePlan, TheDefaultSettingsPlanTheDefaultPlan) {
  std::string error;
  const auto planned_or = plan_gateway(serve_options{}, error);
  ASSERT_TRUE(planned_or.has_value()) << error;
  const app::gateway_plan& planned = *planned_or;
  const app::gateway_plan defaults;
#define TGW_EXPECT_DEFAULT(field) EXPECT_EQ(planned.field, defaults.field) << #field
  TGW_EXPECT_DEFAULT(bind);
  TGW_EXPECT_DEFAULT(port);
  TGW_EXPECT_DEFAULT(tls_port);
  TGW_EXPECT_DEFAULT(tls.has_value());
  TGW_EXPECT_DEFAULT(tls_gate.limit);
  TGW_EXPECT_DEFAULT(tls_gate.step_timeout);
  TGW_EXPECT_DEFAULT(tls_gate.grace);
  TGW_EXPECT_DEFAULT(proxy);
  TGW_EXPECT_DEFAULT(proxy_from.size());
  TGW_EXPECT_DEFAULT(proxy_from_text);
  using limits_of = net::address_limit_settings app::gateway_plan::*;
  for (const limits_of limits :
       {&app::gateway_plan::per_address, &app::gateway_plan::udp_per_address}) {
    SCOPED_TRACE(limits == &app::gateway_plan::per_address ? "per_address" : "udp_per_address");
    EXPECT_EQ((planned.*limits).connections_per_second, (defaults.*limits).connections_per_second);
    EXPECT_EQ((planned.*limits).burst, (defaults.*limits).burst);
    EXPECT_EQ((planned.*limits).handshakes, (defaults.*limits).handshakes);
    EXPECT_EQ((planned.*limits).ipv6_prefix, (defaults.*limits).ipv6_prefix);
    EXPECT_EQ((planned.*limits).sessions, (defaults.*limits).sessions);
    EXPECT_EQ((planned.*limits).new_devices_per_hour, (defaults.*limits).new_devices_per_hour);
    EXPECT_EQ((planned.*limits).new_devices_burst, (defaults.*limits).new_devices_burst);
  }
  TGW_EXPECT_DEFAULT(trusted_sources.size());
  TGW_EXPECT_DEFAULT(trusted_sources_text);
  TGW_EXPECT_DEFAULT(limits.max_frame_size);
  TGW_EXPECT_DEFAULT(limits.first_byte_timeout);
  TGW_EXPECT_DEFAULT(limits.handshake_timeout);
  TGW_EXPECT_DEFAULT(limits.idle_timeout);
  TGW_EXPECT_DEFAULT(limits.max_connections);
  TGW_EXPECT_DEFAULT(limits.max_frames_in_flight);
  TGW_EXPECT_DEFAULT(limits.max_write_queue_bytes);
  TGW_EXPECT_DEFAULT(limits.max_write_queue_writes);
  TGW_EXPECT_DEFAULT(limits.tcp_keepalive);
  TGW_EXPECT_DEFAULT(max_bad_frames);
  TGW_EXPECT_DEFAULT(udp_enabled);
  TGW_EXPECT_DEFAULT(udp_backlog);
  TGW_EXPECT_DEFAULT(udp.idle_timeout);
  TGW_EXPECT_DEFAULT(udp.max_devices);
  TGW_EXPECT_DEFAULT(udp.new_devices_per_hour);
  TGW_EXPECT_DEFAULT(udp.new_devices_burst);
  TGW_EXPECT_DEFAULT(log_budgets.interval);
  TGW_EXPECT_DEFAULT(log_budgets.refusal_lines);
  TGW_EXPECT_DEFAULT(log_budgets.session_lines);
  TGW_EXPECT_DEFAULT(allowlist_file);
  TGW_EXPECT_DEFAULT(allowlist_redis);
  TGW_EXPECT_DEFAULT(allowlist_refresh);
  TGW_EXPECT_DEFAULT(redis.has_value());
  TGW_EXPECT_DEFAULT(data_dir);
  TGW_EXPECT_DEFAULT(embedded_redis_restarts);
  TGW_EXPECT_DEFAULT(telemetry_shards);
  TGW_EXPECT_DEFAULT(scheduler);
  TGW_EXPECT_DEFAULT(cpu);
  TGW_EXPECT_DEFAULT(crc);
  TGW_EXPECT_DEFAULT(journal_maxlen);
  TGW_EXPECT_DEFAULT(telemetry_maxlen);
  TGW_EXPECT_DEFAULT(ack_replicas);
  TGW_EXPECT_DEFAULT(ack_replicas_timeout);
  TGW_EXPECT_DEFAULT(writer.linger);
  TGW_EXPECT_DEFAULT(writer.persist_retry);
  TGW_EXPECT_DEFAULT(readiness_window);
  TGW_EXPECT_DEFAULT(failure_log_interval);
  TGW_EXPECT_DEFAULT(registry.heartbeat_interval);
  TGW_EXPECT_DEFAULT(registry.heartbeat_ttl);
  TGW_EXPECT_DEFAULT(registry.failure_log_interval);
  TGW_EXPECT_DEFAULT(janitor.interval);
  TGW_EXPECT_DEFAULT(janitor.mode);
  TGW_EXPECT_DEFAULT(command_reader.journal_maxlen);
  TGW_EXPECT_DEFAULT(command_reader.failure_log_interval);
  TGW_EXPECT_DEFAULT(command_responder.journal_maxlen);
  TGW_EXPECT_DEFAULT(command_responder.failure_log_interval);
  TGW_EXPECT_DEFAULT(retention.trim);
  TGW_EXPECT_DEFAULT(retention.interval);
  TGW_EXPECT_DEFAULT(retention.ungrouped.maxlen);
  TGW_EXPECT_DEFAULT(retention.warn_interval);
  TGW_EXPECT_DEFAULT(command_queue);
  TGW_EXPECT_DEFAULT(command_timeout);
  TGW_EXPECT_DEFAULT(command_max_payload);
  TGW_EXPECT_DEFAULT(allow_command_control_chars);
  TGW_EXPECT_DEFAULT(capture.has_value());
  TGW_EXPECT_DEFAULT(metrics_addr);
  TGW_EXPECT_DEFAULT(api.has_value());
  TGW_EXPECT_DEFAULT(drain_timeout);
#undef TGW_EXPECT_DEFAULT
}

// Recording is off by default; asked for, its rotation is the capture library's own.
TEST(ServePlan, ACaptureDirectoryPlansTheDefaultRotation) {
  serve_options o;
  o.capture_dir = "captures";
  std::string error;
  const auto plan = plan_gateway(o, error);
  ASSERT_TRUE(plan && plan->capture) << error;
  const capture::rotation_policy defaults;
  EXPECT_EQ(plan->capture->max_file_bytes, defaults.max_file_bytes);
  EXPECT_EQ(plan->capture->max_age, defaults.max_age);
  EXPECT_EQ(plan->capture->max_total_bytes, defaults.max_total_bytes);
}

TEST(ServePlan, WritersGivenAreWritersPlanned) {
  EXPECT_EQ(plan_for("redis+cluster://127.0.0.1:7000", 3).writer_shards, 3);
  EXPECT_EQ(plan_for("redis://127.0.0.1:6379", 1).writer_shards, 1);
}

}  // namespace
}  // namespace tgw::infra
