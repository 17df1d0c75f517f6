#include "net/http/message.h"

#include <cctype>

namespace shepherd::http {

std::vector<std::string> pathSegments(std::string_view path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) parts.emplace_back(path.substr(i, j - i));
    i = j;
  }
  return parts;
}

std::string_view Request::header(std::string_view lower_name) const {
  for (const auto& [k, v] : headers)
    if (k == lower_name) return v;
  return {};
}

bool Request::hasQuery(std::string_view key) const {
  for (const auto& [k, v] : query)
    if (k == key) return true;
  return false;
}

std::string_view Request::queryValue(std::string_view key) const {
  for (const auto& [k, v] : query)
    if (k == key) return v;
  return {};
}

bool Request::queryBool(std::string_view key) const {
  std::string_view v = queryValue(key);
  if (v.empty() || v == "0") return false;
  std::string lower(v);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower != "false";
}

void Response::setHeader(std::string name, std::string value) {
  for (auto& [k, v] : headers)
    if (k == name) {
      v = std::move(value);
      return;
    }
  headers.emplace_back(std::move(name), std::move(value));
}

size_t Response::bodySize() const {
  size_t n = body.size();
  for (const Chunk& c : more_body) n += c.size();
  return n;
}

void Response::flattenBody() {
  if (more_body.empty()) return;
  body.reserve(bodySize());
  for (const Chunk& c : more_body)
    for (std::string_view piece : c.pieces()) body += piece;
  more_body.clear();
}

Response plainText(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  r.setHeader("Content-Type", "text/plain; charset=utf-8");
  return r;
}

}  // namespace shepherd::http
