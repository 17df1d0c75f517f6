#include "auth/request_info.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace shepherd::auth {

namespace {

std::vector<std::string> splitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) parts.push_back(path.substr(i, j - i));
    i = j;
  }
  return parts;
}

// The value a field selector requires metadata.name to equal exactly ("" if none).
std::string exactName(std::string_view selector) {
  size_t start = 0;
  while (start <= selector.size()) {
    size_t comma = selector.find(',', start);
    if (comma == std::string_view::npos) comma = selector.size();
    std::string_view term = selector.substr(start, comma - start);
    for (std::string_view op : {"==", "="}) {
      std::string key = "metadata.name" + std::string(op);
      if (term.substr(0, key.size()) == key) {
        std::string_view v = term.substr(key.size());
        if (!v.empty() && v.find('/') == std::string_view::npos && v != "." && v != "..")
          return std::string(v);
        return "";
      }
    }
    start = comma + 1;
  }
  return "";
}

}  // namespace

RequestInfo requestInfo(const http::Request& req) {
  RequestInfo info;
  info.path = req.path;
  info.verb = req.method;
  std::transform(info.verb.begin(), info.verb.end(), info.verb.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::vector<std::string> parts = splitPath(req.path);
  if (parts.empty() || (parts[0] != "api" && parts[0] != "apis")) return info;
  info.api_prefix = parts[0];
  parts.erase(parts.begin());
  if (info.api_prefix == "apis") {
    if (parts.size() < 2) return info;  // /apis, /apis/<group>: discovery
    info.api_group = parts[0];
    parts.erase(parts.begin());
  }
  if (parts.empty()) return info;  // /api
  info.api_version = parts[0];
  parts.erase(parts.begin());
  if (parts.empty()) return info;  // /api/v1: discovery
  info.resource_request = true;
  if (parts[0] == "watch" || parts[0] == "proxy") {
    if (parts.size() < 2) {  // nothing after "watch" or "proxy"
      RequestInfo non_resource;
      non_resource.path = req.path;
      non_resource.verb = info.verb;
      return non_resource;
    }
    info.verb = parts[0];
    parts.erase(parts.begin());
  } else if (req.method == "POST") {
    info.verb = "create";
  } else if (req.method == "GET" || req.method == "HEAD") {
    info.verb = "get";
  } else if (req.method == "PUT") {
    info.verb = "update";
  } else if (req.method == "PATCH") {
    info.verb = "patch";
  } else if (req.method == "DELETE") {
    info.verb = "delete";
  } else {
    info.verb = "";
  }
  if (parts[0] == "namespaces" && parts.size() > 1) {
    info.namespace_ = parts[1];
    // namespaces/{name}/status and /finalize are the namespace's own subresources.
    if (parts.size() > 2 && parts[2] != "status" && parts[2] != "finalize")
      parts.erase(parts.begin(), parts.begin() + 2);
  }
  if (parts.size() >= 3) info.subresource = parts[2];
  if (parts.size() >= 2) info.name = parts[1];
  info.resource = parts[0];
  if (parts.size() == 1 && info.verb == "get") info.verb = req.queryBool("watch") ? "watch" : "list";
  if (parts.size() == 1 && info.verb == "delete") info.verb = "deletecollection";
  if (info.verb == "list" || info.verb == "watch" || info.verb == "deletecollection")
    info.field_selector = std::string(req.queryValue("fieldSelector"));
  if ((info.verb == "list" || info.verb == "watch") && info.name.empty())
    info.name = exactName(req.queryValue("fieldSelector"));
  return info;
}

}  // namespace shepherd::auth
