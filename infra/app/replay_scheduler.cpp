#include "infra/app/replay_scheduler.hpp"

#include <deque>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/detail/simple_actor_clock.hpp>
#include <caf/execution_unit.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>

namespace tgw::infra::app {
namespace {

// The jobs of one replay, run by whoever calls run(): CAF's coordinator interface
// over a queue, with no thread of its own.
class replay_scheduler final : public caf::scheduler::abstract_coordinator {
 public:
  explicit replay_scheduler(caf::actor_system& sys) : abstract_coordinator(sys), unit_(*this) {}
  replay_scheduler(const replay_scheduler&) = delete;
  replay_scheduler& operator=(const replay_scheduler&) = delete;
  ~replay_scheduler() override {
    // Jobs left when the system is gone hold a reference each.
    for (caf::resumable* job : jobs_) intrusive_ptr_release(job);
  }

  void enqueue(caf::resumable* job) override { jobs_.push_back(job); }
  caf::actor_clock& clock() noexcept override { return clock_; }

  /// One message at a time: an actor with more to do goes on before the next job, so
  /// that what one message causes is handled in the order it was sent.
  std::size_t run() {
    std::size_t runs = 0;
    while (!jobs_.empty()) {
      caf::resumable* job = jobs_.front();
      jobs_.pop_front();
      switch (job->resume(&unit_, 1)) {
        case caf::resumable::resume_later:
          jobs_.push_front(job);
          break;
        case caf::resumable::done:
        case caf::resumable::awaiting_message:
          intrusive_ptr_release(job);
          break;
        case caf::resumable::shutdown_execution_unit:
          break;
      }
      ++runs;
    }
    return runs;
  }

 protected:
  void stop() override {
    // The system's own actors are told to exit as it shuts down: let them.
    run();
    stop_actors();
    clock_.cancel_all();
  }

 private:
  // Where an actor that wakes another while it runs puts it: behind the queue.
  class execution_unit final : public caf::execution_unit {
   public:
    explicit execution_unit(replay_scheduler& owner)
        : caf::execution_unit(&owner.system()), owner_(owner) {}
    void exec_later(caf::resumable* job) override { owner_.enqueue(job); }

   private:
    replay_scheduler& owner_;
  };

  std::deque<caf::resumable*> jobs_;
  execution_unit unit_;
  // Holds the timers it is given; nothing advances it, so none fires.
  caf::detail::simple_actor_clock clock_;
};

}  // namespace

void use_replay_scheduler(caf::actor_system_config& cfg) {
  cfg.module_factories.emplace_back([](caf::actor_system& sys) -> caf::actor_system::module* {
    return new replay_scheduler(sys);
  });
}

std::size_t run_until_idle(caf::actor_system& sys) {
  return dynamic_cast<replay_scheduler&>(sys.scheduler()).run();
}

}  // namespace tgw::infra::app
