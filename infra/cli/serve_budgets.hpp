#pragma once

#include <string>

#include "infra/app/gateway_plan.hpp"
#include "infra/cli/serve_options.hpp"

namespace CLI {
class App;
}

namespace tgw::infra {

/// Adds the flags of serve_options::budgets to `tgw serve`: what one peer may make
/// the instance spend (docs/OPERATIONS.md, "Hostile input").
void add_budget_options(CLI::App* serve, serve_options::budgets& b);

/// Puts the budgets into the plan, with the per-address limits and the connection
/// limits they join; false with `error` naming the flag for a value that cannot be.
[[nodiscard]] bool plan_budgets(const serve_options& o, app::gateway_plan& p, std::string& error);

}  // namespace tgw::infra
