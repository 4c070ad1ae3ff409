#pragma once

namespace tgw::infra::node {

/// Key names, fixed by the cluster-node design.
namespace keys {
inline constexpr const char* list = "nodes:list";
inline constexpr const char* ids = "nodes:ids";
inline constexpr const char* emitter = "nodes:emitter";
inline constexpr const char* queue = "nodes:queue";
inline constexpr const char* errors = "nodes:errors";
inline constexpr const char* epoch = "nodes:epoch";
inline constexpr const char* sequence = "nodes:seq";
inline constexpr const char* handled = "nodes:handled";
inline constexpr const char* processing_prefix = "nodes:processing:";
/// ZSET of nodes removed as inactive, by removal time (ms), kept for the keys' TTL.
inline constexpr const char* departed = "nodes:departed";
}  // namespace keys

}  // namespace tgw::infra::node
