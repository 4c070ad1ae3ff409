#include "infra/http/router.hpp"

#include <algorithm>
#include <stdexcept>

namespace tgw::infra::http {
namespace {

bool is_parameter(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

// "/a/b" as {"a", "b"}, "/" as {""}: a path always has at least one segment.
std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t start = 1;
  while (true) {
    const std::size_t slash = path.find('/', start);
    out.push_back(path.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

bool fits(const std::vector<std::string>& pattern, const std::vector<std::string>& path) {
  if (pattern.size() != path.size()) return false;
  for (std::size_t i = 0; i < path.size(); ++i)
    if (is_parameter(pattern[i]) ? path[i].empty() : pattern[i] != path[i]) return false;
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool percent_decode(std::string_view text, std::string& out) {
  out.clear();
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return false;
    const int high = hex_value(text[i + 1]);
    const int low = hex_value(text[i + 2]);
    if (high < 0 || low < 0) return false;
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return true;
}

void router::add(std::string method, std::string_view pattern, handler run, route_options options) {
  if (pattern.empty() || pattern.front() != '/')
    throw std::invalid_argument("route pattern must start with '/': " + std::string(pattern));
  route r{std::move(method), std::string(pattern), {}, std::move(run), options};
  for (const std::string_view segment : split_path(pattern)) {
    if (segment.find_first_of("{}") != std::string_view::npos && !is_parameter(segment))
      throw std::invalid_argument("route pattern segment is neither literal nor {name}: " +
                                  std::string(pattern));
    r.segments.emplace_back(segment);
  }
  routes_.push_back(std::move(r));
}

void router::get(std::string_view pattern, answer_now answer) {
  add("GET", pattern,
      [answer = std::move(answer)](const request& r, responder done) { done(answer(r)); });
}

response router::refusal(unsigned status, std::string_view code, std::string_view message) const {
  if (refusal_) return refusal_(status, code, message);
  return response::text(status, std::string(message) + "\n");
}

std::vector<std::pair<std::string, std::string>> router::listing() const {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(routes_.size());
  for (const route& r : routes_) out.emplace_back(r.method, r.pattern);
  return out;
}

route_match router::match(std::string_view method, std::string_view path) const {
  route_match m;
  m.index = routes_.size();
  if (path.empty() || path.front() != '/') {
    m.result = route_match::outcome::malformed_path;
    return m;
  }
  std::vector<std::string> decoded;
  for (const std::string_view segment : split_path(path)) {
    if (!percent_decode(segment, decoded.emplace_back())) {
      m.result = route_match::outcome::malformed_path;
      return m;
    }
  }
  const route* chosen = nullptr;
  std::vector<std::string> allowed;
  for (const route& r : routes_) {
    if (!fits(r.segments, decoded)) continue;
    if (r.method == method) {
      chosen = &r;
      break;
    }
    // HEAD is answered by the GET route unless a HEAD route of its own comes later.
    if (method == "HEAD" && r.method == "GET" && chosen == nullptr) {
      chosen = &r;
      continue;
    }
    for (const std::string& name : {r.method, std::string(r.method == "GET" ? "HEAD" : "")})
      if (!name.empty() && std::find(allowed.begin(), allowed.end(), name) == allowed.end())
        allowed.push_back(name);
  }
  if (chosen == nullptr) {
    for (const std::string& name : allowed) m.allow += (m.allow.empty() ? "" : ", ") + name;
    m.result =
        allowed.empty() ? route_match::outcome::not_found : route_match::outcome::wrong_method;
    return m;
  }
  m.result = route_match::outcome::found;
  m.run = &chosen->run;
  m.index = static_cast<std::size_t>(chosen - routes_.data());
  m.request_timeout = chosen->options.request_timeout;
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    const std::string& s = chosen->segments[i];
    if (is_parameter(s)) m.params.emplace_back(s.substr(1, s.size() - 2), std::move(decoded[i]));
  }
  return m;
}

}  // namespace tgw::infra::http
