#pragma once

#include "actors/node/node_config.hpp"
#include "infra/node/redis_node_store.hpp"
#include "infra/redis/connection.hpp"

namespace tgw::infra::app {

/// Everything `tgw node` is to do, as the command line validated it.
struct node_plan {
  /// What every role of the node knows; its id is never empty.
  actors::node::node_config node;
  redis::endpoint where;
  node::node_timing timing;
  /// Count each handled message in nodes:handled (for soak checks).
  bool record_handled = false;
};

}  // namespace tgw::infra::app
