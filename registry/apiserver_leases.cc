#include "registry/apiserver_leases.h"

#include <algorithm>
#include <map>

#include "common/clock.h"
#include "common/json.h"
#include "common/log.h"

namespace shepherd::registry {

namespace {

constexpr const char* kLeasePrefix = "/registry/masterleases/";

// s as a JSON string literal.
std::string quoted(const std::string& s) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return std::string(sb.GetString(), sb.GetSize());
}

int64_t wallSeconds(const clock::Clock& c) {
  return std::chrono::duration_cast<std::chrono::seconds>(c.now().time_since_epoch()).count();
}

std::string family(const std::string& address) {
  return address.find(':') == std::string::npos ? "IPv4" : "IPv6";
}

// The live servers grouped by port: one Endpoints subset (and one EndpointSlice) per port.
std::map<int, std::vector<std::string>> byPort(const std::vector<ApiServerEndpoint>& live) {
  std::map<int, std::vector<std::string>> groups;
  for (const auto& e : live) groups[e.port].push_back(e.address);
  return groups;
}

std::string endpointsJson(const std::vector<ApiServerEndpoint>& live) {
  std::string subsets;
  for (const auto& [port, addresses] : byPort(live)) {
    if (!subsets.empty()) subsets += ",";
    subsets += R"({"addresses":[)";
    for (size_t i = 0; i < addresses.size(); ++i)
      subsets += (i ? "," : "") + std::string(R"({"ip":)") + quoted(addresses[i]) + "}";
    subsets += R"(],"ports":[{"name":"https","port":)" + std::to_string(port) + R"(,"protocol":"TCP"}]})";
  }
  return R"({"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"kubernetes","namespace":"default",)"
         R"("labels":{"endpointslice.kubernetes.io/skip-mirror":"true"}},"subsets":[)" +
         subsets + "]}";
}

std::string sliceJson(const std::string& name, int port, const std::vector<std::string>& addresses) {
  std::string eps;
  for (size_t i = 0; i < addresses.size(); ++i)
    eps += (i ? "," : "") + std::string(R"({"addresses":[)") + quoted(addresses[i]) +
           R"(],"conditions":{"ready":true}})";
  return R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":)" + quoted(name) +
         R"(,"namespace":"default","labels":{"kubernetes.io/service-name":"kubernetes"}},"addressType":")" +
         family(addresses.front()) + R"(","endpoints":[)" + eps + R"(],"ports":[{"name":"https","port":)" +
         std::to_string(port) + R"(,"protocol":"TCP"}]})";
}

// True when `field` of the stored object equals that of `want` (so no write is needed).
bool sameField(const ObjectPtr& have, const json::Document& want, const char* field) {
  if (!have) return false;
  json::Document h;
  h.Parse(have->json.data(), have->json.size());
  const json::Value* a = json::find(h, field);
  const json::Value* b = json::find(want, field);
  return a && b && *a == *b;
}

// Writes `body` as default/<name> of `store` unless `fields` already match.
Status put(Store* store, const std::string& name, const std::string& body,
           std::initializer_list<const char*> fields) {
  json::Document d;
  d.Parse(body.data(), body.size());
  auto cur = store->get("default", name);
  bool same = cur.ok();
  for (const char* f : fields) same = same && sameField(*cur, d, f);
  if (same) return okStatus();
  if (!cur.ok()) {
    auto r = store->create("default", d, WriteOptions{});
    if (r || r.error().reason == "AlreadyExists") return okStatus();  // another server was first
    return r.error();
  }
  auto r = store->update("default", name, d, WriteOptions{}, Subresource::Main);
  if (!r && r.error().code != 409) return r.error();  // 409: another server wrote it; next round
  return okStatus();
}

// A stored lease: the server and its last renewal (wall-clock seconds); false if malformed.
bool parseLease(const std::string& value, ApiServerEndpoint& e, int64_t& renewed) {
  json::Document d;
  d.Parse(value.data(), value.size());
  if (d.HasParseError() || !d.IsObject()) return false;
  e.address = std::string(json::getString(d, "address"));
  e.port = static_cast<int>(json::getInt(d, "port").value_or(0));
  renewed = json::getInt(d, "renewTime").value_or(0);
  return !e.address.empty() && e.port > 0;
}

}  // namespace

ApiServerLeases::ApiServerLeases(Registry& registry, ApiServerEndpoint self, bool exclusive,
                                 std::chrono::seconds ttl, const clock::Clock& clock)
    : registry_(registry),
      storage_(registry.storage()),
      self_(std::move(self)),
      exclusive_(exclusive),
      ttl_(ttl),
      clock_(clock) {}

std::string ApiServerLeases::key(const ApiServerEndpoint& e) const {
  return std::string(kLeasePrefix) + e.address + ":" + std::to_string(e.port);
}

Result<std::vector<ApiServerEndpoint>> ApiServerLeases::reconcile() {
  if (exclusive_) {
    // The only server: no lease to renew (no periodic writes, so watchers of the embedded
    // store see only their own revisions); leftovers of other runs go.
    storage::ListRequest req;
    req.prefix = kLeasePrefix;
    if (auto leases = storage_.list(req); leases.ok())
      for (const storage::KeyValue& kv : leases.value.kvs) (void)storage_.remove(kv.key, kv.mod_revision);
    std::vector<ApiServerEndpoint> live{self_};
    if (auto st = writeEndpoints(live); !st) return st.error();
    return live;
  }
  int64_t now = wallSeconds(clock_);
  std::string mine = R"({"address":)" + quoted(self_.address) + R"(,"port":)" + std::to_string(self_.port) +
                     R"(,"renewTime":)" + std::to_string(now) + "}";
  auto created = storage_.create(key(self_), mine);
  if (created.code == storage::Code::Exists) {
    auto updated = storage_.update(key(self_), mine, 0);
    if (!updated.ok()) return ApiError::unavailable("renewing the API server lease: " + updated.message);
  } else if (!created.ok()) {
    return ApiError::unavailable("creating the API server lease: " + created.message);
  }
  storage::ListRequest req;
  req.prefix = kLeasePrefix;
  auto leases = storage_.list(req);
  if (!leases.ok()) return ApiError::unavailable("listing API server leases: " + leases.message);
  std::vector<ApiServerEndpoint> live;
  for (const storage::KeyValue& kv : leases.value.kvs) {
    ApiServerEndpoint e;
    int64_t renewed = 0;
    bool expired = !parseLease(kv.value, e, renewed) || renewed + ttl_.count() < now;
    if (!expired) {
      live.push_back(std::move(e));
      continue;
    }
    // Only if it was not renewed meanwhile (a conflict means its server is alive).
    auto gone = storage_.remove(kv.key, kv.mod_revision);
    if (gone.ok()) LOG_INFO("API server lease " << kv.key.substr(req.prefix.size()) << " expired; removed");
  }
  std::sort(live.begin(), live.end());
  if (auto st = writeEndpoints(live); !st) return st.error();
  return live;
}

void ApiServerLeases::release() {
  if (exclusive_) return;  // no lease; the endpoints stay as they are (upstream keeps the last)
  auto cur = storage_.get(key(self_));
  if (cur.ok()) (void)storage_.remove(key(self_), cur.value.mod_revision);
  storage::ListRequest req;
  req.prefix = kLeasePrefix;
  auto leases = storage_.list(req);
  if (!leases.ok()) return;
  std::vector<ApiServerEndpoint> rest;
  int64_t now = wallSeconds(clock_);
  for (const storage::KeyValue& kv : leases.value.kvs) {
    ApiServerEndpoint e;
    int64_t renewed = 0;
    if (parseLease(kv.value, e, renewed) && renewed + ttl_.count() >= now) rest.push_back(std::move(e));
  }
  std::sort(rest.begin(), rest.end());
  // With no server left, the last one's address stays (upstream keeps it too).
  if (!rest.empty()) (void)writeEndpoints(rest);
}

Status ApiServerLeases::writeEndpoints(const std::vector<ApiServerEndpoint>& live) {
  if (live.empty()) return okStatus();
  Store* endpoints = registry_.store("", "v1", "endpoints");
  if (auto st = put(endpoints, "kubernetes", endpointsJson(live), {"subsets", "metadata"}); !st) return st;
  Store* slices = registry_.store("discovery.k8s.io", "v1", "endpointslices");
  if (!slices) return okStatus();
  // One slice per port: "kubernetes" for the lowest, "kubernetes-<port>" for the others.
  std::vector<std::string> wanted;
  bool first = true;
  for (const auto& [port, addresses] : byPort(live)) {
    std::string name = first ? "kubernetes" : "kubernetes-" + std::to_string(port);
    first = false;
    wanted.push_back(name);
    std::string body = sliceJson(name, port, addresses);
    auto existing = slices->get("default", name);
    if (existing.ok()) {
      json::Document cur;
      cur.Parse((*existing)->json.data(), (*existing)->json.size());
      if (json::getString(cur, "addressType") != family(addresses.front())) {  // immutable: replace
        if (auto gone = slices->remove("default", name, DeleteOptions{}); !gone) return gone.error();
      }
    }
    if (auto st = put(slices, name, body, {"endpoints", "ports", "addressType"}); !st) return st;
  }
  ListOptions lo;
  lo.ns = "default";
  lo.label_selector = "kubernetes.io/service-name=kubernetes";
  if (auto page = slices->list(lo)) {
    for (const ObjectPtr& o : page->items) {
      if (std::find(wanted.begin(), wanted.end(), o->name) != wanted.end()) continue;
      if (o->name.rfind("kubernetes-", 0) != 0) continue;
      (void)slices->remove("default", o->name, DeleteOptions{});
    }
  }
  return okStatus();
}

}  // namespace shepherd::registry
