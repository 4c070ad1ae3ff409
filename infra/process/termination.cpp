#include "infra/process/termination.hpp"

#include <csignal>

#include <pthread.h>

namespace tgw::infra::process {
namespace {

sigset_t handled_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void block_termination_signals() {
  const sigset_t set = handled_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int wait_for_signal() {
  const sigset_t set = handled_set();
  int signal = 0;
  while (sigwait(&set, &signal) != 0) {
  }
  return signal;
}

int wait_for_termination_signal() {
  return wait_for_signal();
}

bool termination_requested() {
  const sigset_t set = handled_set();
  const timespec zero{};
  return sigtimedwait(&set, nullptr, &zero) > 0;
}

}  // namespace tgw::infra::process
