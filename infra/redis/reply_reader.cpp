#include "infra/redis/reply_reader.hpp"

#include <hiredis/hiredis.h>

namespace tgw::infra::redis {
namespace {

value convert(const redisReply* r) {
  value v;
  if (r == nullptr) return v;
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      v.type = value::kind::integer;
      v.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
      v.type = value::kind::string;
      v.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      v.type = value::kind::status;
      v.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      v.type = value::kind::error;
      v.text.assign(r->str, r->len);
      v.failure = classify_error_reply(v.text);
      break;
    case REDIS_REPLY_ARRAY:
      v.type = value::kind::array;
      v.elements.reserve(r->elements);
      for (std::size_t i = 0; i < r->elements; ++i) v.elements.push_back(convert(r->element[i]));
      break;
    default:
      break;
  }
  return v;
}

}  // namespace

reply_reader::reply_reader() : reader_(redisReaderCreate()) {}

reply_reader::~reply_reader() {
  if (reader_ != nullptr) redisReaderFree(reader_);
}

void reply_reader::reset() {
  if (reader_ != nullptr) redisReaderFree(reader_);
  reader_ = redisReaderCreate();
}

bool reply_reader::feed(const char* bytes, std::size_t size) {
  return reader_ != nullptr && redisReaderFeed(reader_, bytes, size) == REDIS_OK;
}

reply_reader::result reply_reader::next(value& out, std::string& error) {
  if (reader_ == nullptr) {
    error = "no reply parser (out of memory)";
    return result::bad;
  }
  void* raw = nullptr;
  if (redisReaderGetReply(reader_, &raw) != REDIS_OK) {
    error = reader_->errstr;
    return result::bad;
  }
  if (raw == nullptr) return result::need_more;
  auto* reply = static_cast<redisReply*>(raw);
  out = convert(reply);
  freeReplyObject(reply);
  return result::reply;
}

}  // namespace tgw::infra::redis
