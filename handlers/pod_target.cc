#include "handlers/pod_target.h"

namespace shepherd::handlers {

namespace {

std::string containerNames(const json::Value& pod, const char* list) {
  std::string out;
  if (const json::Value* cs = json::findPath(pod, {"spec", list}); cs && cs->IsArray())
    for (auto& c : cs->GetArray()) out += (out.empty() ? "" : " ") + std::string(json::getString(c, "name"));
  return out;
}

bool hasContainer(const json::Value& pod, const std::string& name) {
  for (const char* list : {"containers", "initContainers", "ephemeralContainers"})
    if (const json::Value* cs = json::findPath(pod, {"spec", list}); cs && cs->IsArray())
      for (auto& c : cs->GetArray())
        if (json::getString(c, "name") == name) return true;
  return false;
}

}  // namespace

Result<std::string> podContainer(const json::Value& pod, const std::string& requested,
                                 const std::string& name) {
  if (!requested.empty()) {
    if (!hasContainer(pod, requested))
      return ApiError::badRequest("container " + requested + " is not valid for pod " + name);
    return requested;
  }
  const json::Value* cs = json::findPath(pod, {"spec", "containers"});
  size_t n = cs && cs->IsArray() ? cs->Size() : 0;
  if (n == 1) return std::string(json::getString((*cs)[0], "name"));
  if (n == 0) return ApiError::badRequest("a container name must be specified for pod " + name);
  std::string msg = "a container name must be specified for pod " + name + ", choose one of: [" +
                    containerNames(pod, "containers") + "]";
  std::string init = containerNames(pod, "initContainers");
  if (!init.empty()) msg += " or one of the init containers: [" + init + "]";
  return ApiError::badRequest(msg);
}

Result<KubeletEndpoint> kubeletEndpoint(registry::Registry& registry, const std::string& nodeName) {
  registry::Store* nodes = registry.store("", "v1", "nodes");
  if (!nodes) return ApiError::internal("no node store");
  auto node = nodes->get("", nodeName);
  if (!node) return node.error();
  json::Document nd;
  nd.Parse(node.value()->json.data(), node.value()->json.size());
  KubeletEndpoint out;
  if (const json::Value* addrs = json::findPath(nd, {"status", "addresses"}); addrs && addrs->IsArray())
    for (auto& a : addrs->GetArray())
      if (json::getString(a, "type") == "InternalIP") out.host = json::getString(a, "address");
  auto port = json::findPath(nd, {"status", "daemonEndpoints", "kubeletEndpoint", "Port"});
  if (out.host.empty() || !port || !port->IsInt() || port->GetInt() <= 0)
    return ApiError::badRequest("node " + nodeName + " has no InternalIP address and kubelet port");
  out.port = port->GetInt();
  return out;
}

ApiError kubeletError(int code, const std::string& body, const std::string& subresource,
                      const std::string& pod) {
  std::string text = body;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (code == 400) return ApiError::badRequest(text);
  if (code == 500) return ApiError::internal(text);
  if (code == 404) {
    ApiError e = ApiError::make(404, "NotFound",
                                text.empty() ? "the server could not find the requested resource" : text);
    e.kind = subresource;
    e.name = pod;
    return e;
  }
  return ApiError::make(code, "InternalError", "the kubelet answered " + std::to_string(code) + ": " + text);
}

}  // namespace shepherd::handlers
