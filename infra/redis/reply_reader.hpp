#pragma once

#include <cstddef>
#include <string>

#include "infra/redis/redis_value.hpp"

struct redisReader;

namespace tgw::infra::redis {

/// Replies out of a connection's bytes, as they arrive in pieces of any size: hiredis'
/// reply parser (redisReader), never one of our own, over whatever the socket_stream
/// read, plain or decrypted.
class reply_reader {
 public:
  enum class result { reply, need_more, bad };

  reply_reader();
  ~reply_reader();
  reply_reader(const reply_reader&) = delete;
  reply_reader& operator=(const reply_reader&) = delete;

  /// Hands the parser the next bytes of the stream; false when it cannot keep them.
  bool feed(const char* bytes, std::size_t size);
  /// The next whole reply, need_more until it has arrived, or bad with `error` set when
  /// the bytes are not RESP (the connection must be dropped then).
  result next(value& out, std::string& error);
  /// Forgets every byte fed: for a new connection.
  void reset();

 private:
  redisReader* reader_;
};

}  // namespace tgw::infra::redis
