#pragma once

#include <string_view>

namespace tgw::infra::api {

/// docs/api/openapi.json, compiled in: the OpenAPI 3.1 document GET /v1/openapi.json
/// serves, which a test validates and holds every answer of the API to.
[[nodiscard]] std::string_view openapi_document() noexcept;

}  // namespace tgw::infra::api
