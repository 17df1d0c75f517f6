#include "client/kubeconfig.h"

#include <fstream>
#include <sstream>

#include "common/base64.h"
#include "common/json.h"
#include "common/yaml_json.h"

namespace shepherd::client {

namespace {

const json::Value* named(const json::Value& doc, std::string_view list, std::string_view name, std::string_view inner) {
  const json::Value* l = json::find(doc, list);
  if (!l || !l->IsArray()) return nullptr;
  for (auto& e : l->GetArray())
    if (json::getString(e, "name") == name) return json::find(e, inner);
  return nullptr;
}

std::string resolve(const std::string& dir, std::string_view p) {
  if (p.empty() || p[0] == '/') return std::string(p);
  return dir + "/" + std::string(p);
}

}  // namespace

Result<ClientConfig> loadKubeconfig(const std::string& path, const std::string& context) {
  std::ifstream in(path);
  if (!in) return ApiError::badRequest("cannot read kubeconfig " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  json::Document doc;
  if (auto st = yamlToJson(ss.str(), doc); !st) return ApiError::badRequest("kubeconfig " + path + ": " + st.error().message);
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  std::string ctxName = context.empty() ? std::string(json::getString(doc, "current-context")) : context;
  const json::Value* ctx = named(doc, "contexts", ctxName, "context");
  if (!ctx) return ApiError::badRequest("kubeconfig " + path + ": context \"" + ctxName + "\" not found");
  const json::Value* cluster = named(doc, "clusters", json::getString(*ctx, "cluster"), "cluster");
  if (!cluster) return ApiError::badRequest("kubeconfig " + path + ": cluster of context \"" + ctxName + "\" not found");
  ClientConfig cfg;
  std::string server(json::getString(*cluster, "server"));
  if (server.empty()) return ApiError::badRequest("kubeconfig " + path + ": the cluster has no server");
  // A comma-separated server list gives fail-over targets.
  size_t start = 0;
  while (start <= server.size()) {
    size_t comma = server.find(',', start);
    if (comma == std::string::npos) comma = server.size();
    std::string one = server.substr(start, comma - start);
    while (!one.empty() && one.back() == '/') one.pop_back();
    if (!one.empty()) cfg.servers.push_back(one);
    start = comma + 1;
  }
  cfg.ca_file = resolve(dir, json::getString(*cluster, "certificate-authority"));
  cfg.ca_data = shepherd::base64Decode(json::getString(*cluster, "certificate-authority-data")).value_or("");
  cfg.insecure_skip_tls_verify = json::getBool(*cluster, "insecure-skip-tls-verify");
  if (const json::Value* user = named(doc, "users", json::getString(*ctx, "user"), "user")) {
    cfg.token = json::getString(*user, "token");
    std::string_view tokenFile = json::getString(*user, "tokenFile");
    if (cfg.token.empty() && !tokenFile.empty()) {
      std::ifstream t(resolve(dir, tokenFile));
      std::getline(t, cfg.token);
    }
    cfg.cert_file = resolve(dir, json::getString(*user, "client-certificate"));
    cfg.cert_data = shepherd::base64Decode(json::getString(*user, "client-certificate-data")).value_or("");
    cfg.key_file = resolve(dir, json::getString(*user, "client-key"));
    cfg.key_data = shepherd::base64Decode(json::getString(*user, "client-key-data")).value_or("");
  }
  return cfg;
}

}  // namespace shepherd::client
