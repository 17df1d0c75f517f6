#include "controllers/replicaset/replica_set_controller.h"

#include <algorithm>
#include <optional>

#include "common/clock.h"
#include "common/log.h"
#include "controllers/manager/controller_ref.h"
#include "controllers/manager/object_meta.h"
#include "controllers/manager/parallel.h"
#include "controllers/manager/pod_state.h"

namespace shepherd::controllers {

namespace {

std::string podsPath(const std::string& ns) {
  return "/api/v1/namespaces/" + client::urlEncode(ns) + "/pods";
}

int64_t replicasOf(const json::Value& rs) {
  const json::Value* spec = json::find(rs, "spec");
  return spec ? json::getInt(*spec, "replicas").value_or(1) : 1;
}

int64_t minReadySecondsOf(const json::Value& rs) {
  const json::Value* spec = json::find(rs, "spec");
  return spec ? json::getInt(*spec, "minReadySeconds").value_or(0) : 0;
}

}  // namespace

ReplicaSetController::ReplicaSetController(client::Client& c, client::SharedInformers& informers,
                                           client::EventRecorder& events, const ReplicatedKind& kind)
    : Controller(kind.controller_name),
      kind_(kind),
      client_(c),
      replicasets_(informers.get(client::allObjects(kind.group, "v1", kind.plural))),
      pods_(informers.get(client::allObjects("", "v1", "pods"))),
      events_(events) {
  indexByNamespace(pods_);
  client::EventHandlers rh = enqueueKeys();
  rh.on_delete = [this](const client::Object& o) { expectations_.remove(client::objectKey(*o)); };
  replicasets_.addHandlers(std::move(rh));
  client::EventHandlers ph;
  ph.on_add = [this](const client::Object& o) { onPodAdd(o); };
  ph.on_update = [this](const client::Object& old, const client::Object& o) { onPodUpdate(old, o); };
  ph.on_delete = [this](const client::Object& o) { onPodDelete(o); };
  pods_.addHandlers(std::move(ph));
}

std::string ReplicaSetController::ownerKey(const json::Value& pod) const {
  const json::Value* ref = controllerRef(pod);
  if (!ref || json::getString(*ref, "kind") != kind_.kind) return "";
  // Any version of the owner's group (apps/v1beta2 ReplicaSets were the same objects).
  std::string_view api = json::getString(*ref, "apiVersion");
  bool sameGroup = kind_.group.empty() ? api.find('/') == std::string_view::npos
                                       : api.substr(0, kind_.group.size() + 1) == kind_.group + "/";
  if (!sameGroup) return "";
  std::string key = namespaceOf(pod) + "/" + std::string(json::getString(*ref, "name"));
  client::Object rs = replicasets_.get(key);
  if (!rs || uidOf(*rs) != json::getString(*ref, "uid")) return "";
  return key;
}

void ReplicaSetController::enqueueMatching(const json::Value& pod) {
  std::string ns = namespaceOf(pod);
  const json::Value* labels = json::findPath(pod, {"metadata", "labels"});
  for (auto& rs : replicasets_.list()) {
    if (namespaceOf(*rs) != ns) continue;
    auto sel = kind_.selectorOf(*rs);
    if (sel && !sel->empty() && sel->matchesLabels(labels)) queue_.add(client::objectKey(*rs));
  }
}

void ReplicaSetController::onPodAdd(const client::Object& pod) {
  if (json::findPath(*pod, {"metadata", "deletionTimestamp"})) {
    onPodDelete(pod);  // seen for the first time already on its way out (e.g. after a restart)
    return;
  }
  if (controllerRef(*pod)) {
    std::string key = ownerKey(*pod);
    if (key.empty()) return;
    expectations_.creationObserved(key);
    queue_.add(key);
    return;
  }
  enqueueMatching(*pod);  // an orphan: whoever selects it may adopt it
}

void ReplicaSetController::onPodUpdate(const client::Object& old_pod, const client::Object& pod) {
  if (json::getStringPath(*old_pod, {"metadata", "resourceVersion"}) ==
      json::getStringPath(*pod, {"metadata", "resourceVersion"}))
    return;  // a relist: nothing changed
  bool nowDeleting = json::findPath(*pod, {"metadata", "deletionTimestamp"}) &&
                     !json::findPath(*old_pod, {"metadata", "deletionTimestamp"});
  std::string oldKey = ownerKey(*old_pod), key = ownerKey(*pod);
  if (nowDeleting) {
    // A graceful deletion counts as the deletion we expected (upstream does the same).
    if (!key.empty()) expectations_.deletionObserved(key, client::objectKey(*pod));
    if (!oldKey.empty() && oldKey != key) expectations_.deletionObserved(oldKey, client::objectKey(*pod));
  }
  if (!oldKey.empty() && oldKey != key) queue_.add(oldKey);
  if (!key.empty()) {
    queue_.add(key);
    // A pod that just became ready counts as available only after minReadySeconds.
    client::Object rs = replicasets_.get(key);
    int64_t mrs = rs ? minReadySecondsOf(*rs) : 0;
    if (mrs > 0 && podReady(*pod) && !podReady(*old_pod)) queue_.addAfter(key, std::chrono::seconds(mrs + 1));
    return;
  }
  const json::Value* oldLabels = json::findPath(*old_pod, {"metadata", "labels"});
  const json::Value* labels = json::findPath(*pod, {"metadata", "labels"});
  bool labelsChanged = (oldLabels == nullptr) != (labels == nullptr) || (labels && *labels != *oldLabels);
  if (labelsChanged || !oldKey.empty()) enqueueMatching(*pod);
}

void ReplicaSetController::onPodDelete(const client::Object& pod) {
  std::string key = ownerKey(*pod);
  if (key.empty()) return;
  expectations_.deletionObserved(key, client::objectKey(*pod));
  queue_.add(key);
}

Result<std::vector<client::Object>> ReplicaSetController::claimPods(const json::Value& rs,
                                                                    const meta::LabelSelector& selector) {
  std::string ns = namespaceOf(rs);
  std::vector<client::Object> active;
  for (auto& pod : pods_.byIndex(kNamespaceIndex, ns))
    if (podActive(*pod)) active.push_back(pod);
  Owner owner{&rs, kind_.api_version, kind_.kind, kind_.objectPath(ns, nameOf(rs)), ""};
  return claimObjects(client_, owner, selector, active, [&ns](const json::Value& pod) {
    return podsPath(ns) + "/" + client::urlEncode(nameOf(pod));
  });
}

Status ReplicaSetController::createPods(const json::Value& rs, const std::string& key, int n) {
  const json::Value* tmpl = json::findPath(rs, {"spec", "template"});
  json::Document pod;
  pod.SetObject();
  auto& a = pod.GetAllocator();
  json::setString(pod, "apiVersion", "v1", a);
  json::setString(pod, "kind", "Pod", a);
  json::Value& md = json::ensureObject(pod, "metadata", a);
  json::setString(md, "generateName", nameOf(rs) + "-", a);
  for (const char* f : {"labels", "annotations", "finalizers"})
    if (const json::Value* v = tmpl ? json::findPath(*tmpl, {"metadata", f}) : nullptr)
      json::set(md, f, json::Value(*v, a), a);
  json::Value refs(rapidjson::kArrayType);
  refs.PushBack(controllerReference(Owner{&rs, kind_.api_version, kind_.kind, "", ""}, a), a);
  json::set(md, "ownerReferences", std::move(refs), a);
  if (const json::Value* spec = tmpl ? json::find(*tmpl, "spec") : nullptr)
    json::set(pod, "spec", json::Value(*spec, a), a);
  std::string body = json::serialize(pod);
  std::string path = podsPath(namespaceOf(rs));
  expectations_.expectCreations(key, n);
  // A terminating namespace refuses new pods: nothing to report.
  auto terminating = [](const ApiError& e) {
    return e.code == 403 && e.message.find("being terminated") != std::string::npos;
  };
  BatchOutcome out = slowStartBatch(
      n,
      [&](int) -> Status {
        auto r = client_.post(path, body);
        if (!r) return r.error();
        events_.event(rs, kind_.api_version, kind_.kind, "Normal", "SuccessfulCreate",
                      "Created pod: " + nameOf(*r));
        return okStatus();
      },
      terminating);
  // The failed ones and the ones never tried will not be observed.
  for (int k = out.succeeded; k < n; ++k) expectations_.creationObserved(key);
  if (!out.first_error) {
    events_.event(rs, kind_.api_version, kind_.kind, "Warning", "FailedCreate",
                  "Error creating: " + out.first_error.error().message);
    return out.first_error.error();
  }
  return okStatus();
}

Status ReplicaSetController::manageReplicas(const json::Value& rs, const std::string& key,
                                            const std::vector<client::Object>& pods) {
  int64_t diff = static_cast<int64_t>(pods.size()) - replicasOf(rs);
  if (diff < 0) return createPods(rs, key, static_cast<int>(std::min<int64_t>(-diff, kBurstReplicas)));
  if (diff == 0) return okStatus();
  std::vector<client::Object> victims = pods;
  sortForDeletion(victims);
  victims.resize(static_cast<size_t>(std::min<int64_t>(diff, kBurstReplicas)));
  std::set<std::string> keys;
  for (auto& p : victims) keys.insert(client::objectKey(*p));
  expectations_.expectDeletions(key, keys);
  Status firstError = okStatus();
  for (auto& p : victims) {
    auto r = client_.request(
        "DELETE", podsPath(namespaceOf(*p)) + "/" + client::urlEncode(nameOf(*p)),
        R"({"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":")" + uidOf(*p) + "\"}}",
        "application/json");
    bool ok = r && (r->status < 300 || r->status == 404);
    if (ok && r->status < 300)
      events_.event(rs, kind_.api_version, kind_.kind, "Normal", "SuccessfulDelete",
                    "Deleted pod: " + nameOf(*p));
    if (!ok || r->status == 404) expectations_.deletionObserved(key, client::objectKey(*p));
    if (!ok && firstError) {
      std::string why = r ? "status " + std::to_string(r->status) : r.error().message;
      events_.event(rs, kind_.api_version, kind_.kind, "Warning", "FailedDelete", "Error deleting: " + why);
      firstError = ApiError::internal("deleting pod " + nameOf(*p) + ": " + why);
    }
  }
  return firstError;
}

Status ReplicaSetController::updateStatus(const json::Value& rs, const std::vector<client::Object>& pods,
                                          const Status& manage_error) {
  auto now = clock::now();
  int64_t mrs = minReadySecondsOf(rs);
  const json::Value* tmplLabels = json::findPath(rs, {"spec", "template", "metadata", "labels"});
  int64_t fully = 0, ready = 0, available = 0;
  for (auto& p : pods) {
    const json::Value* labels = json::findPath(*p, {"metadata", "labels"});
    bool all = true;
    if (tmplLabels && tmplLabels->IsObject())
      for (auto& kv : tmplLabels->GetObject()) {
        const json::Value* have = labels ? json::find(*labels, json::view(kv.name)) : nullptr;
        if (!have || *have != kv.value) all = false;
      }
    if (all) ++fully;
    if (podReady(*p)) ++ready;
    if (podAvailable(*p, mrs, now)) ++available;
  }
  json::Document doc;
  doc.CopyFrom(rs, doc.GetAllocator());
  auto& a = doc.GetAllocator();
  json::Value& st = json::ensureObject(doc, "status", a);
  json::Document before;
  before.CopyFrom(st, before.GetAllocator());
  json::set(st, "replicas", json::Value(static_cast<int64_t>(pods.size())), a);
  json::set(st, "fullyLabeledReplicas", json::Value(fully), a);
  json::set(st, "readyReplicas", json::Value(ready), a);
  json::set(st, "availableReplicas", json::Value(available), a);
  json::set(st, "observedGeneration",
            json::Value(json::getInt(*json::find(rs, "metadata"), "generation").value_or(1)), a);
  // ReplicaFailure while creating or deleting fails; gone once it works again.
  json::Value conds(rapidjson::kArrayType);
  bool had = false;
  if (const json::Value* old = json::find(st, "conditions"); old && old->IsArray())
    for (auto& c : old->GetArray()) {
      if (json::getString(c, "type") == "ReplicaFailure") {
        had = true;
        if (manage_error) continue;
      }
      conds.PushBack(json::Value(c, a), a);
    }
  if (!manage_error && !had) {
    json::Value c(rapidjson::kObjectType);
    json::setString(c, "type", "ReplicaFailure", a);
    json::setString(c, "status", "True", a);
    json::setString(c, "lastTransitionTime", clock::rfc3339(now), a);
    bool creating = static_cast<int64_t>(pods.size()) < replicasOf(rs);
    json::setString(c, "reason", creating ? "FailedCreate" : "FailedDelete", a);
    json::setString(c, "message", manage_error.error().message, a);
    conds.PushBack(std::move(c), a);
  }
  if (conds.Empty())
    json::remove(st, "conditions");
  else
    json::set(st, "conditions", std::move(conds), a);
  if (st == before) return okStatus();
  auto r = client_.put(kind_.objectPath(namespaceOf(rs), nameOf(rs)) + "/status", json::serialize(doc));
  if (!r && r.error().code != 404) return r.error();
  return okStatus();
}

Result<SyncResult> ReplicaSetController::sync(const std::string& key) {
  client::Object rs = replicasets_.get(key);
  if (!rs) {
    expectations_.remove(key);
    return SyncResult{};
  }
  auto selector = kind_.selectorOf(*rs);
  if (!selector) {
    LOG_WARN(kind_.controller_name << " controller: " << key << ": " << selector.error().message);
    return SyncResult{};  // invalid objects are not retried; an update queues it again
  }
  bool needsSync = expectations_.satisfied(key) && !json::findPath(*rs, {"metadata", "deletionTimestamp"});
  auto pods = claimPods(*rs, *selector);
  if (!pods) return pods.error();
  Status manageError = okStatus();
  if (needsSync) manageError = manageReplicas(*rs, key, *pods);
  if (auto st = updateStatus(*rs, *pods, manageError); !st) return st.error();
  if (!manageError) return manageError.error();
  // Pods ready but not yet available: look again once minReadySeconds have passed.
  int64_t mrs = minReadySecondsOf(*rs);
  if (mrs > 0) {
    int64_t ready = 0, available = 0;
    auto now = clock::now();
    for (auto& p : *pods) {
      ready += podReady(*p);
      available += podAvailable(*p, mrs, now);
    }
    if (ready != available) return SyncResult{std::chrono::seconds(mrs)};
  }
  return SyncResult{};
}

}  // namespace shepherd::controllers
