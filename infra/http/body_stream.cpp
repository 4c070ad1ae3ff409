#include "infra/http/body_stream.hpp"

namespace tgw::infra::http {
namespace {

class ended_stream final : public body_stream {
 public:
  push_result push(std::shared_ptr<const std::string>) override { return push_result::ended; }
  void end(std::string) override {}
  void cut(std::string) override {}
  [[nodiscard]] bool ended() const override { return true; }
  [[nodiscard]] std::size_t queued_bytes() const override { return 0; }
  void on_end(std::function<void()> done) override {
    if (done) done();
  }
};

}  // namespace

std::shared_ptr<body_stream> ended_body_stream() {
  return std::make_shared<ended_stream>();
}

}  // namespace tgw::infra::http
