// What a request asks to do, in authorization terms, as upstream's RequestInfoFactory
// derives it from the path, method and query: a resource request (verb, API group,
// version, namespace, resource, subresource, name) or a non-resource one (path, verb).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/http/message.h"

namespace shepherd::auth {

struct RequestInfo {
  bool resource_request = false;
  std::string path;  // non-resource requests are authorized by path
  std::string verb;  // get list watch create update patch delete deletecollection; or the lower-case method
  std::string api_prefix, api_group, api_version;
  std::string namespace_, resource, subresource, name;
  std::string field_selector;  // of list, watch and deletecollection requests (as sent)
};

RequestInfo requestInfo(const http::Request& req);

// A resource request built by hand, for checks the server makes on its own (impersonation,
// escalation, tests).
RequestInfo resourceRequest(std::string verb, std::string group, std::string resource, std::string ns = "",
                            std::string name = "", std::string subresource = "");

// The value a field selector requires `field` to equal ("field=v" or "field==v"), if any.
std::optional<std::string> fieldSelectorRequires(std::string_view selector, std::string_view field);
// The same, given the path already split by http::pathSegments.
RequestInfo requestInfo(const http::Request& req, const std::vector<std::string>& segments);

}  // namespace shepherd::auth
