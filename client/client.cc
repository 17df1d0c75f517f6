#include "client/client.h"

namespace shepherd::client {

bool isTransportError(const ApiError& e) {
  return e.code == 0 && e.reason == "TransportError";
}

std::string groupVersionPath(const std::string& group, const std::string& version) {
  return group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
}

std::string resourcePath(const std::string& group, const std::string& version, const std::string& plural,
                         const std::string& ns) {
  std::string p = groupVersionPath(group, version);
  if (!ns.empty()) p += "/namespaces/" + ns;
  return p + "/" + plural;
}

}  // namespace shepherd::client
