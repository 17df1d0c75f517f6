#include "controllers/deployment/deployment_controller.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/clock.h"
#include "common/json_merge_patch.h"
#include "common/log.h"
#include "controllers/deployment/deployment_util.h"
#include "controllers/manager/controller_ref.h"
#include "controllers/manager/object_meta.h"
#include "controllers/manager/pod_state.h"

namespace shepherd::controllers {

using namespace deployment;

namespace {

constexpr const char* kApiVersion = "apps/v1";
constexpr const char* kKind = "Deployment";

std::string createdOf(const json::Value& o) {
  return std::string(json::getStringPath(o, {"metadata", "creationTimestamp"}));
}
std::string deploymentPath(const std::string& ns, const std::string& name) {
  return "/apis/apps/v1/namespaces/" + client::urlEncode(ns) + "/deployments/" + client::urlEncode(name);
}
std::string rsCollection(const std::string& ns) {
  return "/apis/apps/v1/namespaces/" + client::urlEncode(ns) + "/replicasets";
}
int64_t statusInt(const json::Value& o, const char* field) {
  const json::Value* st = json::find(o, "status");
  return st ? json::getInt(*st, field).value_or(0) : 0;
}
int64_t specInt(const json::Value& o, const char* field, int64_t def) {
  const json::Value* spec = json::find(o, "spec");
  return spec ? json::getInt(*spec, field).value_or(def) : def;
}
bool hasProgressDeadline(const json::Value& d) {
  const json::Value* spec = json::find(d, "spec");
  auto v = spec ? json::getInt(*spec, "progressDeadlineSeconds") : std::nullopt;
  return v && *v != 2147483647;
}
bool paused(const json::Value& d) {
  const json::Value* spec = json::find(d, "spec");
  return spec && json::getBool(*spec, "paused");
}
std::string now() {
  return clock::rfc3339(clock::now());
}
// Annotations a Deployment does not pass on to its ReplicaSets.
bool skipAnnotation(std::string_view k) {
  return k == "kubectl.kubernetes.io/last-applied-configuration" || k == kRevision ||
         k == "deployment.kubernetes.io/revision-history" || k == kDesiredReplicas || k == kMaxReplicas ||
         k == "deprecated.deployment.rollback.to";
}
// Sets desired-/max-replicas; true if they changed.
bool setReplicaAnnotations(json::Value& rs, int64_t desired, int64_t max, json::Allocator& a) {
  json::Value& ann = json::ensureObject(json::ensureObject(rs, "metadata", a), "annotations", a);
  bool changed = false;
  for (auto [k, v] : {std::pair<const char*, int64_t>{kDesiredReplicas, desired}, {kMaxReplicas, max}}) {
    std::string s = std::to_string(v);
    if (json::getString(ann, k) != s) {
      json::setString(ann, k, s, a);
      changed = true;
    }
  }
  return changed;
}
// Copies the Deployment's annotations and raises the revision; true if anything changed.
bool setNewReplicaSetAnnotations(const json::Value& d, json::Value& rs, int64_t revision,
                                 json::Allocator& a) {
  json::Value& ann = json::ensureObject(json::ensureObject(rs, "metadata", a), "annotations", a);
  bool changed = false;
  if (const json::Value* da = json::findPath(d, {"metadata", "annotations"}); da && da->IsObject())
    for (auto& kv : da->GetObject()) {
      std::string_view k = json::view(kv.name);
      if (skipAnnotation(k) || !kv.value.IsString()) continue;
      if (json::getString(ann, k) == json::view(kv.value) && json::find(ann, k)) continue;
      json::setString(ann, k, json::view(kv.value), a);
      changed = true;
    }
  std::string_view oldRev = json::getString(ann, kRevision);
  int64_t old = oldRev.empty() ? 0 : std::strtoll(std::string(oldRev).c_str(), nullptr, 10);
  if (old < revision) {
    if (!oldRev.empty()) {
      // Rolling back to this ReplicaSet: keep the revisions it had.
      std::string hist(json::getString(ann, "deployment.kubernetes.io/revision-history"));
      json::setString(ann, "deployment.kubernetes.io/revision-history",
                      hist.empty() ? std::string(oldRev) : hist + "," + std::string(oldRev), a);
    }
    json::setString(ann, kRevision, std::to_string(revision), a);
    changed = true;
  }
  return changed;
}

}  // namespace

std::vector<client::Object> DeploymentController::ReplicaSets::all() const {
  std::vector<client::Object> out = old;
  if (new_rs) out.push_back(new_rs);
  return out;
}

DeploymentController::DeploymentController(client::Client& c, client::SharedInformers& informers,
                                           client::EventRecorder& events)
    : Controller("deployment"),
      client_(c),
      deployments_(informers.get(client::allObjects("apps", "v1", "deployments"))),
      replicasets_(informers.get(client::allObjects("apps", "v1", "replicasets"))),
      pods_(informers.get(client::allObjects("", "v1", "pods"))),
      events_(events) {
  indexByNamespace(replicasets_);
  indexByNamespace(pods_);
  deployments_.addHandlers(enqueueKeys());
  client::EventHandlers rh;
  rh.on_add = [this](const client::Object& o) { onReplicaSet(o); };
  rh.on_update = [this](const client::Object& old, const client::Object& o) {
    enqueueOwner(*old, kKind);
    onReplicaSet(o);
  };
  rh.on_delete = [this](const client::Object& o) { enqueueOwner(*o, kKind); };
  replicasets_.addHandlers(std::move(rh));
  // A Recreate rollout waits for the old pods to be gone.
  client::EventHandlers ph;
  ph.on_delete = [this](const client::Object& pod) {
    const json::Value* ref = controllerRef(*pod);
    if (!ref || json::getString(*ref, "kind") != "ReplicaSet") return;
    client::Object rs =
        replicasets_.get(namespaceOf(*pod) + "/" + std::string(json::getString(*ref, "name")));
    if (rs) enqueueOwner(*rs, kKind);
  };
  pods_.addHandlers(std::move(ph));
}

void DeploymentController::enqueueOwner(const json::Value& obj, const std::string& kind) {
  const json::Value* ref = controllerRef(obj);
  if (!ref || json::getString(*ref, "kind") != kind) return;
  std::string key = namespaceOf(obj) + "/" + std::string(json::getString(*ref, "name"));
  client::Object d = deployments_.get(key);
  if (d && uidOf(*d) == json::getString(*ref, "uid")) queue_.add(key);
}

void DeploymentController::onReplicaSet(const client::Object& rs) {
  if (controllerRef(*rs)) {
    enqueueOwner(*rs, kKind);
    return;
  }
  // An orphan: any Deployment selecting it may adopt it.
  std::string ns = namespaceOf(*rs);
  for (auto& d : deployments_.list()) {
    if (namespaceOf(*d) != ns) continue;
    const json::Value* sel = json::findPath(*d, {"spec", "selector"});
    auto s =
        sel ? meta::LabelSelector::fromJson(*sel) : Result<meta::LabelSelector>(ApiError::badRequest(""));
    if (s && !s->empty() && s->matchesLabels(json::findPath(*rs, {"metadata", "labels"})))
      queue_.add(client::objectKey(*d));
  }
}

Result<std::vector<client::Object>> DeploymentController::claimReplicaSets(
    const json::Value& d, const meta::LabelSelector& selector) {
  std::string ns = namespaceOf(d);
  Owner owner{&d, kApiVersion, kKind, deploymentPath(ns, nameOf(d)), ""};
  return claimObjects(
      client_, owner, selector, replicasets_.byIndex(kNamespaceIndex, ns),
      [&ns](const json::Value& rs) { return rsCollection(ns) + "/" + client::urlEncode(nameOf(rs)); });
}

Result<DeploymentController::ReplicaSets> DeploymentController::replicaSetsAndRevision(
    json::Document& d, const std::vector<client::Object>& owned, bool create) {
  auto& da = d.GetAllocator();
  std::vector<client::Object> sorted = owned;
  std::stable_sort(sorted.begin(), sorted.end(), [](const client::Object& a, const client::Object& b) {
    return createdOf(*a) < createdOf(*b);
  });
  const json::Value* tmpl = json::findPath(d, {"spec", "template"});
  ReplicaSets sets;
  for (auto& rs : sorted) {
    const json::Value* rt = json::findPath(*rs, {"spec", "template"});
    if (!sets.new_rs && tmpl && rt && equalIgnoreHash(*rt, *tmpl))
      sets.new_rs = rs;
    else
      sets.old.push_back(rs);
  }
  int64_t maxOld = 0;
  for (auto& rs : sets.old) maxOld = std::max(maxOld, revisionOf(*rs));
  int64_t newRevision = maxOld + 1;
  json::Value& status = json::ensureObject(d, "status", da);
  std::string ns = namespaceOf(d);
  if (sets.new_rs) {
    json::Document copy;
    copy.CopyFrom(*sets.new_rs, copy.GetAllocator());
    bool changed = setNewReplicaSetAnnotations(d, copy, newRevision, copy.GetAllocator());
    int64_t mrs = specInt(d, "minReadySeconds", 0);
    if (specInt(copy, "minReadySeconds", 0) != mrs) {
      json::set(json::ensureObject(copy, "spec", copy.GetAllocator()), "minReadySeconds", json::Value(mrs),
                copy.GetAllocator());
      changed = true;
    }
    if (changed) {
      auto r = client_.put(rsCollection(ns) + "/" + client::urlEncode(nameOf(copy)), json::serialize(copy));
      if (!r) return r.error();
      sets.new_rs = std::make_shared<const json::Document>(std::move(r.value()));
    }
    if (hasProgressDeadline(d) && !condition(status, "Progressing"))
      setCondition(status, "Progressing", "True", "FoundNewReplicaSet",
                   "Found new replica set \"" + nameOf(*sets.new_rs) + "\"", now(), da);
  } else if (create && tmpl) {
    int64_t collisions = statusInt(d, "collisionCount");
    std::string hash = templateHash(*tmpl, collisions);
    json::Document rs;
    rs.SetObject();
    auto& a = rs.GetAllocator();
    json::setString(rs, "apiVersion", "apps/v1", a);
    json::setString(rs, "kind", "ReplicaSet", a);
    json::Value& md = json::ensureObject(rs, "metadata", a);
    json::setString(md, "name", nameOf(d) + "-" + hash, a);
    json::Value refs(rapidjson::kArrayType);
    refs.PushBack(controllerReference(Owner{&d, kApiVersion, kKind, "", ""}, a), a);
    json::set(md, "ownerReferences", std::move(refs), a);
    json::Value t(*tmpl, a);
    json::setString(json::ensureObject(json::ensureObject(t, "metadata", a), "labels", a), kHashLabel, hash,
                    a);
    json::set(md, "labels", json::Value(*json::findPath(t, {"metadata", "labels"}), a), a);
    json::Value& spec = json::ensureObject(rs, "spec", a);
    json::Value sel(*json::findPath(d, {"spec", "selector"}), a);
    json::setString(json::ensureObject(sel, "matchLabels", a), kHashLabel, hash, a);
    json::set(spec, "selector", std::move(sel), a);
    json::set(spec, "minReadySeconds", json::Value(specInt(d, "minReadySeconds", 0)), a);
    json::set(spec, "template", std::move(t), a);
    json::set(spec, "replicas", json::Value(int64_t{0}), a);
    auto all = sets.old;
    int64_t replicas = newRsNewReplicas(d, all, rs);
    json::set(spec, "replicas", json::Value(replicas), a);
    setNewReplicaSetAnnotations(d, rs, newRevision, a);
    setReplicaAnnotations(rs, replicasOf(d), replicasOf(d) + maxSurge(d), a);
    auto r = client_.post(rsCollection(ns), json::serialize(rs));
    if (!r) {
      if (r.error().code == 409) {
        client::Object existing = replicasets_.get(ns + "/" + nameOf(rs));
        const json::Value* ref = existing ? controllerRef(*existing) : nullptr;
        if (ref && json::getString(*ref, "uid") == uidOf(d) &&
            equalIgnoreHash(*json::findPath(*existing, {"spec", "template"}), *tmpl)) {
          sets.new_rs = existing;  // our cache was behind
        } else {
          // Another object has the name: count a collision, so the next hash differs.
          json::set(status, "collisionCount", json::Value(collisions + 1), da);
          (void)patchStatus(d, status);
          return r.error();
        }
      } else {
        if (r.error().code == 403 && r.error().message.find("being terminated") != std::string::npos)
          return r.error();
        std::string msg = "Failed to create new replica set \"" + nameOf(rs) + "\": " + r.error().message;
        if (hasProgressDeadline(d)) {
          setCondition(status, "Progressing", "False", "ReplicaSetCreateError", msg, now(), da);
          (void)patchStatus(d, status);
        }
        events_.event(d, kApiVersion, kKind, "Warning", "ReplicaSetCreateError", msg);
        return r.error();
      }
    } else {
      sets.new_rs = std::make_shared<const json::Document>(std::move(r.value()));
      if (replicas > 0)
        events_.event(
            d, kApiVersion, kKind, "Normal", "ScalingReplicaSet",
            "Scaled up replica set " + nameOf(*sets.new_rs) + " from 0 to " + std::to_string(replicas));
      if (hasProgressDeadline(d))
        setCondition(status, "Progressing", "True", "NewReplicaSetCreated",
                     "Created new replica set \"" + nameOf(*sets.new_rs) + "\"", now(), da);
    }
  }
  // The Deployment carries its newest revision.
  if (sets.new_rs) {
    std::string rev(json::getStringPath(*sets.new_rs, {"metadata", "annotations", kRevision}));
    if (!rev.empty() && json::getStringPath(d, {"metadata", "annotations", kRevision}) != rev) {
      std::string patch =
          R"({"metadata":{"annotations":{")" + std::string(kRevision) + R"(":")" + rev + R"("}}})";
      auto r = client_.patch(deploymentPath(ns, nameOf(d)), patch, "application/merge-patch+json");
      if (!r) return r.error();
      json::setString(json::ensureObject(json::ensureObject(d, "metadata", da), "annotations", da), kRevision,
                      rev, da);
    }
  }
  return sets;
}

Result<bool> DeploymentController::scaleReplicaSet(const json::Value& d, const client::Object& rs,
                                                   int64_t size) {
  json::Document copy;
  copy.CopyFrom(*rs, copy.GetAllocator());
  auto& a = copy.GetAllocator();
  int64_t from = replicasOf(*rs);
  bool annotations = setReplicaAnnotations(copy, replicasOf(d), replicasOf(d) + maxSurge(d), a);
  if (from == size && !annotations) return false;
  json::set(json::ensureObject(copy, "spec", a), "replicas", json::Value(size), a);
  auto r = client_.put(rsCollection(namespaceOf(*rs)) + "/" + client::urlEncode(nameOf(*rs)),
                       json::serialize(copy));
  if (!r) return r.error();
  if (from != size)
    events_.event(d, kApiVersion, kKind, "Normal", "ScalingReplicaSet",
                  std::string(size > from ? "Scaled up" : "Scaled down") + " replica set " + nameOf(*rs) +
                      " from " + std::to_string(from) + " to " + std::to_string(size));
  return from != size;
}

Status DeploymentController::scale(const json::Value& d, const ReplicaSets& sets) {
  std::vector<client::Object> active;
  for (auto& rs : sets.all())
    if (replicasOf(*rs) > 0) active.push_back(rs);
  // One active (or, with none, the newest) ReplicaSet takes the whole count.
  client::Object only;
  if (active.size() == 1) only = active.front();
  if (active.empty()) only = sets.new_rs ? sets.new_rs : (sets.old.empty() ? nullptr : sets.old.back());
  if (only) {
    if (replicasOf(*only) == replicasOf(d)) return okStatus();
    auto r = scaleReplicaSet(d, only, replicasOf(d));
    return r ? okStatus() : Status(r.error());
  }
  // The new ReplicaSet is saturated: the old ones go.
  if (sets.new_rs &&
      json::getStringPath(*sets.new_rs, {"metadata", "annotations", kDesiredReplicas}) ==
          std::to_string(replicasOf(d)) &&
      statusInt(*sets.new_rs, "availableReplicas") == replicasOf(d)) {
    for (auto& rs : sets.old)
      if (replicasOf(*rs) > 0)
        if (auto r = scaleReplicaSet(d, rs, 0); !r) return r.error();
    return okStatus();
  }
  if (!isRollingUpdate(d)) return okStatus();
  // A rollout in flight was resized: spread the difference in proportion to each
  // ReplicaSet's share, the leftover to the largest (upstream's proportional scaling).
  int64_t total = 0;
  for (auto& rs : active) total += replicasOf(*rs);
  int64_t allowed = replicasOf(d) > 0 ? replicasOf(d) + maxSurge(d) : 0;
  int64_t toAdd = allowed - total;
  if (toAdd == 0) return okStatus();
  std::stable_sort(active.begin(), active.end(), [toAdd](const client::Object& a, const client::Object& b) {
    if (replicasOf(*a) != replicasOf(*b))
      return toAdd > 0 ? replicasOf(*a) > replicasOf(*b) : replicasOf(*a) > replicasOf(*b);
    return toAdd > 0 ? createdOf(*a) > createdOf(*b) : createdOf(*a) < createdOf(*b);
  });
  std::map<std::string, int64_t> sizes;
  int64_t added = 0;
  for (auto& rs : active) {
    int64_t cur = replicasOf(*rs), proportion = 0;
    if (cur > 0 && toAdd != added) {
      int64_t fraction;
      if (replicasOf(d) == 0) {
        fraction = -cur;
      } else {
        std::string_view ann = json::getStringPath(*rs, {"metadata", "annotations", kMaxReplicas});
        int64_t annotated =
            ann.empty() ? statusInt(d, "replicas") : std::strtoll(std::string(ann).c_str(), nullptr, 10);
        if (annotated <= 0) annotated = std::max<int64_t>(1, total);
        fraction = static_cast<int64_t>(
                       std::llround(double(cur) * double(replicasOf(d) + maxSurge(d)) / double(annotated))) -
                   cur;
      }
      int64_t left = toAdd - added;
      proportion = toAdd > 0 ? std::min(fraction, left) : std::max(fraction, left);
    }
    sizes[nameOf(*rs)] = cur + proportion;
    added += proportion;
  }
  for (size_t i = 0; i < active.size(); ++i) {
    std::string name = nameOf(*active[i]);
    if (i == 0) sizes[name] = std::max<int64_t>(0, sizes[name] + toAdd - added);
    if (auto r = scaleReplicaSet(d, active[i], sizes[name]); !r) return r.error();
  }
  return okStatus();
}

Result<bool> DeploymentController::reconcileNewReplicaSet(const json::Value& d, const ReplicaSets& sets) {
  int64_t want = replicasOf(d), have = replicasOf(*sets.new_rs);
  if (have == want) return false;
  if (have > want) return scaleReplicaSet(d, sets.new_rs, want);
  return scaleReplicaSet(d, sets.new_rs, newRsNewReplicas(d, sets.all(), *sets.new_rs));
}

Result<bool> DeploymentController::reconcileOldReplicaSets(const json::Value& d, const ReplicaSets& sets) {
  int64_t oldCount = 0, allCount = 0;
  for (auto& rs : sets.old) oldCount += replicasOf(*rs);
  if (oldCount == 0) return false;
  for (auto& rs : sets.all()) allCount += replicasOf(*rs);
  int64_t minAvailable = replicasOf(d) - maxUnavailable(d);
  int64_t newUnavailable = replicasOf(*sets.new_rs) - statusInt(*sets.new_rs, "availableReplicas");
  int64_t maxScaledDown = allCount - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return false;
  // First the old ReplicaSets' unhealthy pods (they count against nothing), oldest first.
  std::vector<client::Object> olds = sets.old;  // already oldest first
  int64_t cleaned = 0;
  std::map<std::string, int64_t> sizes;
  for (auto& rs : olds) sizes[nameOf(*rs)] = replicasOf(*rs);
  for (auto& rs : olds) {
    if (cleaned >= maxScaledDown) break;
    int64_t cur = sizes[nameOf(*rs)];
    int64_t unhealthy = cur - statusInt(*rs, "availableReplicas");
    if (cur == 0 || unhealthy <= 0) continue;
    int64_t down = std::min(maxScaledDown - cleaned, unhealthy);
    sizes[nameOf(*rs)] = cur - down;
    cleaned += down;
  }
  maxScaledDown -= cleaned;
  // Then available old pods, while enough stay available overall.
  int64_t availableAll = 0;
  for (auto& rs : sets.all()) availableAll += statusInt(*rs, "availableReplicas");
  int64_t total = 0;
  if (availableAll > minAvailable) {
    int64_t budget = std::min(availableAll - minAvailable, maxScaledDown);
    for (auto& rs : olds) {
      if (total >= budget) break;
      int64_t cur = sizes[nameOf(*rs)];
      if (cur == 0) continue;
      int64_t down = std::min(cur, budget - total);
      sizes[nameOf(*rs)] = cur - down;
      total += down;
    }
  }
  bool changed = false;
  for (auto& rs : olds) {
    if (sizes[nameOf(*rs)] == replicasOf(*rs)) continue;
    auto r = scaleReplicaSet(d, rs, sizes[nameOf(*rs)]);
    if (!r) return r.error();
    changed = changed || *r;
  }
  return changed;
}

bool DeploymentController::oldPodsRunning(const json::Value& d, const ReplicaSets& sets) {
  std::set<std::string> oldUids;
  for (auto& rs : sets.old) {
    if (statusInt(*rs, "replicas") > 0) return true;
    oldUids.insert(uidOf(*rs));
  }
  for (auto& pod : pods_.byIndex(kNamespaceIndex, namespaceOf(d))) {
    const json::Value* ref = controllerRef(*pod);
    if (!ref || !oldUids.count(std::string(json::getString(*ref, "uid")))) continue;
    std::string_view phase = json::getStringPath(*pod, {"status", "phase"});
    if (phase != "Succeeded" && phase != "Failed") return true;
  }
  return false;
}

void DeploymentController::cleanup(const json::Value& d, const ReplicaSets& sets) {
  const json::Value* spec = json::find(d, "spec");
  auto limit = spec ? json::getInt(*spec, "revisionHistoryLimit") : std::nullopt;
  if (!limit) return;
  std::vector<client::Object> alive;
  for (auto& rs : sets.old)
    if (!json::findPath(*rs, {"metadata", "deletionTimestamp"})) alive.push_back(rs);
  int64_t diff = static_cast<int64_t>(alive.size()) - *limit;
  if (diff <= 0) return;
  std::stable_sort(alive.begin(), alive.end(), [](const client::Object& a, const client::Object& b) {
    return revisionOf(*a) < revisionOf(*b);
  });
  for (int64_t i = 0; i < diff; ++i) {
    const json::Value& rs = *alive[static_cast<size_t>(i)];
    if (statusInt(rs, "replicas") != 0 || replicasOf(rs) != 0 ||
        json::getInt(*json::find(rs, "metadata"), "generation").value_or(0) >
            statusInt(rs, "observedGeneration"))
      continue;
    (void)client_.request(
        "DELETE", rsCollection(namespaceOf(rs)) + "/" + client::urlEncode(nameOf(rs)),
        R"({"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":")" + uidOf(rs) + "\"}}",
        "application/json");
  }
}

json::Document DeploymentController::calculateStatus(const json::Value& d, const ReplicaSets& sets) {
  json::Document st;
  st.SetObject();
  auto& a = st.GetAllocator();
  int64_t replicas = 0, specReplicas = 0, ready = 0, available = 0;
  for (auto& rs : sets.all()) {
    replicas += statusInt(*rs, "replicas");
    specReplicas += replicasOf(*rs);
    ready += statusInt(*rs, "readyReplicas");
    available += statusInt(*rs, "availableReplicas");
  }
  int64_t updated = sets.new_rs ? statusInt(*sets.new_rs, "replicas") : 0;
  int64_t unavailable = std::max<int64_t>(0, specReplicas - available);
  json::set(st, "observedGeneration",
            json::Value(json::getInt(*json::find(d, "metadata"), "generation").value_or(1)), a);
  // Zero counts are left out, as upstream's omitempty fields are.
  for (auto [k, v] : {std::pair<const char*, int64_t>{"replicas", replicas},
                      {"updatedReplicas", updated},
                      {"readyReplicas", ready},
                      {"availableReplicas", available},
                      {"unavailableReplicas", unavailable}})
    if (v != 0) json::set(st, k, json::Value(v), a);
  if (const json::Value* old = json::find(d, "status")) {
    if (const json::Value* cc = json::find(*old, "collisionCount"))
      json::set(st, "collisionCount", json::Value(*cc, a), a);
    if (const json::Value* conds = json::find(*old, "conditions"))
      json::set(st, "conditions", json::Value(*conds, a), a);
  }
  if (available >= replicasOf(d) - maxUnavailable(d))
    setCondition(st, "Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.",
                 now(), a);
  else
    setCondition(st, "Available", "False", "MinimumReplicasUnavailable",
                 "Deployment does not have minimum availability.", now(), a);
  return st;
}

Status DeploymentController::patchStatus(const json::Value& d, const json::Value& status) {
  // The status is the controller's alone (upstream writes it whole with UpdateStatus):
  // the patch removes what the new status no longer has, such as counts back at zero.
  client::Object stored = deployments_.get(namespaceOf(d) + "/" + nameOf(d));
  const json::Value* was = stored ? json::find(*stored, "status") : nullptr;
  json::Document patch;
  patch.SetObject();
  auto& a = patch.GetAllocator();
  const json::Value none(rapidjson::kObjectType);
  json::Document diff = json::createMergePatch(was ? *was : none, status);
  json::set(patch, "status", json::Value(diff, a), a);
  auto r = client_.patch(deploymentPath(namespaceOf(d), nameOf(d)) + "/status", json::serialize(patch),
                         "application/merge-patch+json");
  if (!r && r.error().code != 404) return r.error();
  return okStatus();
}

Result<SyncResult> DeploymentController::syncRolloutStatus(const json::Value& d, const ReplicaSets& sets) {
  json::Document st = calculateStatus(d, sets);
  auto& a = st.GetAllocator();
  const json::Value* cur = condition(st, "Progressing");
  std::string rsName = sets.new_rs ? nameOf(*sets.new_rs) : "";
  bool complete = statusInt(d, "replicas") == statusInt(d, "updatedReplicas") && cur &&
                  json::getString(*cur, "reason") == "NewReplicaSetAvailable";
  (void)complete;
  bool done = json::getInt(st, "replicas").value_or(0) == json::getInt(st, "updatedReplicas").value_or(0) &&
              cur && json::getString(*cur, "reason") == "NewReplicaSetAvailable";
  if (hasProgressDeadline(d) && !done) {
    if (deploymentComplete(d, st)) {
      std::string msg = sets.new_rs ? "ReplicaSet \"" + rsName + "\" has successfully progressed."
                                    : "Deployment \"" + nameOf(d) + "\" has successfully progressed.";
      setCondition(st, "Progressing", "True", "NewReplicaSetAvailable", msg, now(), a);
    } else if (deploymentProgressing(d, st)) {
      std::string msg = sets.new_rs ? "ReplicaSet \"" + rsName + "\" is progressing."
                                    : "Deployment \"" + nameOf(d) + "\" is progressing.";
      // Progress refreshes lastUpdateTime even when the reason stays.
      std::string since = now();
      if (cur && json::getString(*cur, "status") == "True")
        since = json::getString(*cur, "lastTransitionTime");
      removeCondition(st, "Progressing", a);
      setCondition(st, "Progressing", "True", "ReplicaSetUpdated", msg, now(), a);
      json::Value* conds = json::find(st, "conditions");
      json::setString((*conds)[conds->Size() - 1], "lastTransitionTime", since, a);
    } else if (cur && json::getString(*cur, "reason") != "ProgressDeadlineExceeded" &&
               json::getString(*cur, "reason") != "NewReplicaSetAvailable") {
      auto last = clock::parseRfc3339(json::getString(*cur, "lastUpdateTime"));
      auto deadline = std::chrono::seconds(specInt(d, "progressDeadlineSeconds", 600));
      if (last && *last + deadline < clock::now()) {
        std::string msg = sets.new_rs ? "ReplicaSet \"" + rsName + "\" has timed out progressing."
                                      : "Deployment \"" + nameOf(d) + "\" has timed out progressing.";
        setCondition(st, "Progressing", "False", "ProgressDeadlineExceeded", msg, now(), a);
      }
    }
  }
  const json::Value* old = json::find(d, "status");
  if (!old || *old != st)
    if (auto s = patchStatus(d, st); !s) return s.error();
  // Not complete yet: look again when the deadline would pass.
  const json::Value* prog = condition(st, "Progressing");
  if (!hasProgressDeadline(d) || !prog || deploymentComplete(d, st) ||
      json::getString(*prog, "reason") == "ProgressDeadlineExceeded")
    return SyncResult{};
  auto last = clock::parseRfc3339(json::getString(*prog, "lastUpdateTime"));
  if (!last) return SyncResult{};
  auto after = std::chrono::duration_cast<std::chrono::milliseconds>(
      *last + std::chrono::seconds(specInt(d, "progressDeadlineSeconds", 600)) - clock::now());
  return SyncResult{std::max(after + std::chrono::seconds(1), std::chrono::milliseconds(1000))};
}

Result<SyncResult> DeploymentController::sync(const std::string& key) {
  client::Object cached = deployments_.get(key);
  if (!cached) return SyncResult{};
  json::Document d;
  d.CopyFrom(*cached, d.GetAllocator());
  const json::Value* selJson = json::findPath(d, {"spec", "selector"});
  auto selector = selJson ? meta::LabelSelector::fromJson(*selJson)
                          : Result<meta::LabelSelector>(ApiError::badRequest("no selector"));
  if (!selector || selector->empty()) {
    events_.event(d, kApiVersion, kKind, "Warning", "SelectingAll",
                  "This deployment is selecting all pods. A non-empty selector is required.");
    return SyncResult{};
  }
  auto owned = claimReplicaSets(d, *selector);
  if (!owned) return owned.error();
  if (json::findPath(d, {"metadata", "deletionTimestamp"})) {
    auto sets = replicaSetsAndRevision(d, *owned, false);
    if (!sets) return sets.error();
    json::Document st = calculateStatus(d, *sets);
    if (!json::find(d, "status") || *json::find(d, "status") != st)
      if (auto s = patchStatus(d, st); !s) return s.error();
    return SyncResult{};
  }
  // Paused or resumed: the Progressing condition says so (unknown progress).
  auto& da = d.GetAllocator();
  json::Value& status = json::ensureObject(d, "status", da);
  if (hasProgressDeadline(d)) {
    const json::Value* cond = condition(status, "Progressing");
    bool timedOut = cond && json::getString(*cond, "reason") == "ProgressDeadlineExceeded";
    bool pausedCond = cond && json::getString(*cond, "reason") == "DeploymentPaused";
    if (!timedOut && paused(d) && !pausedCond)
      setCondition(status, "Progressing", "Unknown", "DeploymentPaused", "Deployment is paused", now(), da);
    else if (!timedOut && !paused(d) && pausedCond)
      setCondition(status, "Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed", now(), da);
  }
  // Paused, or resized mid-rollout: scale only.
  bool scalingEvent = false;
  if (!paused(d)) {
    auto sets = replicaSetsAndRevision(d, *owned, false);
    if (!sets) return sets.error();
    for (auto& rs : sets->all()) {
      if (replicasOf(*rs) == 0) continue;
      std::string_view desired = json::getStringPath(*rs, {"metadata", "annotations", kDesiredReplicas});
      if (!desired.empty() && desired != std::to_string(replicasOf(d))) scalingEvent = true;
    }
  }
  if (paused(d) || scalingEvent) {
    auto sets = replicaSetsAndRevision(d, *owned, false);
    if (!sets) return sets.error();
    if (auto s = scale(d, *sets); !s) return s.error();
    if (paused(d)) cleanup(d, *sets);
    json::Document st = calculateStatus(d, *sets);
    if (!json::find(*cached, "status") || *json::find(*cached, "status") != st)
      if (auto s = patchStatus(d, st); !s) return s.error();
    return SyncResult{};
  }
  if (!isRollingUpdate(d)) {
    // Recreate: every old pod is gone before the new ReplicaSet gets any.
    auto sets = replicaSetsAndRevision(d, *owned, false);
    if (!sets) return sets.error();
    bool scaledDown = false;
    for (auto& rs : sets->old)
      if (replicasOf(*rs) > 0) {
        auto r = scaleReplicaSet(d, rs, 0);
        if (!r) return r.error();
        scaledDown = scaledDown || *r;
      }
    if (scaledDown || oldPodsRunning(d, *sets)) return syncRolloutStatus(d, *sets);
    if (!sets->new_rs) {
      sets = replicaSetsAndRevision(d, *owned, true);
      if (!sets) return sets.error();
    }
    if (sets->new_rs)
      if (auto r = scaleReplicaSet(d, sets->new_rs, replicasOf(d)); !r) return r.error();
    json::Document st = calculateStatus(d, *sets);
    if (deploymentComplete(d, st)) cleanup(d, *sets);
    return syncRolloutStatus(d, *sets);
  }
  auto sets = replicaSetsAndRevision(d, *owned, true);
  if (!sets) return sets.error();
  if (!sets->new_rs) return ApiError::internal("no new ReplicaSet for " + key);
  auto up = reconcileNewReplicaSet(d, *sets);
  if (!up) return up.error();
  if (*up) return syncRolloutStatus(d, *sets);
  auto down = reconcileOldReplicaSets(d, *sets);
  if (!down) return down.error();
  if (*down) return syncRolloutStatus(d, *sets);
  json::Document st = calculateStatus(d, *sets);
  if (deploymentComplete(d, st)) cleanup(d, *sets);
  return syncRolloutStatus(d, *sets);
}

}  // namespace shepherd::controllers
