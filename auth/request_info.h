// What a request asks to do, in authorization terms, as upstream's RequestInfoFactory
// derives it from the path, method and query: a resource request (verb, API group,
// version, namespace, resource, subresource, name) or a non-resource one (path, verb).
#pragma once

#include <string>

#include "handlers/http/message.h"

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

}  // namespace shepherd::auth
