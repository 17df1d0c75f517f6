#include "controllers/namespace/content_deleter.h"

#include <algorithm>

#include "client/discovery.h"

namespace shepherd::controllers {

namespace {

// Seconds granted to objects that wait on finalizers (upstream's default estimate).
constexpr int64_t kFinalizerEstimateSeconds = 15;
constexpr auto kDiscoveryTtl = std::chrono::seconds(30);

std::string joinSorted(std::vector<std::string> parts) {
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

json::Value condition(const std::string& type, bool status, const std::string& reason,
                      const std::string& message, const json::Value* old_conditions, const std::string& now,
                      json::Allocator& a) {
  std::string since = now;
  if (old_conditions && old_conditions->IsArray())
    for (auto& c : old_conditions->GetArray())
      if (c.IsObject() && json::getString(c, "type") == type &&
          json::getString(c, "status") == (status ? "True" : "False") &&
          !json::getString(c, "lastTransitionTime").empty())
        since = json::getString(c, "lastTransitionTime");
  json::Value c(rapidjson::kObjectType);
  json::setString(c, "type", type, a);
  json::setString(c, "status", status ? "True" : "False", a);
  json::setString(c, "lastTransitionTime", since, a);
  json::setString(c, "reason", reason, a);
  json::setString(c, "message", message, a);
  return c;
}

}  // namespace

json::Value namespaceConditions(const ContentDeletionReport& r, const json::Value* old,
                                const std::string& now, json::Allocator& a) {
  json::Value out(rapidjson::kArrayType);
  if (r.discovery_failures.empty())
    out.PushBack(condition("NamespaceDeletionDiscoveryFailure", false, "ResourcesDiscovered",
                           "All resources successfully discovered", old, now, a),
                 a);
  else
    out.PushBack(
        condition("NamespaceDeletionDiscoveryFailure", true, "DiscoveryFailed",
                  "Discovery failed for some groups, " + std::to_string(r.discovery_failures.size()) +
                      " failing: " + joinSorted(r.discovery_failures),
                  old, now, a),
        a);
  out.PushBack(condition("NamespaceDeletionGroupVersionParsingFailure", false, "ParsedGroupVersions",
                         "All legacy kube types successfully parsed", old, now, a),
               a);
  if (r.deletion_failures.empty())
    out.PushBack(condition("NamespaceDeletionContentFailure", false, "ContentDeleted",
                           "All content successfully deleted, may be waiting on finalization", old, now, a),
                 a);
  else
    out.PushBack(
        condition("NamespaceDeletionContentFailure", true, "ContentDeletionFailed",
                  "Failed to delete all resource types, " + std::to_string(r.deletion_failures.size()) +
                      " remaining: " + joinSorted(r.deletion_failures),
                  old, now, a),
        a);
  if (r.remaining.empty()) {
    out.PushBack(condition("NamespaceContentRemaining", false, "ContentRemoved",
                           "All content successfully removed", old, now, a),
                 a);
  } else {
    std::vector<std::string> parts;
    for (auto& [res, n] : r.remaining)
      parts.push_back(res + " has " + std::to_string(n) + " resource instances");
    out.PushBack(condition("NamespaceContentRemaining", true, "SomeResourcesRemain",
                           "Some resources are remaining: " + joinSorted(parts), old, now, a),
                 a);
  }
  if (r.finalizers.empty()) {
    out.PushBack(condition("NamespaceFinalizersRemaining", false, "ContentHasNoFinalizers",
                           "All content-preserving finalizers finished", old, now, a),
                 a);
  } else {
    std::vector<std::string> parts;
    for (auto& [f, n] : r.finalizers) parts.push_back(f + " in " + std::to_string(n) + " resource instances");
    out.PushBack(condition("NamespaceFinalizersRemaining", true, "SomeFinalizersRemain",
                           "Some content in the namespace has finalizers remaining: " + joinSorted(parts),
                           old, now, a),
                 a);
  }
  return out;
}

std::vector<NamespacedResource> NamespacedContentDeleter::discover(std::vector<std::string>& failures) {
  {
    MutexLock g(mu_);
    if (!cached_.empty() && std::chrono::steady_clock::now() - cached_at_ < kDiscoveryTtl) return cached_;
  }
  client::DiscoveryResult found = client::discoverPreferredResources(client_);
  std::vector<NamespacedResource> out;
  for (auto& r : found.resources)
    if (r.namespaced && r.can("delete"))
      out.push_back({r.group, r.version, r.resource, r.can("deletecollection"), r.can("list")});
  failures.insert(failures.end(), found.failures.begin(), found.failures.end());
  if (found.failures.empty()) {
    MutexLock g(mu_);
    cached_ = out;
    cached_at_ = std::chrono::steady_clock::now();
  }
  return out;
}

void NamespacedContentDeleter::deleteResource(const NamespacedResource& r, const std::string& ns,
                                              clock::TimePoint deleted_at, ContentDeletionReport& report) {
  std::string qualified = qualifiedResource(r.group, r.resource);
  std::string path = client::resourcePath(r.group, r.version, r.resource, ns);
  if (!r.list) return;  // nothing we can see or wait for
  auto before = client_.get(path);
  if (!before) {
    if (before.error().code != 404)
      report.deletion_failures.push_back(qualified + ": " + before.error().message);
    return;
  }
  const json::Value* items = json::find(*before, "items");
  if (!items || !items->IsArray() || items->Empty()) return;
  // Pods are granted their grace period, counted from the namespace's deletion.
  int64_t estimate = 0;
  if (r.group.empty() && r.resource == "pods") {
    for (auto& pod : items->GetArray()) {
      std::string_view phase = json::getStringPath(pod, {"status", "phase"});
      if (phase == "Succeeded" || phase == "Failed") continue;
      const json::Value* spec = json::find(pod, "spec");
      int64_t grace = 30;
      if (spec)
        if (auto g = json::getInt(*spec, "terminationGracePeriodSeconds")) grace = *g;
      estimate = std::max(estimate, grace);
    }
    auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(clock::now() - deleted_at).count();
    estimate = std::max<int64_t>(0, estimate - elapsed);
  }
  const std::string body = R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})";
  bool collectionDone = false;
  if (r.deletecollection) {
    auto del = client_.request("DELETE", path, body, "application/json");
    if (!del) {
      report.deletion_failures.push_back(qualified + ": " + del.error().message);
      return;
    }
    if (del->status >= 200 && del->status < 300) {
      collectionDone = true;
    } else if (del->status != 404 && del->status != 405) {
      report.deletion_failures.push_back(qualified + ": deletecollection answered " +
                                         std::to_string(del->status));
      return;
    }
  }
  if (!collectionDone) {
    for (auto& item : items->GetArray()) {
      std::string name(json::getStringPath(item, {"metadata", "name"}));
      auto del = client_.request("DELETE", path + "/" + client::urlEncode(name), body, "application/json");
      if (!del) {
        report.deletion_failures.push_back(qualified + ": " + del.error().message);
        return;
      }
      if (del->status >= 300 && del->status != 404) {
        report.deletion_failures.push_back(qualified + " " + name + ": delete answered " +
                                           std::to_string(del->status));
        return;
      }
    }
  }
  auto after = client_.get(path);
  if (!after) {
    report.deletion_failures.push_back(qualified + ": " + after.error().message);
    return;
  }
  const json::Value* left = json::find(*after, "items");
  if (!left || !left->IsArray() || left->Empty()) return;
  int withFinalizers = 0;
  for (auto& item : left->GetArray()) {
    const json::Value* fins = json::findPath(item, {"metadata", "finalizers"});
    if (!fins || !fins->IsArray() || fins->Empty()) continue;
    ++withFinalizers;
    for (auto& f : fins->GetArray())
      if (f.IsString()) ++report.finalizers[std::string(json::view(f))];
  }
  report.remaining[qualified] = static_cast<int>(left->Size());
  if (estimate > 0) {
    report.estimate_seconds = std::max(report.estimate_seconds, estimate);
  } else if (withFinalizers > 0) {
    report.estimate_seconds = std::max(report.estimate_seconds, kFinalizerEstimateSeconds);
  } else {
    report.deletion_failures.push_back("unexpected items still remain in namespace: " + ns + " for " +
                                       qualified);
  }
}

ContentDeletionReport NamespacedContentDeleter::deleteAll(const std::string& ns,
                                                          clock::TimePoint deleted_at) {
  ContentDeletionReport report;
  auto resources = discover(report.discovery_failures);
  // Pods first: nothing else goes while a pod still runs (a pod may need its ConfigMaps,
  // Secrets or ServiceAccount until it has stopped).
  auto pods = std::find_if(resources.begin(), resources.end(), [](const NamespacedResource& r) {
    return r.group.empty() && r.resource == "pods";
  });
  if (pods != resources.end()) {
    deleteResource(*pods, ns, deleted_at, report);
    if (!report.remaining.empty() || !report.deletion_failures.empty()) return report;
    resources.erase(pods);
  }
  for (auto& r : resources) deleteResource(r, ns, deleted_at, report);
  return report;
}

}  // namespace shepherd::controllers
