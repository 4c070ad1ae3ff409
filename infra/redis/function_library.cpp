#include "infra/redis/function_library.hpp"

namespace tgw::infra::redis {

bool function_library::load(std::string& error) {
  const value v = conn_.command({"FUNCTION", "LOAD", "REPLACE", source_});
  loaded_ = !v.is_error();
  if (!loaded_) error = v.text;
  return loaded_;
}

bool function_library::ensure(std::string& error) {
  return (conn_.connected() && loaded_) || load(error);
}

value function_library::call(const std::vector<std::string>& argv) {
  std::string error;
  if (!ensure(error)) return value::make_error(error);
  value v = conn_.command(argv);
  if (missing(v) && load(error)) v = conn_.command(argv);
  forget_if_disconnected();
  return v;
}

}  // namespace tgw::infra::redis
