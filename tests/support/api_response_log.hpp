#pragma once

// Every answer an API test receives, appended as one JSON line to the file that
// TGW_API_RESPONSE_LOG names (when it does): the operation, the status, the content type
// and the body. tests/api/openapi_check.mjs then holds each one to docs/api/openapi.json,
// so that the document describes what the API really answers.
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace tgw::test {

/// `path` is the route's pattern ("/v1/devices/{imei}"), `method` as sent.
inline void log_api_response(const std::string& method, const std::string& path, int status,
                             const std::string& content_type, const std::string& body) {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read-only use of the environment
  const char* file = std::getenv("TGW_API_RESPONSE_LOG");
  if (file == nullptr || *file == '\0') return;
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  std::ofstream out(file, std::ios::app);
  out << nlohmann::json{{"method", method},
                        {"path", path},
                        {"status", status},
                        {"content_type", content_type},
                        {"body", body}}
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
      << '\n';
}

/// The status, content type and body of a raw HTTP/1.1 response (Content-Length
/// delimited), as raw_client::read_response returns it.
struct raw_answer {
  int status = 0;
  std::string content_type;
  std::string headers;
  std::string body;
};

inline raw_answer split_answer(const std::string& raw) {
  raw_answer a;
  if (raw.size() >= 12 && raw.starts_with("HTTP/1.1 "))
    a.status = std::atoi(raw.substr(9, 3).c_str());
  const auto end = raw.find("\r\n\r\n");
  if (end == std::string::npos) return a;
  a.headers = raw.substr(0, end + 2);
  a.body = raw.substr(end + 4);
  const auto at = a.headers.find("Content-Type: ");
  if (at != std::string::npos)
    a.content_type = a.headers.substr(at + 14, a.headers.find("\r\n", at) - at - 14);
  return a;
}

}  // namespace tgw::test
