#include "controllers/daemonset/daemonset_controller.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <set>

#include "common/log.h"
#include "controllers/daemonset/daemonset_sync.h"
#include "controllers/daemonset/node_fit.h"
#include "controllers/manager/controller_ref.h"
#include "controllers/manager/object_meta.h"
#include "controllers/manager/parallel.h"
#include "controllers/manager/pod_state.h"
#include "controllers/manager/revision_history.h"
#include "meta/selectors.h"

namespace shepherd::controllers::daemon {

namespace {

constexpr const char* kApiVersion = "apps/v1";
constexpr const char* kKind = "DaemonSet";
constexpr auto kInitialBackoff = std::chrono::seconds(1);
constexpr auto kMaxBackoff = std::chrono::minutes(15);

std::string dsPath(const std::string& ns, const std::string& name) {
  return "/apis/apps/v1/namespaces/" + client::urlEncode(ns) + "/daemonsets/" + client::urlEncode(name);
}
std::string podsPath(const std::string& ns) {
  return "/api/v1/namespaces/" + client::urlEncode(ns) + "/pods";
}

Result<meta::LabelSelector> selectorOf(const json::Value& ds) {
  const json::Value* sel = json::findPath(ds, {"spec", "selector"});
  if (!sel) return ApiError::badRequest("spec.selector is missing");
  return meta::LabelSelector::fromJson(*sel);
}

bool terminal(const json::Value& pod) {
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace

std::string DaemonSetController::Sync::name() const {
  return nameOf(ds);
}
std::string DaemonSetController::Sync::ns() const {
  return namespaceOf(ds);
}
int64_t DaemonSetController::Sync::templateGeneration() const {
  std::string_view g = json::getStringPath(ds, {"metadata", "annotations", kTemplateGenerationAnnotation});
  return g.empty() ? 0 : std::atoll(std::string(g).c_str());
}

bool podUpdated(const json::Value& pod, const std::string& hash, int64_t generation) {
  const json::Value* labels = json::findPath(pod, {"metadata", "labels"});
  auto label = [&](const char* k) {
    const json::Value* v = labels && labels->IsObject() ? json::find(*labels, k) : nullptr;
    return v && v->IsString() ? std::string(json::view(*v)) : std::string();
  };
  bool hashMatches = !hash.empty() && label(kRevisionHashLabel) == hash;
  bool generationMatches = generation > 0 && label(kTemplateGenerationLabel) == std::to_string(generation);
  return hashMatches || generationMatches;
}

void sortByCreation(std::vector<client::Object>& pods) {
  std::sort(pods.begin(), pods.end(), [](const client::Object& a, const client::Object& b) {
    bool sa = !json::getStringPath(*a, {"spec", "nodeName"}).empty();
    bool sb = !json::getStringPath(*b, {"spec", "nodeName"}).empty();
    if (sa != sb) return sa;
    std::string_view ca = json::getStringPath(*a, {"metadata", "creationTimestamp"});
    std::string_view cb = json::getStringPath(*b, {"metadata", "creationTimestamp"});
    if (ca != cb) return ca < cb;  // RFC 3339 UTC strings order as times
    return nameOf(*a) < nameOf(*b);
  });
}

DaemonSetController::DaemonSetController(client::Client& c, client::SharedInformers& informers,
                                         client::EventRecorder& events, const clock::Clock& clk)
    : Controller("daemonset"),
      client_(c),
      daemonsets_(informers.get(client::allObjects("apps", "v1", "daemonsets"))),
      pods_(informers.get(client::allObjects("", "v1", "pods"))),
      nodes_(informers.get(client::allObjects("", "v1", "nodes"))),
      revisions_(informers.get(client::allObjects("apps", "v1", "controllerrevisions"))),
      events_(events),
      clock_(clk),
      expectations_(std::chrono::minutes(5), clk) {
  indexByNamespace(pods_);
  indexByNamespace(daemonsets_);
  indexByNamespace(revisions_);
  client::EventHandlers dh = enqueueKeys();
  dh.on_delete = [this](const client::Object& o) {
    expectations_.remove(client::objectKey(*o));
    queue_.add(client::objectKey(*o));
  };
  daemonsets_.addHandlers(std::move(dh));
  client::EventHandlers ph;
  ph.on_add = [this](const client::Object& o) { onPodAdd(o); };
  ph.on_update = [this](const client::Object& old, const client::Object& o) { onPodUpdate(old, o); };
  ph.on_delete = [this](const client::Object& o) { onPodDelete(o); };
  pods_.addHandlers(std::move(ph));
  client::EventHandlers nh;
  nh.on_add = [this](const client::Object& o) { onNodeChange(nullptr, o); };
  nh.on_update = [this](const client::Object& old, const client::Object& o) { onNodeChange(old, o); };
  nh.on_delete = [this](const client::Object& o) { onNodeChange(nullptr, o); };
  nodes_.addHandlers(std::move(nh));
  // ControllerRevisions, as upstream's add/update/deleteHistory: a new revision with an
  // owner changes nothing (its owner made it); an orphan may be adopted; a change of owner
  // or labels, or a deletion, is news to the owners involved.
  client::EventHandlers rh;
  auto ownerOf = [this](const client::Object& o) {
    if (client::Object ds = resolveControllerRef(*o)) queue_.add(client::objectKey(*ds));
  };
  rh.on_add = [this, ownerOf](const client::Object& o) {
    if (json::findPath(*o, {"metadata", "deletionTimestamp"}))
      ownerOf(o);
    else if (!controllerRef(*o))
      enqueueMatching(*o);
  };
  rh.on_update = [this, ownerOf](const client::Object& old, const client::Object& o) {
    if (json::getStringPath(*old, {"metadata", "resourceVersion"}) ==
        json::getStringPath(*o, {"metadata", "resourceVersion"}))
      return;
    const json::Value* oldRef = controllerRef(*old);
    const json::Value* ref = controllerRef(*o);
    bool refChanged = (oldRef == nullptr) != (ref == nullptr) || (oldRef && *oldRef != *ref);
    const json::Value* oldLabels = json::findPath(*old, {"metadata", "labels"});
    const json::Value* labels = json::findPath(*o, {"metadata", "labels"});
    bool labelsChanged = (oldLabels == nullptr) != (labels == nullptr) || (labels && *oldLabels != *labels);
    if (refChanged && oldRef) ownerOf(old);
    if (ref)
      ownerOf(o);
    else if (labelsChanged || refChanged)
      enqueueMatching(*o);
  };
  rh.on_delete = ownerOf;
  revisions_.addHandlers(std::move(rh));
}

client::Object DaemonSetController::resolveControllerRef(const json::Value& obj) const {
  const json::Value* ref = controllerRef(obj);
  if (!ref || json::getString(*ref, "kind") != kKind) return nullptr;
  client::Object ds = daemonsets_.get(namespaceOf(obj) + "/" + std::string(json::getString(*ref, "name")));
  if (!ds || uidOf(*ds) != json::getString(*ref, "uid")) return nullptr;
  return ds;
}

void DaemonSetController::enqueueMatching(const json::Value& obj) {
  const json::Value* labels = json::findPath(obj, {"metadata", "labels"});
  for (auto& ds : daemonsets_.byIndex(kNamespaceIndex, namespaceOf(obj))) {
    auto sel = selectorOf(*ds);
    if (sel && !sel->empty() && sel->matchesLabels(labels)) queue_.add(client::objectKey(*ds));
  }
}

void DaemonSetController::onPodAdd(const client::Object& pod) {
  if (json::findPath(*pod, {"metadata", "deletionTimestamp"})) {
    onPodDelete(pod);  // seen for the first time on its way out
    return;
  }
  if (controllerRef(*pod)) {
    client::Object ds = resolveControllerRef(*pod);
    if (!ds) return;
    expectations_.creationObserved(client::objectKey(*ds));
    queue_.add(client::objectKey(*ds));
    return;
  }
  enqueueMatching(*pod);
}

void DaemonSetController::onPodUpdate(const client::Object& old_pod, const client::Object& pod) {
  if (json::getStringPath(*old_pod, {"metadata", "resourceVersion"}) ==
      json::getStringPath(*pod, {"metadata", "resourceVersion"}))
    return;
  if (json::findPath(*pod, {"metadata", "deletionTimestamp"}) &&
      !json::findPath(*old_pod, {"metadata", "deletionTimestamp"}))
    if (client::Object ds = resolveControllerRef(*pod))
      expectations_.deletionObserved(client::objectKey(*ds), client::objectKey(*pod));
  const json::Value* cur = controllerRef(*pod);
  const json::Value* old = controllerRef(*old_pod);
  if (old && (!cur || *old != *cur))
    if (client::Object ds = resolveControllerRef(*old_pod)) queue_.add(client::objectKey(*ds));
  if (cur) {
    client::Object ds = resolveControllerRef(*pod);
    if (!ds) return;
    queue_.add(client::objectKey(*ds));
    // A pod that just became ready counts as available after minReadySeconds.
    int64_t mrs = json::getInt(*json::find(*ds, "spec"), "minReadySeconds").value_or(0);
    if (mrs > 0 && podReady(*pod) && !podReady(*old_pod))
      queue_.addAfter(client::objectKey(*ds), std::chrono::seconds(mrs + 1));
    return;
  }
  enqueueMatching(*pod);
}

void DaemonSetController::onPodDelete(const client::Object& pod) {
  client::Object ds = resolveControllerRef(*pod);
  if (!ds) return;
  expectations_.deletionObserved(client::objectKey(*ds), client::objectKey(*pod));
  queue_.add(client::objectKey(*ds));
}

void DaemonSetController::onNodeChange(const client::Object& old_node, const client::Object& node) {
  if (old_node) {
    // Heartbeats change only the status: they move no daemon pod.
    const json::Value* a = json::find(*old_node, "spec");
    const json::Value* b = json::find(*node, "spec");
    const json::Value* la = json::findPath(*old_node, {"metadata", "labels"});
    const json::Value* lb = json::findPath(*node, {"metadata", "labels"});
    bool specSame = (a == nullptr) == (b == nullptr) && (!a || *a == *b);
    bool labelsSame = (la == nullptr) == (lb == nullptr) && (!la || *la == *lb);
    if (specSame && labelsSame) return;
  }
  for (auto& ds : daemonsets_.list()) queue_.add(client::objectKey(*ds));
}

bool DaemonSetController::inFailedBackoff(const std::string& key, std::chrono::milliseconds& delay) {
  MutexLock g(backoff_mu_);
  auto now = clock_.steady();
  auto it = backoff_.find(key);
  if (it != backoff_.end() && now - it->second.last < it->second.delay) {
    delay = std::chrono::duration_cast<std::chrono::milliseconds>(it->second.delay - (now - it->second.last));
    return true;
  }
  Backoff& b = backoff_[key];
  b.delay = b.delay.count() == 0 ? std::chrono::milliseconds(kInitialBackoff)
                                 : std::min<std::chrono::milliseconds>(b.delay * 2, kMaxBackoff);
  b.last = now;
  return false;
}

Result<DaemonSetController::NodePods> DaemonSetController::nodesToDaemonPods(Sync& s,
                                                                             bool include_deleted_terminal) {
  auto selector = selectorOf(s.ds);
  if (!selector) return selector.error();
  Owner owner{&s.ds, kApiVersion, kKind, dsPath(s.ns(), s.name()), ""};
  std::string ns = s.ns();
  auto claimed =
      claimObjects(client_, owner, *selector, pods_.byIndex(kNamespaceIndex, ns),
                   [&ns](const json::Value& p) { return podsPath(ns) + "/" + client::urlEncode(nameOf(p)); });
  if (!claimed) return claimed.error();
  NodePods out;
  for (auto& p : *claimed) {
    if (!include_deleted_terminal && terminal(*p) && json::findPath(*p, {"metadata", "deletionTimestamp"}))
      continue;
    std::string node = targetNode(*p);
    if (!node.empty()) out[node].push_back(p);
  }
  return out;
}

void DaemonSetController::podsShouldBeOnNode(Sync& s, const json::Value& node, NodePods& all,
                                             std::vector<std::string>& create,
                                             std::vector<std::string>& del) {
  std::string nodeName = nameOf(node);
  Fit fit = nodeShouldRunDaemonPod(node, s.ds);
  auto it = all.find(nodeName);
  bool exists = it != all.end() && !it->second.empty();
  const json::Value& strategy = *json::findPath(s.ds, {"spec"});
  bool surge = json::getStringPath(strategy, {"updateStrategy", "type"}) == "RollingUpdate" && [&] {
    const json::Value* ms = json::findPath(strategy, {"updateStrategy", "rollingUpdate", "maxSurge"});
    if (!ms) return false;
    if (ms->IsInt64()) return ms->GetInt64() != 0;
    return ms->IsString() && json::view(*ms) != "0" && json::view(*ms) != "0%";
  }();
  if (fit.should_run && !exists) {
    create.push_back(nodeName);
    return;
  }
  if (fit.should_continue) {
    if (!exists) return;
    std::vector<client::Object> running;
    for (auto& pod : it->second) {
      if (json::findPath(*pod, {"metadata", "deletionTimestamp"})) continue;
      std::string_view phase = json::getStringPath(*pod, {"status", "phase"});
      if (phase == "Failed") {
        // The kubelet may keep rejecting the pod: back off instead of hot-looping.
        std::chrono::milliseconds delay{0};
        if (inFailedBackoff(uidOf(s.ds) + "/" + nodeName, delay)) {
          s.requeueAfter(delay);
          continue;
        }
        events_.event(s.ds, kApiVersion, kKind, "Warning", "FailedDaemonPod",
                      "Found failed daemon pod " + s.ns() + "/" + nameOf(*pod) + " on node " + nodeName +
                          ", will try to kill it");
        del.push_back(nameOf(*pod));
      } else if (phase == "Succeeded") {
        events_.event(s.ds, kApiVersion, kKind, "Normal", "SucceededDaemonPod",
                      "Found succeeded daemon pod " + s.ns() + "/" + nameOf(*pod) + " on node " + nodeName +
                          ", will try to delete it");
        del.push_back(nameOf(*pod));
      } else {
        running.push_back(pod);
      }
    }
    sortByCreation(running);
    if (!surge) {
      // One pod per node: all but the oldest go.
      for (size_t i = 1; i < running.size(); ++i) del.push_back(nameOf(*running[i]));
      return;
    }
    if (running.size() <= 1) {
      if (running.empty() && fit.should_run) create.push_back(nodeName);
      return;
    }
    // Surging: keep the oldest new pod and, while it is not yet available, the oldest
    // old one if that is still ready.
    client::Object oldestNew, oldestOld;
    for (auto& pod : running) {
      if (podUpdated(*pod, s.hash, s.templateGeneration())) {
        if (!oldestNew) {
          oldestNew = pod;
          continue;
        }
      } else if (!oldestOld) {
        oldestOld = pod;
        continue;
      }
      del.push_back(nameOf(*pod));
    }
    if (oldestNew && oldestOld) {
      int64_t mrs = json::getInt(strategy, "minReadySeconds").value_or(0);
      if (!podReady(*oldestOld) || podAvailable(*oldestNew, mrs, clock_.now()))
        del.push_back(nameOf(*oldestOld));
    }
    return;
  }
  if (exists)
    for (auto& pod : it->second)
      if (!json::findPath(*pod, {"metadata", "deletionTimestamp"})) del.push_back(nameOf(*pod));
}

Status DaemonSetController::manage(Sync& s) {
  auto all = nodesToDaemonPods(s, false);
  if (!all) return all.error();
  std::vector<std::string> create, del;
  std::set<std::string> known;
  for (auto& node : s.nodes) {
    known.insert(nameOf(*node));
    podsShouldBeOnNode(s, *node, *all, create, del);
  }
  // Pods for nodes that are gone and were never bound: nobody else would remove them.
  for (auto& [node, pods] : *all)
    if (!known.count(node))
      for (auto& p : pods)
        if (json::getStringPath(*p, {"spec", "nodeName"}).empty()) del.push_back(nameOf(*p));
  return syncNodes(s, del, create);
}

Status DaemonSetController::syncNodes(Sync& s, const std::vector<std::string>& pods_to_delete,
                                      const std::vector<std::string>& create_on) {
  int creates = std::min<int>(static_cast<int>(create_on.size()), kBurstReplicas);
  int deletes = std::min<int>(static_cast<int>(pods_to_delete.size()), kBurstReplicas);
  std::set<std::string> deleteKeys;
  for (int i = 0; i < deletes; ++i) deleteKeys.insert(s.ns() + "/" + pods_to_delete[static_cast<size_t>(i)]);
  if (creates > 0) expectations_.expectCreations(s.key, creates);
  if (!deleteKeys.empty()) expectations_.expectDeletions(s.key, deleteKeys);
  // The pod template: the DaemonSet's, with the daemon tolerations and the labels that
  // say which revision and template generation made it.
  json::Document tmpl;
  if (const json::Value* t = json::findPath(s.ds, {"spec", "template"}); t && t->IsObject())
    tmpl.CopyFrom(*t, tmpl.GetAllocator());
  else
    tmpl.SetObject();
  auto& ta = tmpl.GetAllocator();
  addDaemonTolerations(json::ensureObject(tmpl, "spec", ta), ta);
  json::Value& labels = json::ensureObject(json::ensureObject(tmpl, "metadata", ta), "labels", ta);
  if (int64_t g = s.templateGeneration(); g > 0)
    json::setString(labels, kTemplateGenerationLabel, std::to_string(g), ta);
  if (!s.hash.empty()) json::setString(labels, kRevisionHashLabel, s.hash, ta);
  Status firstError = okStatus();
  auto terminating = [](const ApiError& e) {
    return e.code == 403 && e.message.find("being terminated") != std::string::npos;
  };
  BatchOutcome out = slowStartBatch(
      creates,
      [&](int i) -> Status {
        json::Document pod;
        pod.SetObject();
        auto& a = pod.GetAllocator();
        json::setString(pod, "apiVersion", "v1", a);
        json::setString(pod, "kind", "Pod", a);
        json::Value& md = json::ensureObject(pod, "metadata", a);
        json::setString(md, "generateName", s.name() + "-", a);
        for (const char* f : {"labels", "annotations", "finalizers"})
          if (const json::Value* v = json::findPath(tmpl, {"metadata", f}))
            json::set(md, f, json::Value(*v, a), a);
        json::Value refs(rapidjson::kArrayType);
        refs.PushBack(controllerReference(Owner{&s.ds, kApiVersion, kKind, "", ""}, a), a);
        json::set(md, "ownerReferences", std::move(refs), a);
        json::Value spec(*json::find(tmpl, "spec"), a);
        pinToNode(spec, create_on[static_cast<size_t>(i)], a);
        json::set(pod, "spec", std::move(spec), a);
        auto r = client_.post(podsPath(s.ns()), json::serialize(pod));
        if (!r) {
          if (!terminating(r.error()))
            events_.event(s.ds, kApiVersion, kKind, "Warning", "FailedCreate",
                          "Error creating: " + r.error().message);
          return r.error();
        }
        events_.event(s.ds, kApiVersion, kKind, "Normal", "SuccessfulCreate", "Created pod: " + nameOf(*r));
        return okStatus();
      },
      terminating);
  for (int k = out.succeeded; k < creates; ++k) expectations_.creationObserved(s.key);
  if (!out.first_error) firstError = out.first_error;
  Status delError = parallelFor(deletes, [&](int i) -> Status {
    const std::string& name = pods_to_delete[static_cast<size_t>(i)];
    auto r = client_.del(podsPath(s.ns()) + "/" + client::urlEncode(name));
    if (!r) {
      expectations_.deletionObserved(s.key, s.ns() + "/" + name);
      if (r.error().code == 404) return okStatus();
      events_.event(s.ds, kApiVersion, kKind, "Warning", "FailedDelete",
                    "Error deleting: " + r.error().message);
      return r.error();
    }
    events_.event(s.ds, kApiVersion, kKind, "Normal", "SuccessfulDelete", "Deleted pod: " + name);
    return okStatus();
  });
  if (firstError && !delError) firstError = delError;
  return firstError;
}

Status DaemonSetController::updateStatus(Sync& s, bool update_observed_generation) {
  auto all = nodesToDaemonPods(s, false);
  if (!all) return all.error();
  int64_t desired = 0, current = 0, misscheduled = 0, ready = 0, updated = 0, available = 0;
  int64_t mrs = json::getInt(*json::find(s.ds, "spec"), "minReadySeconds").value_or(0);
  auto now = clock_.now();
  for (auto& node : s.nodes) {
    Fit fit = nodeShouldRunDaemonPod(*node, s.ds);
    auto it = all->find(nameOf(*node));
    bool scheduled = it != all->end() && !it->second.empty();
    if (!fit.should_run) {
      if (scheduled) ++misscheduled;
      continue;
    }
    ++desired;
    if (!scheduled) continue;
    ++current;
    std::vector<client::Object> pods = it->second;
    sortByCreation(pods);
    const json::Value& pod = *pods.front();
    if (podReady(pod)) {
      ++ready;
      if (podAvailable(pod, mrs, now)) ++available;
    }
    if (podUpdated(pod, s.hash, s.templateGeneration())) ++updated;
  }
  json::Document doc;
  doc.CopyFrom(s.ds, doc.GetAllocator());
  auto& a = doc.GetAllocator();
  json::Value& st = json::ensureObject(doc, "status", a);
  json::Document before;
  before.CopyFrom(st, before.GetAllocator());
  auto setCount = [&](const char* k, int64_t v, bool omit_zero) {
    if (omit_zero && v == 0)
      json::remove(st, k);
    else
      json::set(st, k, json::Value(v), a);
  };
  setCount("currentNumberScheduled", current, false);
  setCount("numberMisscheduled", misscheduled, false);
  setCount("desiredNumberScheduled", desired, false);
  setCount("numberReady", ready, false);
  setCount("updatedNumberScheduled", updated, true);
  setCount("numberAvailable", available, true);
  setCount("numberUnavailable", desired - available, true);
  if (update_observed_generation)
    json::set(st, "observedGeneration",
              json::Value(json::getInt(*json::find(doc, "metadata"), "generation").value_or(0)), a);
  if (mrs > 0 && ready != available) s.requeueAfter(std::chrono::seconds(mrs));
  if (st == before) return okStatus();
  auto r = client_.put(dsPath(s.ns(), s.name()) + "/status", json::serialize(doc));
  if (!r && r.error().code != 404) return r.error();
  return okStatus();
}

Result<SyncResult> DaemonSetController::sync(const std::string& key) {
  client::Object shared = daemonsets_.get(key);
  if (!shared) {
    expectations_.remove(key);
    return SyncResult{};
  }
  Sync s;
  s.key = key;
  s.ds.CopyFrom(*shared, s.ds.GetAllocator());
  const json::Value* sel = json::findPath(s.ds, {"spec", "selector"});
  if (!sel || (sel->IsObject() && sel->ObjectEmpty())) {
    events_.event(s.ds, kApiVersion, kKind, "Warning", "SelectingAll",
                  "This daemon set is selecting all pods. A non-empty selector is required.");
    return SyncResult{};
  }
  // Being deleted: its history may already be gone, so its status cannot be computed.
  if (json::findPath(s.ds, {"metadata", "deletionTimestamp"})) return SyncResult{};
  s.nodes = nodes_.list();
  if (auto st = constructHistory(s); !st) return st.error();
  if (!expectations_.satisfied(key)) {
    if (auto st = updateStatus(s, false); !st) return st.error();
    return SyncResult{s.requeue.value_or(std::chrono::milliseconds(0))};
  }
  Status err = manage(s);
  if (err && expectations_.satisfied(key) &&
      json::getStringPath(s.ds, {"spec", "updateStrategy", "type"}) == "RollingUpdate")
    err = rollingUpdate(s);
  if (err) err = cleanupHistory(s);
  Status statusErr = updateStatus(s, true);
  if (!err) return err.error();
  if (!statusErr) return statusErr.error();
  return SyncResult{s.requeue.value_or(std::chrono::milliseconds(0))};
}

}  // namespace shepherd::controllers::daemon
