#include "auth/request_info.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace shepherd::auth {

std::optional<std::string> fieldSelectorRequires(std::string_view selector, std::string_view field) {
  size_t start = 0;
  while (start <= selector.size()) {
    size_t comma = selector.find(',', start);
    if (comma == std::string_view::npos) comma = selector.size();
    std::string_view term = selector.substr(start, comma - start);
    start = comma + 1;
    if (term.substr(0, field.size()) != field) continue;
    term.remove_prefix(field.size());
    if (term.substr(0, 2) == "==") return std::string(term.substr(2));
    if (term.substr(0, 1) == "=") return std::string(term.substr(1));
  }
  return std::nullopt;
}

RequestInfo requestInfo(const http::Request& req) {
  return requestInfo(req, http::pathSegments(req.path));
}

RequestInfo requestInfo(const http::Request& req, const std::vector<std::string>& segments) {
  RequestInfo info;
  info.path = req.path;
  info.verb = req.method;
  std::transform(info.verb.begin(), info.verb.end(), info.verb.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // The segments not consumed yet: parts(0) is the next one.
  size_t at = 0;
  auto left = [&] { return segments.size() - at; };
  auto part = [&](size_t k) -> const std::string& { return segments[at + k]; };
  if (!left() || (part(0) != "api" && part(0) != "apis")) return info;
  info.api_prefix = part(0);
  ++at;
  if (info.api_prefix == "apis") {
    if (left() < 2) return info;  // /apis, /apis/<group>: discovery
    info.api_group = part(0);
    ++at;
  }
  if (!left()) return info;  // /api
  info.api_version = part(0);
  ++at;
  if (!left()) return info;  // /api/v1: discovery
  info.resource_request = true;
  if (part(0) == "watch" || part(0) == "proxy") {
    if (left() < 2) {  // nothing after "watch" or "proxy"
      RequestInfo non_resource;
      non_resource.path = req.path;
      non_resource.verb = info.verb;
      return non_resource;
    }
    info.verb = part(0);
    ++at;
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
  if (part(0) == "namespaces" && left() > 1) {
    info.namespace_ = part(1);
    // namespaces/{name}/status and /finalize are the namespace's own subresources.
    if (left() > 2 && part(2) != "status" && part(2) != "finalize") at += 2;
  }
  if (left() >= 3) info.subresource = part(2);
  if (left() >= 2) info.name = part(1);
  info.resource = part(0);
  // Only a GET of a collection is promoted to one name by its field selector (upstream);
  // the legacy {prefix}/watch/ paths name an object only by their path.
  bool collectionGet = left() == 1 && info.verb == "get";
  if (collectionGet) info.verb = req.queryBool("watch") ? "watch" : "list";
  if (left() == 1 && info.verb == "delete") info.verb = "deletecollection";
  if (info.verb == "list" || info.verb == "watch" || info.verb == "deletecollection")
    info.field_selector = std::string(req.queryValue("fieldSelector"));
  // A list or watch of one name (metadata.name=X) is authorized as that name, when X is a
  // valid path segment.
  if (collectionGet)
    if (auto name = fieldSelectorRequires(info.field_selector, "metadata.name");
        name && !name->empty() && name->find_first_of("/%") == std::string::npos && *name != "." &&
        *name != "..")
      info.name = *name;
  return info;
}

RequestInfo resourceRequest(std::string verb, std::string group, std::string resource, std::string ns,
                            std::string name, std::string subresource) {
  RequestInfo r;
  r.resource_request = true;
  r.verb = std::move(verb);
  r.api_group = std::move(group);
  r.resource = std::move(resource);
  r.namespace_ = std::move(ns);
  r.name = std::move(name);
  r.subresource = std::move(subresource);
  return r;
}

}  // namespace shepherd::auth
