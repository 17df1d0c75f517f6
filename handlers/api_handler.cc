#include "handlers/api_handler.h"

#include <algorithm>
#include <optional>

#include "apis/catalog.h"
#include "apis/schema.h"
#include "auth/request_info.h"
#include "handlers/filters/request_filters.h"
#include "handlers/status.h"

namespace shepherd::handlers {

namespace {

http::Response jsonResponse(std::string body, int code = 200) {
  http::Response r;
  r.status = code;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = std::move(body);
  return r;
}

// A watch of one object by its path name watches the collection with a metadata.name
// field selector; a selector naming another object is refused, as upstream does.
Status selectNameForWatch(http::Request& req, const std::string& name) {
  std::string term = "metadata.name=" + name;
  for (auto& [k, v] : req.query) {
    if (k != "fieldSelector" || v.empty()) continue;
    if (auto named = auth::fieldSelectorRequires(v, "metadata.name")) {
      if (*named != name)
        return ApiError::badRequest("fieldSelector metadata.name doesn't match requested name");
    } else {
      v += "," + term;
    }
    return okStatus();
  }
  req.query.emplace_back("fieldSelector", term);
  return okStatus();
}

http::Response notFound() {
  return errorResponse(ApiError::make(404, "NotFound", "the server could not find the requested resource"));
}

}  // namespace

ApiHandler::ApiHandler(registry::Registry& registry, ApiHandlerOptions opts)
    : registry_(registry),
      opts_(std::move(opts)),
      openapi_(apis::Catalog::instance(), apis::SchemaRegistry::instance(), opts_.version.git_version),
      rest_(watches_, registry) {
  rest_.setAuthorizer(opts_.authorizer);
  rest_.setServiceAccountTokens(opts_.service_account_tokens);
  rest_.setRbacPolicy(opts_.rbac_policy);
  rest_.setAdmission(opts_.admission);
  filters_ = buildFilters();
  rest_.setKubeletTls(opts_.kubelet_tls);
  rest_.setStreamingIdleTimeout(opts_.streaming_idle_timeout_seconds);
  api_versions_ = apiVersionsJson(opts_.server_address);
  group_list_ = apiGroupListJson(apis::Catalog::instance());
}

void ApiHandler::setServerAddress(const std::string& address) {
  api_versions_ = apiVersionsJson(address);
}

void ApiHandler::handle(http::Request& req, std::shared_ptr<http::Responder> resp) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  filters_->handle(req, std::move(resp));
}

std::unique_ptr<FilterChain> ApiHandler::buildFilters() {
  std::vector<std::unique_ptr<Filter>> f;
  if (opts_.audit || opts_.authorizer) f.push_back(std::make_unique<RequestInfoFilter>());
  if (opts_.audit) f.push_back(std::make_unique<AuditFilter>(*opts_.audit));
  if (opts_.authenticator) f.push_back(std::make_unique<AuthenticationFilter>(*opts_.authenticator));
  if (opts_.authorizer) {
    f.push_back(std::make_unique<ImpersonationFilter>(*opts_.authorizer));
    f.push_back(std::make_unique<AuthorizationFilter>(*opts_.authorizer));
  }
  return std::make_unique<FilterChain>(
      std::move(f),
      [this](http::Request& req, std::shared_ptr<http::Responder> resp) { route(req, std::move(resp)); });
}

void ApiHandler::route(http::Request& req, std::shared_ptr<http::Responder> resp) {
  std::vector<std::string> p = http::pathSegments(req.path);
  const auto& catalog = apis::Catalog::instance();
  bool read = req.method == "GET" || req.method == "HEAD";
  if (p.empty()) {
    if (!read) return resp->send(notFound());
    return resp->send(jsonResponse(
        R"({"paths":["/api","/api/v1","/apis","/healthz","/livez","/metrics","/openapi/v2","/openapi/v3","/readyz","/version"]})"));
  }
  const std::string& root = p[0];
  if (root == "healthz" || root == "livez" || root == "readyz") return health(req, resp, root);
  if (root == "version" && p.size() == 1) return resp->send(jsonResponse(versionJson(opts_.version)));
  if (root == "metrics" && p.size() == 1) return metrics(resp);
  if (root == "openapi") {
    if (!read) return resp->send(notFound());
    if (p.size() == 2 && p[1] == "v2") {
      // kubectl 1.27/1.28 ask for protobuf only; an empty protobuf message is a valid
      // (empty) document for them, while JSON clients get the real one.
      std::string_view accept = req.header("accept");
      if (!accept.empty() && accept.find("json") == std::string_view::npos &&
          accept.find("*/*") == std::string_view::npos) {
        http::Response r;
        r.headers.emplace_back("Content-Type", "application/octet-stream");
        return resp->send(std::move(r));
      }
      return resp->send(jsonResponse(openapi_.v2()));
    }
    if (p.size() == 2 && p[1] == "v3") return resp->send(jsonResponse(openapi_.v3Root()));
    if (p.size() >= 3 && p[1] == "v3") {
      std::string rest;
      for (size_t i = 2; i < p.size(); ++i) rest += (i > 2 ? "/" : "") + p[i];
      if (const std::string* doc = openapi_.v3(rest)) {
        http::Response r = jsonResponse(*doc);
        r.headers.emplace_back("Etag", "\"" + openapi_.v3Hash(rest) + "\"");
        r.headers.emplace_back("Cache-Control", "public, immutable");
        return resp->send(std::move(r));
      }
    }
    return resp->send(notFound());
  }
  if ((root == "api" || root == "apis") && p.size() == 1 && read) {
    // Aggregated discovery, in exactly the version the client asked for (kubectl 1.27
    // asks only for v2beta1 and would see nothing in a v2 document).
    std::string agg = wantsAggregatedDiscovery(req.header("accept"));
    if (!agg.empty()) {
      http::Response r = jsonResponse(aggregatedDiscoveryJson(catalog, root == "api", agg));
      r.headers[0].second = "application/json;g=apidiscovery.k8s.io;v=" + agg + ";as=APIGroupDiscoveryList";
      r.headers.emplace_back("Vary", "Accept");
      return resp->send(std::move(r));
    }
  }
  if (root == "api") {
    if (p.size() == 1) {
      if (!read) return resp->send(notFound());
      return resp->send(jsonResponse(api_versions_));
    }
    if (p.size() == 2) {
      if (!read) return resp->send(errorResponse(ApiError::methodNotSupported("", "", req.method)));
      std::string body = apiResourceListJson(catalog, "", p[1]);
      return resp->send(body.empty() ? notFound() : jsonResponse(body));
    }
    return handleResourcePath(req, resp, "", p[1], std::vector<std::string>(p.begin() + 2, p.end()));
  }
  if (root == "apis") {
    if (p.size() == 1) {
      if (!read) return resp->send(notFound());
      return resp->send(jsonResponse(group_list_));
    }
    if (p.size() == 2) {
      std::string body = apiGroupJson(catalog, p[1]);
      return resp->send(body.empty() || !read ? notFound() : jsonResponse(body));
    }
    if (p.size() == 3) {
      std::string body = apiResourceListJson(catalog, p[1], p[2]);
      return resp->send(body.empty() || !read ? notFound() : jsonResponse(body));
    }
    return handleResourcePath(req, resp, p[1], p[2], std::vector<std::string>(p.begin() + 3, p.end()));
  }
  resp->send(notFound());
}

void ApiHandler::handleResourcePath(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                                    const std::string& group, const std::string& version,
                                    std::vector<std::string> rest) {
  const auto& catalog = apis::Catalog::instance();
  RequestScope s;
  // The deprecated watch paths ({prefix}/watch/...) upstream still serves: GET only, always a
  // watch whatever ?watch says, a name in the path selects that object.
  if (!rest.empty() && rest[0] == "watch") {
    rest.erase(rest.begin());
    if (rest.empty()) return resp->send(notFound());
    if (req.method != "GET")
      return resp->send(errorResponse(ApiError::make(
          405, "MethodNotAllowed", "the server does not allow this method on the requested resource")));
    s.force_watch = true;
  }
  // /namespaces/{ns}/{plural}[/{name}[/{sub}]] for namespaced resources;
  // /{plural}[/{name}[/{sub}]] otherwise (and for namespaces themselves).
  size_t i = 0;
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    auto r = catalog.find(group, version, rest[2]);
    if (r && r->namespaced) {
      s.ns = rest[1];
      i = 2;
    }
  }
  if (i >= rest.size()) return resp->send(notFound());
  s.resource = catalog.find(group, version, rest[i]);
  if (!s.resource) return resp->send(notFound());
  if (i + 1 < rest.size()) s.name = rest[i + 1];
  if (i + 2 < rest.size()) s.subresource = rest[i + 2];
  if (i + 3 < rest.size()) return resp->send(notFound());
  if (s.resource->namespaced && i == 0 && !s.name.empty())
    return resp->send(notFound());  // a namespaced object needs /namespaces/{ns}/
  s.store = registry_.store(s.resource->group, s.resource->version, s.resource->plural);
  if (!s.store && s.resource->stored) return resp->send(notFound());
  if (s.force_watch) {
    const auto& verbs = s.resource->verbs;
    if (!s.store || !s.subresource.empty() || std::find(verbs.begin(), verbs.end(), "watch") == verbs.end())
      return resp->send(notFound());
    if (!s.name.empty()) {
      if (auto st = selectNameForWatch(req, s.name); !st) return resp->send(errorResponse(st.error()));
      s.name.clear();
    }
  }
  rest_.handle(req, resp, s);
}

void ApiHandler::health(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                        const std::string& which) {
  bool ok = !(which == "readyz" && (shutting_down_.load() || !ready_.load()));
  http::Response r;
  r.status = ok ? 200 : 500;
  r.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  if (req.hasQuery("verbose")) {
    r.body = "[+]ping ok\n[+]log ok\n[+]etcd ok\n";
    if (which == "readyz") r.body += std::string(ok ? "[+]" : "[-]") + "shutdown ok\n";
    r.body += which + (ok ? " check passed\n" : " check failed\n");
  } else {
    r.body = ok ? "ok" : "shutting down";
  }
  resp->send(std::move(r));
}

void ApiHandler::metrics(const std::shared_ptr<http::Responder>& resp) {
  std::string out;
  out += "# HELP apiserver_request_total Requests handled.\n# TYPE apiserver_request_total counter\n";
  out += "apiserver_request_total " + std::to_string(requests_.load()) + "\n";
  out +=
      "# HELP apiserver_registered_watchers Open watch streams.\n# TYPE apiserver_registered_watchers "
      "gauge\n";
  out += "apiserver_registered_watchers " + std::to_string(watches_.size()) + "\n";
  out += "# HELP apiserver_storage_objects Objects per resource.\n# TYPE apiserver_storage_objects gauge\n";
  for (const auto& s : registry_.stores()) {
    const auto& r = s->resource();
    out += "apiserver_storage_objects{resource=\"" + (r.group.empty() ? r.plural : r.plural + "." + r.group) +
           "\"} " + std::to_string(s->cache().size()) + "\n";
  }
  out +=
      "# HELP shepherd_storage_revision Current storage revision.\n# TYPE shepherd_storage_revision gauge\n";
  out += "shepherd_storage_revision " + std::to_string(registry_.storage().currentRevision()) + "\n";
  http::Response r;
  r.headers.emplace_back("Content-Type", "text/plain; version=0.0.4");
  r.body = std::move(out);
  resp->send(std::move(r));
}

}  // namespace shepherd::handlers
