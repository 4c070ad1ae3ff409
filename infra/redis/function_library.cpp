#include "infra/redis/function_library.hpp"

namespace tgw::infra::redis {

bool function_library::load(value& failed) {
  value v = conn_.command({"FUNCTION", "LOAD", "REPLACE", source_});
  loaded_ = !v.is_error();
  if (!loaded_) failed = std::move(v);
  return loaded_;
}

bool function_library::load(std::string& error) {
  value failed;
  if (load(failed)) return true;
  error = std::move(failed.text);
  return false;
}

bool function_library::ensure(value& failed) {
  return (conn_.connected() && loaded_) || load(failed);
}

bool function_library::ensure(std::string& error) {
  return (conn_.connected() && loaded_) || load(error);
}

value function_library::call(const std::vector<std::string>& argv) {
  value failed;
  if (!ensure(failed)) return failed;
  value v = conn_.command(argv);
  if (missing(v) && load(failed)) v = conn_.command(argv);
  forget_if_disconnected();
  return v;
}

}  // namespace tgw::infra::redis
