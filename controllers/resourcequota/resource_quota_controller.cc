#include "controllers/resourcequota/resource_quota_controller.h"

#include "common/clock.h"
#include "controllers/manager/object_meta.h"

namespace shepherd::controllers::resourcequota {

namespace quota = meta::quota;

namespace {

// The kinds counted from informers (the rest is listed live).
const std::vector<std::pair<std::string, std::string>>& watched() {
  static const std::vector<std::pair<std::string, std::string>> all = {
      {"", "pods"},          {"", "services"}, {"", "persistentvolumeclaims"},
      {"", "configmaps"},    {"", "secrets"},  {"", "replicationcontrollers"},
      {"", "resourcequotas"}};
  return all;
}

long double nowSeconds() {
  return std::chrono::duration<long double>(clock::now().time_since_epoch()).count();
}

bool sameValues(const quota::ResourceList& a, const quota::ResourceList& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second.value != v.value) return false;
  }
  return true;
}

}  // namespace

ResourceQuotaController::ResourceQuotaController(client::Client& c, client::SharedInformers& informers,
                                                 const std::vector<client::ApiResource>& resources,
                                                 std::chrono::milliseconds resync)
    : Controller("resourcequota"),
      client_(c),
      resync_(resync),
      quotas_(informers.get(client::allObjects("", "v1", "resourcequotas"))) {
  for (const auto& [group, plural] : watched()) {
    client::Informer& inf =
        plural == "resourcequotas" ? quotas_ : informers.get(client::allObjects(group, "v1", plural));
    indexByNamespace(inf);
    informers_[group + "/" + plural] = &inf;
  }
  // Every other countable kind: deleting one gives its count back at once.
  for (const auto& r : resources) {
    if (!r.namespaced || !r.can("list") || !r.can("watch") || !r.can("delete")) continue;
    if (r.resource == "events" || r.group == "events.k8s.io" || informers_.count(r.group + "/" + r.resource))
      continue;
    client::InformerOptions o;
    o.group = r.group;
    o.version = r.version;
    o.plural = r.resource;
    client::Informer& inf = informers.get(o);
    indexByNamespace(inf);
    client::EventHandlers h;
    h.on_delete = [this](const client::Object& obj) { replenish(obj); };
    inf.addHandlers(std::move(h));
    informers_[r.group + "/" + r.resource] = &inf;
  }
  client::EventHandlers qh;
  qh.on_add = [this](const client::Object& o) { queue_.add(client::objectKey(*o)); };
  qh.on_update = [this](const client::Object& old, const client::Object& o) {
    // Only a change of spec.hard calls for a recount (status writes are ours).
    const json::Value* a = json::findPath(*old, {"spec", "hard"});
    const json::Value* b = json::findPath(*o, {"spec", "hard"});
    if ((a == nullptr) != (b == nullptr) || (a && *a != *b)) queue_.add(client::objectKey(*o));
  };
  quotas_.addHandlers(std::move(qh));
  for (const auto& [group, plural] : watched()) {
    if (plural == "resourcequotas") continue;
    client::EventHandlers h;
    h.on_delete = [this](const client::Object& o) { replenish(o); };
    if (plural == "pods")
      h.on_update = [this](const client::Object& old, const client::Object& o) {
        long double now = nowSeconds();
        if (quota::podCounts(*old, now) && !quota::podCounts(*o, now)) replenish(o);
      };
    if (plural == "services")
      h.on_update = [this](const client::Object& old, const client::Object& o) {
        if (json::getStringPath(*old, {"spec", "type"}) != json::getStringPath(*o, {"spec", "type"}))
          replenish(o);
      };
    informers_[group + "/" + plural]->addHandlers(std::move(h));
  }
}

void ResourceQuotaController::replenish(const client::Object& obj) {
  for (const auto& q : quotas_.byIndex(kNamespaceIndex, namespaceOf(*obj))) queue_.add(client::objectKey(*q));
}

std::optional<quota::Resource> ResourceQuotaController::resourceOf(const std::string& key) const {
  for (const auto& [group, plural] : watched())
    if (quota::matchesResource({group, plural}, key)) return quota::Resource{group, plural};
  if (key.rfind("count/", 0) != 0) return std::nullopt;
  std::string rest = key.substr(6);
  size_t dot = rest.find('.');
  if (dot == std::string::npos) return quota::Resource{"", rest};
  return quota::Resource{rest.substr(dot + 1), rest.substr(0, dot)};
}

Result<std::vector<client::Object>> ResourceQuotaController::objects(const quota::Resource& r,
                                                                     const std::string& ns) {
  if (auto it = informers_.find(r.group + "/" + r.plural); it != informers_.end())
    return it->second->byIndex(kNamespaceIndex, ns);
  std::string version;
  {
    MutexLock g(mu_);
    auto now = std::chrono::steady_clock::now();
    if (discovered_.empty() || now - discovered_at_ > std::chrono::minutes(1)) {
      discovered_ = client::discoverPreferredResources(client_).resources;
      discovered_at_ = now;
    }
    for (const auto& res : discovered_)
      if (res.group == r.group && res.resource == r.plural && res.namespaced && res.can("list"))
        version = res.version;
  }
  std::vector<client::Object> out;
  if (version.empty()) return out;  // not served: nothing to count
  auto list = client_.get(client::resourcePath(r.group, version, r.plural, ns));
  if (!list) return list.error();
  if (const json::Value* items = json::find(*list, "items"); items && items->IsArray())
    for (const auto& i : items->GetArray()) {
      auto d = std::make_shared<json::Document>();
      d->CopyFrom(i, d->GetAllocator());
      out.push_back(std::move(d));
    }
  return out;
}

Result<SyncResult> ResourceQuotaController::sync(const std::string& key) {
  const SyncResult again{resync_};
  client::Object q = quotas_.get(key);
  if (!q) return SyncResult{};
  std::string ns = namespaceOf(*q);
  quota::ResourceList hard = quota::parseList(json::findPath(*q, {"spec", "hard"}));
  quota::ResourceList used = quota::parseList(json::findPath(*q, {"status", "used"}));
  // Every counted key starts at zero; keys nothing counts keep what they had.
  std::map<std::string, std::vector<std::string>> byResource;  // "group/plural" -> keys
  std::map<std::string, quota::Resource> resources;
  for (const auto& [k, v] : hard)
    if (auto r = resourceOf(k)) {
      byResource[r->group + "/" + r->plural].push_back(k);
      resources[r->group + "/" + r->plural] = *r;
    }
  quota::ResourceList next;
  for (const auto& [k, v] : used)
    if (hard.count(k)) next[k] = v;
  long double now = nowSeconds();
  for (const auto& [id, keys] : byResource) {
    const quota::Resource& r = resources[id];
    auto items = objects(r, ns);
    if (!items) return items.error();
    quota::ResourceList sum;
    for (const auto& k : keys) sum[k] = quota::Amount{0, hard[k].binary};
    for (const auto& item : *items) {
      if (!quota::matchesScopes(r, *q, *item)) continue;
      for (const auto& [k, v] : quota::usage(r, *item, now)) {
        auto it = sum.find(k);
        if (it == sum.end()) continue;
        it->second.value += v.value;
        it->second.binary = it->second.binary || v.binary;
      }
    }
    for (const auto& [k, v] : sum) next[k] = v;
  }
  quota::ResourceList observedHard = quota::parseList(json::findPath(*q, {"status", "hard"}));
  bool hardSame = sameValues(observedHard, hard) && json::findPath(*q, {"status", "hard"});
  if (hardSame && sameValues(used, next) && json::findPath(*q, {"status", "used"})) return again;
  json::Document d;
  d.CopyFrom(*q, d.GetAllocator());
  json::Allocator& a = d.GetAllocator();
  json::Value status(rapidjson::kObjectType);
  if (const json::Value* h = json::findPath(*q, {"spec", "hard"}))
    json::set(status, "hard", json::Value(*h, a), a);
  json::set(status, "used", quota::toJson(next, a), a);
  json::set(d, "status", std::move(status), a);
  auto w = client_.put("/api/v1/namespaces/" + client::urlEncode(ns) + "/resourcequotas/" +
                           client::urlEncode(nameOf(*q)) + "/status",
                       json::serialize(d));
  if (!w) return w.error();
  return again;
}

}  // namespace shepherd::controllers::resourcequota
