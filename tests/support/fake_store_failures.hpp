#pragma once

// The failures the in-memory fakes of the ports answer with, as the adapters name them:
// a store that cannot be reached, and a write its replicas did not confirm.
#include "actors/ports/store_failure.hpp"

namespace tgw::test {

inline ports::store_failure unreachable_store() {
  return {ports::failure_kind::unreachable,
          {"connection", "Connection refused", "the store is unreachable: check that it runs"}};
}

inline ports::store_failure unconfirmed_by_replicas() {
  return {ports::failure_kind::unavailable,
          {"replicas", "replicas: WAIT confirmed 0 of 1", "bring a replica back"}};
}

}  // namespace tgw::test
