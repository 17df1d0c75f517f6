// The StatefulSet controller's core (upstream's stateful_set_control.go): revisions, the
// replicas and condemned pods, creation and deletion in order, the rolling update, the
// status and the history.
#include <algorithm>
#include <set>

#include "controllers/manager/object_meta.h"
#include "controllers/manager/parallel.h"
#include "controllers/manager/pod_state.h"
#include "controllers/manager/revision_history.h"
#include "controllers/manager/template_hash.h"
#include "controllers/statefulset/stateful_pod.h"
#include "controllers/statefulset/statefulset_sync.h"

namespace shepherd::controllers::statefulset {

namespace {

constexpr const char* kKind = "StatefulSet";
constexpr const char* kDataHashLabel = "controller.kubernetes.io/hash";

std::string podsPath(const std::string& ns) {
  return "/api/v1/namespaces/" + client::urlEncode(ns) + "/pods";
}
std::string claimsPath(const std::string& ns) {
  return "/api/v1/namespaces/" + client::urlEncode(ns) + "/persistentvolumeclaims";
}
std::string revisionsPath(const std::string& ns) {
  return "/apis/apps/v1/namespaces/" + client::urlEncode(ns) + "/controllerrevisions";
}
std::string setPath(const json::Value& set) {
  return "/apis/apps/v1/namespaces/" + client::urlEncode(namespaceOf(set)) + "/statefulsets/" +
         client::urlEncode(nameOf(set));
}

bool terminating(const json::Value& pod) {
  return json::findPath(pod, {"metadata", "deletionTimestamp"}) != nullptr;
}
bool runningReady(const json::Value& pod) {
  return json::getStringPath(pod, {"status", "phase"}) == "Running" && podReady(pod);
}
bool healthy(const client::Object& pod) {
  return pod && runningReady(*pod) && !terminating(*pod);
}
std::string revisionOf(const json::Value& pod) {
  return std::string(json::getStringPath(pod, {"metadata", "labels", kRevisionHashLabel}));
}

// A revision's template: its data's spec.template without the patch directive.
void templateOf(const json::Value& revision, json::Document& out) {
  out.SetObject();
  const json::Value* t = json::findPath(revision, {"data", "spec", "template"});
  if (!t || !t->IsObject()) return;
  out.CopyFrom(*t, out.GetAllocator());
  json::remove(out, "$patch");
}

}  // namespace

Status StatefulSetController::resolveRevisions(Sync& s) {
  const json::Value* status = json::find(s.set, "status");
  s.collision_count = status ? json::getInt(*status, "collisionCount").value_or(0) : 0;
  std::string data = revisionData(s.set);
  int64_t next = 1;
  for (auto& r : s.revisions) next = std::max(next, revisionNumber(*r) + 1);
  Owner owner{&s.set, "apps/v1", kKind, setPath(s.set), ""};
  client::Object update;
  for (int attempt = 0; attempt < 10 && !update; ++attempt) {
    std::string hash = revisionDataHash(data, s.collision_count);
    // Upstream compares the hash labels only when they parse as numbers, which the
    // safe-encoded hashes never do: equal data is the same revision.
    auto equal = [&](const client::Object& r) {
      const json::Value* d = json::find(*r, "data");
      return d && canonicalJson(*d) == data;
    };
    if (!s.revisions.empty() && equal(s.revisions.back())) {
      update = s.revisions.back();
      break;
    }
    for (auto& r : s.revisions)
      if (equal(r)) {
        // A rollback: the old revision becomes the newest again.
        json::Document d;
        d.CopyFrom(*r, d.GetAllocator());
        json::set(d, "revision", json::Value(next), d.GetAllocator());
        auto u = client_.put(revisionsPath(namespaceOf(s.set)) + "/" + client::urlEncode(nameOf(d)),
                             json::serialize(d));
        if (!u) return u.error();
        update = std::make_shared<const json::Document>(std::move(*u));
        break;
      }
    if (update) break;
    auto created = createRevision(client_, owner, hash, next, kDataHashLabel);
    if (created) {
      update = std::make_shared<const json::Document>(std::move(*created));
      break;
    }
    if (created.error().code != 409) return created.error();
    std::string name = nameOf(s.set).substr(0, 223) + "-" + hash;
    auto existing = client_.get(revisionsPath(namespaceOf(s.set)) + "/" + client::urlEncode(name));
    if (!existing) return existing.error();
    if (const json::Value* d = json::find(*existing, "data"); d && canonicalJson(*d) == data) {
      update = std::make_shared<const json::Document>(std::move(*existing));
      break;
    }
    ++s.collision_count;  // a different template under this name: hash again
  }
  if (!update) return ApiError::internal("could not name a revision for " + s.key);
  s.update_revision = nameOf(*update);
  client::Object current = update;
  std::string_view wanted = status ? json::getString(*status, "currentRevision") : "";
  for (auto& r : s.revisions)
    if (!wanted.empty() && nameOf(*r) == wanted) current = r;
  s.current_revision = nameOf(*current);
  templateOf(*current, s.current_template);
  templateOf(*update, s.update_template);
  // The list now holds the update revision too (for the history clean-up).
  bool known = false;
  for (auto& r : s.revisions) known = known || nameOf(*r) == s.update_revision;
  if (!known) s.revisions.push_back(update);
  return okStatus();
}

Status StatefulSetController::createPod(Sync& s, json::Document& pod) {
  std::string setName = nameOf(s.set), podName = nameOf(pod), ns = namespaceOf(s.set);
  auto event = [&](const char* type, const char* reason, const std::string& msg) {
    events_.event(s.set, "apps/v1", kKind, type, reason, msg);
  };
  auto ordinal = ordinalOf(pod);
  std::string errors;
  for (auto& claim : claimsFor(s.set, ordinal.value_or(0))) {
    auto have = client_.get(claimsPath(ns) + "/" + client::urlEncode(claim.name));
    if (have) {
      if (json::findPath(*have, {"metadata", "deletionTimestamp"}))
        errors += (errors.empty() ? "" : ", ") + std::string("pvc ") + claim.name + " is being deleted";
      continue;
    }
    if (have.error().code != 404) {
      errors += (errors.empty() ? "" : ", ") + std::string("failed to retrieve PVC ") + claim.name + ": " +
                have.error().message;
      continue;
    }
    auto made = client_.post(claimsPath(ns), json::serialize(claim.object));
    if (made) {
      event("Normal", "SuccessfulCreate",
            "create Claim " + claim.name + " Pod " + podName + " in StatefulSet " + setName + " success");
    } else {
      if (made.error().code != 409)
        event("Warning", "FailedCreate",
              "create Claim " + claim.name + " for Pod " + podName + " in StatefulSet " + setName +
                  " failed error: " + made.error().message);
      errors += (errors.empty() ? "" : ", ") + std::string("failed to create PVC ") + claim.name + ": " +
                made.error().message;
    }
  }
  if (!errors.empty()) {
    event("Warning", "FailedCreate",
          "create Pod " + podName + " in StatefulSet " + setName + " failed error: " + errors);
    return ApiError::internal(errors);
  }
  auto r = client_.post(podsPath(ns), json::serialize(pod));
  if (!r) {
    if (r.error().code == 409) return r.error();  // made before: nothing to report
    event("Warning", "FailedCreate",
          "create Pod " + podName + " in StatefulSet " + setName + " failed error: " + r.error().message);
    return r.error();
  }
  event("Normal", "SuccessfulCreate", "create Pod " + podName + " in StatefulSet " + setName + " successful");
  return fixClaims(s, *r, false);
}

Status StatefulSetController::deletePod(Sync& s, const json::Value& pod) {
  auto r = client_.del(podsPath(namespaceOf(pod)) + "/" + client::urlEncode(nameOf(pod)));
  std::string what = "delete Pod " + nameOf(pod) + " in StatefulSet " + nameOf(s.set);
  if (!r && r.error().code != 404) {
    events_.event(s.set, "apps/v1", kKind, "Warning", "FailedDelete",
                  what + " failed error: " + r.error().message);
    return r.error();
  }
  events_.event(s.set, "apps/v1", kKind, "Normal", "SuccessfulDelete", what + " successful");
  return okStatus();
}

Status StatefulSetController::fixClaims(Sync& s, const json::Value& pod, bool condemned) {
  auto ordinal = ordinalOf(pod);
  if (!ordinal) return okStatus();
  std::string ns = namespaceOf(s.set);
  for (auto& claim : claimsFor(s.set, *ordinal)) {
    auto have = client_.get(claimsPath(ns) + "/" + client::urlEncode(claim.name));
    if (!have) {
      if (have.error().code == 404) continue;
      return have.error();
    }
    if (claimOwnersUpToDate(s.set, pod, *have, condemned)) continue;
    json::Document d;
    d.CopyFrom(*have, d.GetAllocator());
    json::Value refs = claimOwnerRefs(s.set, pod, *have, condemned, d.GetAllocator());
    json::Value& md = json::ensureObject(d, "metadata", d.GetAllocator());
    if (refs.Empty())
      json::remove(md, "ownerReferences");
    else
      json::set(md, "ownerReferences", std::move(refs), d.GetAllocator());
    auto u = client_.put(claimsPath(ns) + "/" + client::urlEncode(claim.name), json::serialize(d));
    if (!u && u.error().code != 404 && u.error().code != 409) return u.error();
  }
  return okStatus();
}

Status StatefulSetController::updatePod(Sync& s, const json::Value& pod, bool condemned) {
  if (!identityMatches(s.set, pod) || !storageMatches(s.set, pod)) {
    json::Document d;
    d.CopyFrom(pod, d.GetAllocator());
    updateIdentity(s.set, d, d.GetAllocator());
    updateStorage(s.set, d, d.GetAllocator());
    auto r =
        client_.put(podsPath(namespaceOf(pod)) + "/" + client::urlEncode(nameOf(pod)), json::serialize(d));
    std::string what = "update Pod " + nameOf(pod) + " in StatefulSet " + nameOf(s.set);
    if (!r) {
      events_.event(s.set, "apps/v1", kKind, "Warning", "FailedUpdate",
                    what + " failed error: " + r.error().message);
      if (r.error().code == 409) return okStatus();  // the next sync sees the new version
      return r.error();
    }
    events_.event(s.set, "apps/v1", kKind, "Normal", "SuccessfulUpdate", what + " successful");
  }
  return fixClaims(s, pod, condemned);
}

Status StatefulSetController::processReplica(Sync& s, int64_t index, bool& stop) {
  const json::Value& spec = s.spec();
  bool monotonic = s.monotonic();
  int64_t start = startOrdinal(s.set);
  int64_t ordinal = start + index;
  client::Object pod = s.replicas[static_cast<size_t>(index)];
  if (!pod) {
    // Below the partition (or, without one, below the current count) pods come back at
    // the current revision; the others at the update revision.
    const json::Value* strategy = json::find(spec, "updateStrategy");
    const json::Value* ru = strategy ? json::find(*strategy, "rollingUpdate") : nullptr;
    if (ru && ru->IsNull()) ru = nullptr;
    const json::Value* status = json::find(s.set, "status");
    int64_t currentReplicas = status ? json::getInt(*status, "currentReplicas").value_or(0) : 0;
    bool useCurrent = (strategy && json::getString(*strategy, "type") == "RollingUpdate" && !ru &&
                       ordinal < start + currentReplicas) ||
                      (ru && ordinal < start + json::getInt(*ru, "partition").value_or(0));
    json::Document fresh = useCurrent ? newPod(s.set, s.current_template, s.current_revision, ordinal)
                                      : newPod(s.set, s.update_template, s.update_revision, ordinal);
    Status st = createPod(s, fresh);
    if (monotonic) stop = true;
    if (!st && st.error().code == 409) return okStatus();
    return st;
  }
  std::string_view phase = json::getStringPath(*pod, {"status", "phase"});
  if (phase == "Failed" || phase == "Succeeded") {
    // Replaced once it is gone.
    stop = true;
    if (!terminating(*pod)) return deletePod(s, *pod);
    return okStatus();
  }
  if (phase == "Pending")
    if (auto st = fixClaims(s, *pod, false); !st) return st;
  if (monotonic && (terminating(*pod) || !runningReady(*pod) ||
                    !podAvailable(*pod, json::getInt(spec, "minReadySeconds").value_or(0), clock_.now()))) {
    stop = true;
    return okStatus();
  }
  if (terminating(*pod)) return okStatus();
  return updatePod(s, *pod, false);
}

Status StatefulSetController::updateStatefulSet(Sync& s) {
  if (auto st = resolveRevisions(s); !st) return st;
  const json::Value& spec = s.spec();
  int64_t start = startOrdinal(s.set);
  int64_t replicas = json::getInt(spec, "replicas").value_or(1);
  s.replicas.assign(static_cast<size_t>(std::max<int64_t>(replicas, 0)), nullptr);
  for (auto& p : s.pods) {
    auto ord = ordinalOf(*p);
    if (!ord) continue;
    if (*ord >= start && *ord < start + replicas)
      s.replicas[static_cast<size_t>(*ord - start)] = p;
    else
      s.condemned.push_back(p);
  }
  std::sort(s.condemned.begin(), s.condemned.end(),
            [](const client::Object& a, const client::Object& b) { return *ordinalOf(*a) > *ordinalOf(*b); });
  // The first unhealthy pod: the lowest replica, else the lowest condemned one.
  client::Object firstUnhealthy;
  bool unhealthyReplica = false;
  for (auto& p : s.replicas)
    if (!healthy(p)) {
      firstUnhealthy = p;
      unhealthyReplica = true;
      break;
    }
  if (!unhealthyReplica)
    for (auto it = s.condemned.rbegin(); it != s.condemned.rend(); ++it)
      if (!healthy(*it)) {
        firstUnhealthy = *it;
        break;
      }
  Status result = okStatus();
  auto finish = [&]() -> Status {
    Status w = writeStatus(s);
    Status h = truncateHistory(s);
    if (!result) return result;
    if (!w) return w;
    return h;
  };
  if (json::findPath(s.set, {"metadata", "deletionTimestamp"})) return finish();
  bool monotonic = s.monotonic();
  bool stopped = false;
  if (monotonic) {
    for (size_t i = 0; i < s.replicas.size() && !stopped && result; ++i)
      result = processReplica(s, static_cast<int64_t>(i), stopped);
  } else {
    std::vector<int64_t> todo;
    for (size_t i = 0; i < s.replicas.size(); ++i) todo.push_back(static_cast<int64_t>(i));
    for (size_t pos = 0, batch = 1; pos < todo.size() && result;
         pos += batch, batch = std::min<size_t>(batch * 2, kMaxBatchSize)) {
      size_t n = std::min(batch, todo.size() - pos);
      result = parallelFor(static_cast<int>(n), [&](int k) {
        bool ignored = false;
        return processReplica(s, todo[pos + static_cast<size_t>(k)], ignored);
      });
    }
  }
  if (stopped || !result) return finish();
  for (auto& p : s.condemned)
    if (auto st = fixClaims(s, *p, true); !st) {
      result = st;
      return finish();
    }
  // Scale down, highest ordinal first; in order, one at a time and only when healthy.
  int64_t mrs = json::getInt(spec, "minReadySeconds").value_or(0);
  for (auto& target : s.condemned) {
    if (terminating(*target)) {
      if (monotonic) return finish();  // wait until it is really gone
      continue;
    }
    if (monotonic && target != firstUnhealthy &&
        (!runningReady(*target) || !podAvailable(*target, mrs, clock_.now())))
      return finish();
    result = deletePod(s, *target);
    if (monotonic || !result) return finish();
  }
  std::string_view type = json::getStringPath(spec, {"updateStrategy", "type"});
  if (type != "RollingUpdate") return finish();  // OnDelete: pods change when deleted
  const json::Value* ru = json::findPath(spec, {"updateStrategy", "rollingUpdate"});
  int64_t updateMin = ru && ru->IsObject() ? json::getInt(*ru, "partition").value_or(0) : 0;
  for (int64_t i = static_cast<int64_t>(s.replicas.size()) - 1; i >= updateMin; --i) {
    const client::Object& pod = s.replicas[static_cast<size_t>(i)];
    if (!pod) break;
    if (revisionOf(*pod) != s.update_revision && !terminating(*pod)) {
      result = deletePod(s, *pod);
      s.current_delta = -1;  // the deleted pod no longer counts as current
      return finish();
    }
    if (!healthy(pod)) break;  // wait for it before going on
  }
  return finish();
}

Status StatefulSetController::writeStatus(Sync& s) {
  int64_t replicas = 0, ready = 0, available = 0, current = 0, updated = 0;
  int64_t mrs = json::getInt(s.spec(), "minReadySeconds").value_or(0);
  auto now = clock_.now();
  auto count = [&](const client::Object& p) {
    if (!p) return;
    ++replicas;
    if (runningReady(*p)) {
      ++ready;
      if (podAvailable(*p, mrs, now)) ++available;
    }
    if (terminating(*p)) return;
    if (revisionOf(*p) == s.current_revision) ++current;
    if (revisionOf(*p) == s.update_revision) ++updated;
  };
  for (auto& p : s.replicas) count(p);
  for (auto& p : s.condemned) count(p);
  current = std::max<int64_t>(current + s.current_delta, 0);
  // A rolling update that reached every replica makes the update revision current.
  std::string currentRevision = s.current_revision;
  int64_t want = json::getInt(s.spec(), "replicas").value_or(1);
  if (json::getStringPath(s.spec(), {"updateStrategy", "type"}) == "RollingUpdate" && updated == want &&
      ready == want && replicas == want) {
    current = updated;
    currentRevision = s.update_revision;
  }
  auto& a = s.status.GetAllocator();
  s.status.SetObject();
  int64_t generation = json::getInt(*json::find(s.set, "metadata"), "generation").value_or(0);
  json::set(s.status, "observedGeneration", json::Value(generation), a);
  json::set(s.status, "replicas", json::Value(replicas), a);
  if (ready) json::set(s.status, "readyReplicas", json::Value(ready), a);
  if (current) json::set(s.status, "currentReplicas", json::Value(current), a);
  if (updated) json::set(s.status, "updatedReplicas", json::Value(updated), a);
  json::setString(s.status, "currentRevision", currentRevision, a);
  json::setString(s.status, "updateRevision", s.update_revision, a);
  json::set(s.status, "collisionCount", json::Value(s.collision_count), a);
  json::set(s.status, "availableReplicas", json::Value(available), a);
  const json::Value* old = json::find(s.set, "status");
  static const json::Value empty(rapidjson::kObjectType);
  const json::Value& o = old && old->IsObject() ? *old : empty;
  bool differs = generation > json::getInt(o, "observedGeneration").value_or(0);
  for (const char* f :
       {"replicas", "currentReplicas", "readyReplicas", "updatedReplicas", "availableReplicas"})
    differs = differs || json::getInt(o, f).value_or(0) != json::getInt(s.status, f).value_or(0);
  for (const char* f : {"currentRevision", "updateRevision"})
    differs = differs || json::getString(o, f) != json::getString(s.status, f);
  if (!differs) return okStatus();
  json::Document body;
  body.CopyFrom(s.set, body.GetAllocator());
  json::set(body, "status", json::Value(s.status, body.GetAllocator()), body.GetAllocator());
  auto r = client_.put(setPath(s.set) + "/status", json::serialize(body));
  if (!r && r.error().code != 404) return r.error();
  return okStatus();
}

Status StatefulSetController::truncateHistory(Sync& s) {
  int64_t limit = json::getInt(s.spec(), "revisionHistoryLimit").value_or(10);
  if (limit < 0) return okStatus();
  std::set<std::string> live = {s.current_revision, s.update_revision};
  for (auto& p : s.pods) live.insert(revisionOf(*p));
  std::vector<client::Object> old;
  for (auto& r : s.revisions)
    if (!live.count(nameOf(*r))) old.push_back(r);
  sortByRevision(old);
  for (size_t i = 0; i + static_cast<size_t>(limit) < old.size(); ++i) {
    auto d = client_.del(revisionsPath(namespaceOf(s.set)) + "/" + client::urlEncode(nameOf(*old[i])));
    if (!d && d.error().code != 404) return d.error();
  }
  return okStatus();
}

}  // namespace shepherd::controllers::statefulset
