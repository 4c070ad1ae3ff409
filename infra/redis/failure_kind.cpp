#include "infra/redis/failure_kind.hpp"

#include "infra/redis/link_errors.hpp"

namespace tgw::infra::redis {
namespace {

// "OOM command not allowed": the code word, then a space (or the end); BUSYGROUP is not
// BUSY.
bool starts_with_word(std::string_view text, std::string_view word) noexcept {
  return text.starts_with(word) &&
         (text.size() == word.size() || text[word.size()] == ' ' || text[word.size()] == ':');
}

bool holds(std::string_view text, std::string_view part) noexcept {
  return text.find(part) != std::string_view::npos;
}

}  // namespace

failure_kind classify_error_reply(std::string_view error) noexcept {
  // The order matters where a reply names two causes: an ACL or memory refusal inside a
  // Function also says "script:".
  if (starts_with_word(error, "NOPERM") || holds(error, "user executing the script can't"))
    return failure_kind::no_permission;
  if (starts_with_word(error, "MOVED") || starts_with_word(error, "ASK"))
    return failure_kind::moved;
  if (starts_with_word(error, "CROSSSLOT")) return failure_kind::cross_slot;
  if (starts_with_word(error, "CLUSTERDOWN")) return failure_kind::cluster_down;
  if (starts_with_word(error, "TRYAGAIN")) return failure_kind::try_again;
  if (starts_with_word(error, "OOM")) return failure_kind::out_of_memory;
  if (starts_with_word(error, "LOADING")) return failure_kind::loading;
  if (starts_with_word(error, "READONLY") || starts_with_word(error, "MASTERDOWN"))
    return failure_kind::read_only;
  if (starts_with_word(error, "NOREPLICAS")) return failure_kind::no_replicas;
  if (starts_with_word(error, "MISCONF")) return failure_kind::disk;
  if (starts_with_word(error, "BUSY")) return failure_kind::busy;
  if (holds(error, "Function not found") || holds(error, "script:") || holds(error, "FUNCTION"))
    return failure_kind::script;
  return failure_kind::other;
}

std::string_view name_of(failure_kind kind) noexcept {
  switch (kind) {
    case failure_kind::none:
      return "none";
    case failure_kind::unreachable:
      return "unreachable";
    case failure_kind::timeout:
      return "timeout";
    case failure_kind::no_permission:
      return "no_permission";
    case failure_kind::out_of_memory:
      return "out_of_memory";
    case failure_kind::read_only:
      return "read_only";
    case failure_kind::moved:
      return "moved";
    case failure_kind::cross_slot:
      return "cross_slot";
    case failure_kind::cluster_down:
      return "cluster_down";
    case failure_kind::try_again:
      return "try_again";
    case failure_kind::loading:
      return "loading";
    case failure_kind::no_replicas:
      return "no_replicas";
    case failure_kind::disk:
      return "disk";
    case failure_kind::busy:
      return "busy";
    case failure_kind::script:
      return "script";
    case failure_kind::other:
      return "other";
  }
  return "other";
}

std::string_view transport_reason(std::string_view text) noexcept {
  return text.starts_with(transport_text_prefix) ? text.substr(transport_text_prefix.size()) : text;
}

failure_kind failure_of_text(std::string_view text) noexcept {
  if (!text.starts_with(transport_text_prefix)) return classify_error_reply(text);
  const std::string_view why = transport_reason(text);
  return holds(why, link_errors::silent) || holds(why, link_errors::no_bytes_taken)
             ? failure_kind::timeout
             : failure_kind::unreachable;
}

}  // namespace tgw::infra::redis
