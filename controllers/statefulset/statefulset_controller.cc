#include "controllers/statefulset/statefulset_controller.h"

#include "common/log.h"
#include "controllers/manager/controller_ref.h"
#include "controllers/manager/object_meta.h"
#include "controllers/manager/pod_state.h"
#include "controllers/manager/revision_history.h"
#include "controllers/statefulset/stateful_pod.h"
#include "controllers/statefulset/statefulset_sync.h"
#include "meta/selectors.h"

namespace shepherd::controllers::statefulset {

namespace {

constexpr const char* kKind = "StatefulSet";

Result<meta::LabelSelector> selectorOf(const json::Value& set) {
  const json::Value* sel = json::findPath(set, {"spec", "selector"});
  if (!sel) return ApiError::badRequest("spec.selector is missing");
  return meta::LabelSelector::fromJson(*sel);
}

std::string setPath(const json::Value& set) {
  return "/apis/apps/v1/namespaces/" + client::urlEncode(namespaceOf(set)) + "/statefulsets/" +
         client::urlEncode(nameOf(set));
}

}  // namespace

StatefulSetController::StatefulSetController(client::Client& c, client::SharedInformers& informers,
                                             client::EventRecorder& events, const clock::Clock& clk)
    : Controller("statefulset"),
      client_(c),
      sets_(informers.get(client::allObjects("apps", "v1", "statefulsets"))),
      pods_(informers.get(client::allObjects("", "v1", "pods"))),
      revisions_(informers.get(client::allObjects("apps", "v1", "controllerrevisions"))),
      events_(events),
      clock_(clk) {
  indexByNamespace(pods_);
  indexByNamespace(sets_);
  indexByNamespace(revisions_);
  sets_.addHandlers(enqueueKeys());
  client::EventHandlers ph;
  ph.on_add = [this](const client::Object& o) { onPodAdd(o); };
  ph.on_update = [this](const client::Object& old, const client::Object& o) { onPodUpdate(old, o); };
  ph.on_delete = [this](const client::Object& o) { onPodDelete(o); };
  pods_.addHandlers(std::move(ph));
}

client::Object StatefulSetController::resolveControllerRef(const json::Value& pod) const {
  const json::Value* ref = controllerRef(pod);
  if (!ref || json::getString(*ref, "kind") != kKind) return nullptr;
  client::Object set = sets_.get(namespaceOf(pod) + "/" + std::string(json::getString(*ref, "name")));
  if (!set || uidOf(*set) != json::getString(*ref, "uid")) return nullptr;
  return set;
}

void StatefulSetController::enqueueMatching(const json::Value& pod) {
  const json::Value* labels = json::findPath(pod, {"metadata", "labels"});
  for (auto& set : sets_.byIndex(kNamespaceIndex, namespaceOf(pod))) {
    auto sel = selectorOf(*set);
    if (sel && !sel->empty() && sel->matchesLabels(labels)) queue_.add(client::objectKey(*set));
  }
}

void StatefulSetController::onPodAdd(const client::Object& pod) {
  if (json::findPath(*pod, {"metadata", "deletionTimestamp"})) {
    onPodDelete(pod);
    return;
  }
  if (controllerRef(*pod)) {
    if (client::Object set = resolveControllerRef(*pod)) queue_.add(client::objectKey(*set));
    return;
  }
  enqueueMatching(*pod);
}

void StatefulSetController::onPodUpdate(const client::Object& old_pod, const client::Object& pod) {
  if (json::getStringPath(*old_pod, {"metadata", "resourceVersion"}) ==
      json::getStringPath(*pod, {"metadata", "resourceVersion"}))
    return;
  const json::Value* cur = controllerRef(*pod);
  const json::Value* old = controllerRef(*old_pod);
  bool refChanged = (cur == nullptr) != (old == nullptr) || (cur && *cur != *old);
  if (refChanged && old)
    if (client::Object set = resolveControllerRef(*old_pod)) queue_.add(client::objectKey(*set));
  if (cur) {
    client::Object set = resolveControllerRef(*pod);
    if (!set) return;
    queue_.add(client::objectKey(*set));
    int64_t mrs = json::getInt(*json::find(*set, "spec"), "minReadySeconds").value_or(0);
    if (mrs > 0 && podReady(*pod) && !podReady(*old_pod))
      queue_.addAfter(client::objectKey(*set), std::chrono::seconds(mrs + 1));
    return;
  }
  const json::Value* la = json::findPath(*old_pod, {"metadata", "labels"});
  const json::Value* lb = json::findPath(*pod, {"metadata", "labels"});
  if (refChanged || (la == nullptr) != (lb == nullptr) || (la && *la != *lb)) enqueueMatching(*pod);
}

void StatefulSetController::onPodDelete(const client::Object& pod) {
  if (client::Object set = resolveControllerRef(*pod)) queue_.add(client::objectKey(*set));
}

Result<SyncResult> StatefulSetController::sync(const std::string& key) {
  client::Object shared = sets_.get(key);
  if (!shared) return SyncResult{};
  auto selector = selectorOf(*shared);
  if (!selector) {
    LOG_WARN("statefulset controller: " << key << ": " << selector.error().message);
    return SyncResult{};
  }
  Sync s;
  s.key = key;
  s.set.CopyFrom(*shared, s.set.GetAllocator());
  std::string ns = namespaceOf(s.set);
  Owner owner{&s.set, "apps/v1", kKind, setPath(s.set), ""};
  auto revs = claimRevisions(client_, owner, *selector, revisions_.byIndex(kNamespaceIndex, ns));
  if (!revs) return revs.error();
  s.revisions = std::move(*revs);
  sortByRevision(s.revisions);
  // Pods are the set's only when named <set>-<ordinal> as well as selected.
  std::vector<client::Object> candidates;
  for (auto& p : pods_.byIndex(kNamespaceIndex, ns))
    if (isMemberOf(s.set, *p) || controllerRef(*p)) candidates.push_back(p);
  auto pods = claimObjects(client_, owner, *selector, candidates, [&ns](const json::Value& p) {
    return "/api/v1/namespaces/" + client::urlEncode(ns) + "/pods/" + client::urlEncode(nameOf(p));
  });
  if (!pods) return pods.error();
  for (auto& p : *pods)
    if (isMemberOf(s.set, *p)) s.pods.push_back(p);
  Status st = updateStatefulSet(s);
  if (!st) return st.error();
  int64_t mrs = json::getInt(s.spec(), "minReadySeconds").value_or(0);
  if (mrs > 0 && json::getInt(s.status, "availableReplicas").value_or(0) !=
                     json::getInt(s.spec(), "replicas").value_or(1))
    s.requeue = std::chrono::seconds(mrs);
  return SyncResult{s.requeue.value_or(std::chrono::milliseconds(0))};
}

}  // namespace shepherd::controllers::statefulset
