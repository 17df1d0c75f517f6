#include "plugins/admission/resource_quota.h"

#include <set>

#include "common/clock.h"
#include "meta/quota.h"

namespace shepherd::plugins::admission {

using shepherd::admission::Attributes;
using shepherd::admission::Operation;
namespace quota = meta::quota;

namespace {

// What the quota system never counts (upstream's ignored resources).
bool ignored(const Attributes& a) {
  const std::string& g = a.resource->group;
  const std::string& p = a.resource->plural;
  if (g.empty()) return p == "bindings" || p == "componentstatuses" || p == "events" || p == "namespaces";
  return g == "events.k8s.io" || g == "authentication.k8s.io" || g == "authorization.k8s.io";
}

// Whether the evaluator of the resource looks at this operation.
bool handles(const Attributes& a) {
  const std::string& g = a.resource->group;
  const std::string& p = a.resource->plural;
  if (g.empty() && p == "pods") return a.operation == Operation::Create && a.subresource.empty();
  if (g.empty() && p == "services")
    return a.operation == Operation::Create || a.operation == Operation::Update;
  if (g.empty() && p == "persistentvolumeclaims")
    return (a.operation == Operation::Create || a.operation == Operation::Update) && a.subresource.empty();
  return a.operation == Operation::Create && a.subresource.empty();
}

long double nowSeconds() {
  return std::chrono::duration<long double>(clock::now().time_since_epoch()).count();
}

ApiError forbidden(const Attributes& a, const json::Value& obj, const std::string& why) {
  std::string name = a.name;
  if (name.empty()) name = json::getStringPath(obj, {"metadata", "name"});
  if (name.empty()) name = json::getStringPath(obj, {"metadata", "generateName"});
  if (name.empty()) name = "Unknown";
  return ApiError::forbidden(a.resource->group, a.resource->plural, name, why);
}

struct Check {
  std::string name;
  quota::ResourceList requested;  // the delta masked to the quota's keys
};

// The exceeded keys of `used + requested` against `hard`, or "" when none.
std::string exceeded(const std::string& name, const quota::ResourceList& hard,
                     const quota::ResourceList& used, const quota::ResourceList& requested) {
  quota::ResourceList req, was, lim;
  for (const auto& [k, v] : requested) {
    auto h = hard.find(k);
    if (h == hard.end()) continue;
    auto u = used.find(k);
    long double now = (u == used.end() ? 0 : u->second.value) + v.value;
    if (now <= h->second.value) continue;
    req[k] = v;
    was[k] = u == used.end() ? quota::Amount{} : u->second;
    lim[k] = h->second;
  }
  if (req.empty()) return "";
  return "exceeded quota: " + name + ", requested: " + quota::listText(req) +
         ", used: " + quota::listText(was) + ", limited: " + quota::listText(lim);
}

}  // namespace

Status ResourceQuota::validate(const Attributes& a, const json::Value& obj, const json::Value* old) const {
  if (!registry_ || !a.resource || a.ns.empty() || ignored(a) || !handles(a)) return okStatus();
  registry::Store* quotas = registry_->store("", "v1", "resourcequotas");
  if (!quotas) return okStatus();
  registry::ListOptions lo;
  lo.ns = a.ns;
  auto page = quotas->list(lo);
  if (!page) return ApiError::internal("resource quota evaluation failed: " + page.error().message);
  if (page.value().items.empty()) return okStatus();
  quota::Resource res{a.resource->group, a.resource->plural};
  long double now = nowSeconds();
  quota::ResourceList delta = quota::usage(res, obj, now);
  if (a.operation == Operation::Update) {
    if (!old)
      return forbidden(a, obj, "unable to get previous usage since prior version of object was not found");
    quota::ResourceList before = quota::usage(res, *old, now);
    for (auto& [k, v] : delta) {
      auto b = before.find(k);
      if (b != before.end()) v.value = std::max<long double>(0, v.value - b->second.value);
    }
  }
  for (auto it = delta.begin(); it != delta.end();)
    it = it->second.value == 0 ? delta.erase(it) : std::next(it);
  std::vector<Check> charges;
  for (const auto& item : page.value().items) {
    json::Document q;
    if (auto st = json::parse(item->json, q); !st) return st.error();
    std::string qname(json::getStringPath(q, {"metadata", "name"}));
    quota::ResourceList hard = quota::parseList(json::findPath(q, {"status", "hard"}));
    quota::ResourceList used = quota::parseList(json::findPath(q, {"status", "used"}));
    std::vector<std::string> restricted;
    for (const auto& [k, v] : hard)
      if (quota::matchesResource(res, k)) restricted.push_back(k);
    if (restricted.empty() || !quota::matchesScopes(res, q, obj)) continue;
    if (res.group.empty() && res.plural == "pods") {
      std::string why = quota::podConstraints(obj, restricted);
      if (!why.empty()) return forbidden(a, obj, "failed quota: " + qname + ": " + why);
    }
    std::string unknown;
    for (const auto& k : restricted)
      if (!used.count(k)) unknown += (unknown.empty() ? "" : ",") + k;
    if (!unknown.empty())
      return forbidden(a, obj, "status unknown for quota: " + qname + ", resources: " + unknown);
    Check c{qname, {}};
    for (const auto& k : restricted)
      if (auto d = delta.find(k); d != delta.end()) c.requested[k] = d->second;
    if (c.requested.empty()) continue;
    if (std::string why = exceeded(qname, hard, used, c.requested); !why.empty())
      return forbidden(a, obj, why);
    charges.push_back(std::move(c));
  }
  if (a.dry_run) return okStatus();
  // Charged against the latest status of each quota (a conflict re-reads it).
  for (const auto& c : charges) {
    std::string why;
    auto out = quotas->modify(
        a.ns, c.name,
        [&](json::Document& q) -> Status {
          quota::ResourceList hard = quota::parseList(json::findPath(q, {"status", "hard"}));
          quota::ResourceList used = quota::parseList(json::findPath(q, {"status", "used"}));
          why = exceeded(c.name, hard, used, c.requested);
          if (!why.empty()) return ApiError::forbidden("", "resourcequotas", c.name, why);
          for (const auto& [k, v] : c.requested) {
            if (!hard.count(k)) continue;
            auto u = used.find(k);
            if (u == used.end())
              used[k] = v;
            else
              u->second.value += v.value;
          }
          json::Allocator& al = q.GetAllocator();
          json::Value& st = json::ensureObject(q, "status", al);
          json::set(st, "used", quota::toJson(used, al), al);
          return okStatus();
        },
        registry::WriteOptions{}, registry::Subresource::Status);
    if (!out) {
      if (!why.empty()) return forbidden(a, obj, why);
      if (out.error().code == 404) continue;  // the quota went meanwhile
      return out.error();
    }
  }
  return okStatus();
}

}  // namespace shepherd::plugins::admission
