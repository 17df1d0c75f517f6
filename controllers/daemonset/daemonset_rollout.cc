// The DaemonSet controller's history and rolling updates (upstream's update.go): the
// current ControllerRevision found or made, old ones numbered below it and cleaned up
// beyond revisionHistoryLimit unless a live pod still uses them; RollingUpdate replaces
// old pods within maxUnavailable, or with maxSurge starts new pods beside old ones and
// removes each old one once its replacement is available.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "controllers/daemonset/daemonset_sync.h"
#include "controllers/daemonset/node_fit.h"
#include "controllers/manager/object_meta.h"
#include "controllers/manager/pod_state.h"
#include "controllers/manager/revision_history.h"
#include "controllers/manager/template_hash.h"
#include "meta/selectors.h"

namespace shepherd::controllers::daemon {

namespace {

std::string revisionsPath(const std::string& ns) {
  return "/apis/apps/v1/namespaces/" + client::urlEncode(ns) + "/controllerrevisions";
}

// GetScaledValueFromIntOrPercent, rounding up.
int64_t scaled(const json::Value* v, int64_t total) {
  if (!v) return 0;
  if (v->IsInt64()) return v->GetInt64();
  if (!v->IsString()) return 0;
  std::string_view s = json::view(*v);
  if (s.empty() || s.back() != '%') return std::atoll(std::string(s).c_str());
  int64_t p = std::atoll(std::string(s.substr(0, s.size() - 1)).c_str());
  return (p * total + 99) / 100;
}

}  // namespace

Status DaemonSetController::constructHistory(Sync& s) {
  auto sel = meta::LabelSelector::fromJson(*json::findPath(s.ds, {"spec", "selector"}));
  if (!sel) return sel.error();
  Owner owner{
      &s.ds, "apps/v1", "DaemonSet",
      "/apis/apps/v1/namespaces/" + client::urlEncode(s.ns()) + "/daemonsets/" + client::urlEncode(s.name()),
      ""};
  auto revs = claimRevisions(client_, owner, *sel, revisions_.byIndex(kNamespaceIndex, s.ns()));
  if (!revs) return revs.error();
  std::vector<client::Object> current;
  s.old.clear();
  for (auto& r : *revs) {
    client::Object rev = r;
    // Revisions made before the label existed get their name as their hash.
    if (json::getStringPath(*rev, {"metadata", "labels", kRevisionHashLabel}).empty()) {
      json::Document d;
      d.CopyFrom(*rev, d.GetAllocator());
      json::setString(
          json::ensureObject(json::ensureObject(d, "metadata", d.GetAllocator()), "labels", d.GetAllocator()),
          kRevisionHashLabel, nameOf(d), d.GetAllocator());
      auto u = client_.put(revisionsPath(s.ns()) + "/" + client::urlEncode(nameOf(d)), json::serialize(d));
      if (!u) return u.error();
      rev = std::make_shared<const json::Document>(std::move(*u));
    }
    (revisionMatches(s.ds, *rev) ? current : s.old).push_back(rev);
  }
  int64_t next = 1;
  for (auto& o : s.old) next = std::max(next, revisionNumber(*o) + 1);
  client::Object cur;
  if (current.empty()) {
    const json::Value* status = json::find(s.ds, "status");
    int64_t count = status ? json::getInt(*status, "collisionCount").value_or(0) : 0;
    std::string hash = templateHash(*json::findPath(s.ds, {"spec", "template"}), count);
    auto created = createRevision(client_, owner, hash, next);
    if (!created) {
      if (created.error().code != 409) return created.error();
      auto existing = client_.get(revisionsPath(s.ns()) + "/" + client::urlEncode(s.name() + "-" + hash));
      if (!existing) return existing.error();
      if (!revisionMatches(s.ds, *existing)) {
        // A hash collision with another template: bump collisionCount and try again.
        json::Document d;
        d.CopyFrom(s.ds, d.GetAllocator());
        json::set(json::ensureObject(d, "status", d.GetAllocator()), "collisionCount", json::Value(count + 1),
                  d.GetAllocator());
        auto u = client_.put("/apis/apps/v1/namespaces/" + client::urlEncode(s.ns()) + "/daemonsets/" +
                                 client::urlEncode(s.name()) + "/status",
                             json::serialize(d));
        if (!u) return u.error();
        return created.error();
      }
      created = std::move(existing);
    }
    cur = std::make_shared<const json::Document>(std::move(*created));
  } else {
    // Several revisions hold the same template (a race): keep the newest.
    sortByRevision(current);
    cur = current.back();
    for (size_t i = 0; i + 1 < current.size(); ++i) {
      auto r = client_.del(revisionsPath(s.ns()) + "/" + client::urlEncode(nameOf(*current[i])));
      if (!r && r.error().code != 404) return r.error();
    }
    if (revisionNumber(*cur) < next) {
      json::Document d;
      d.CopyFrom(*cur, d.GetAllocator());
      json::set(d, "revision", json::Value(next), d.GetAllocator());
      auto u = client_.put(revisionsPath(s.ns()) + "/" + client::urlEncode(nameOf(d)), json::serialize(d));
      if (!u) return u.error();
      cur = std::make_shared<const json::Document>(std::move(*u));
    }
  }
  s.hash = std::string(json::getStringPath(*cur, {"metadata", "labels", kRevisionHashLabel}));
  return okStatus();
}

Status DaemonSetController::cleanupHistory(Sync& s) {
  int64_t keep = json::getInt(*json::find(s.ds, "spec"), "revisionHistoryLimit").value_or(10);
  int64_t kill = static_cast<int64_t>(s.old.size()) - keep;
  if (kill <= 0) return okStatus();
  auto all = nodesToDaemonPods(s, true);
  if (!all) return all.error();
  std::set<std::string> live;
  for (auto& [node, pods] : *all)
    for (auto& p : pods)
      if (std::string h(json::getStringPath(*p, {"metadata", "labels", kRevisionHashLabel})); !h.empty())
        live.insert(h);
  sortByRevision(s.old);
  for (auto& r : s.old) {
    if (kill <= 0) break;
    if (live.count(std::string(json::getStringPath(*r, {"metadata", "labels", kRevisionHashLabel}))))
      continue;
    auto d = client_.del(revisionsPath(s.ns()) + "/" + client::urlEncode(nameOf(*r)));
    if (!d && d.error().code != 404) return d.error();
    --kill;
  }
  return okStatus();
}

Status DaemonSetController::rollingUpdate(Sync& s) {
  auto all = nodesToDaemonPods(s, false);
  if (!all) return all.error();
  NodePods& byNode = *all;
  const json::Value& spec = *json::find(s.ds, "spec");
  int64_t mrs = json::getInt(spec, "minReadySeconds").value_or(0);
  auto now = clock_.now();
  int64_t generation = s.templateGeneration();
  std::map<std::string, client::Object> nodesByName;
  int64_t desired = 0;
  for (auto& n : s.nodes) {
    nodesByName[nameOf(*n)] = n;
    if (!nodeShouldRunDaemonPod(*n, s.ds).should_run) continue;
    ++desired;
    byNode.try_emplace(nameOf(*n));
  }
  const json::Value* ru = json::findPath(spec, {"updateStrategy", "rollingUpdate"});
  int64_t maxUnavailable = scaled(ru ? json::find(*ru, "maxUnavailable") : nullptr, desired);
  int64_t maxSurge = scaled(ru ? json::find(*ru, "maxSurge") : nullptr, desired);
  if (desired > 0 && maxUnavailable == 0 && maxSurge == 0) maxUnavailable = 1;  // an impossible setting
  // At most one new and one old pod per node, or the manage loop prunes first.
  auto split = [&](const std::vector<client::Object>& pods, client::Object& newPod, client::Object& oldPod) {
    for (auto& p : pods) {
      if (json::findPath(*p, {"metadata", "deletionTimestamp"})) continue;
      client::Object& slot = podUpdated(*p, s.hash, generation) ? newPod : oldPod;
      if (slot) return false;
      slot = p;
    }
    return true;
  };
  auto available = [&](const client::Object& p) { return podAvailable(*p, mrs, now); };
  if (maxSurge == 0) {
    int64_t unavailable = 0;
    std::vector<std::string> replace, candidates;
    for (auto& [node, pods] : byNode) {
      client::Object newPod, oldPod;
      if (!split(pods, newPod, oldPod)) {
        ++unavailable;
        continue;
      }
      if ((!oldPod && !newPod) || (oldPod && newPod)) {
        ++unavailable;  // the manage loop creates or prunes here
      } else if (newPod) {
        if (!available(newPod)) ++unavailable;
      } else if (!available(oldPod)) {
        replace.push_back(nameOf(*oldPod));  // an unavailable old pod may go at once
        ++unavailable;
      } else if (unavailable < maxUnavailable) {
        candidates.push_back(nameOf(*oldPod));
      }
    }
    int64_t room =
        std::clamp<int64_t>(maxUnavailable - unavailable, 0, static_cast<int64_t>(candidates.size()));
    replace.insert(replace.end(), candidates.begin(), candidates.begin() + room);
    return syncNodes(s, replace, {});
  }
  // Surging: a new pod beside each old one (at most maxSurge at once while the old ones
  // are available); an old pod goes once its node's new pod is available.
  std::vector<std::string> deleteOld, shouldNotRun, candidateNodes, allowedNodes;
  int64_t surging = 0, availableCount = 0;
  for (auto& [node, pods] : byNode) {
    client::Object newPod, oldPod;
    if (!split(pods, newPod, oldPod)) {
      ++surging;
      continue;
    }
    if (oldPod ? available(oldPod) : newPod && available(newPod)) ++availableCount;
    if (!oldPod) continue;  // nothing old here: the manage loop handles the node
    auto n = nodesByName.find(node);
    bool shouldRun = n != nodesByName.end() && nodeShouldRunDaemonPod(*n->second, s.ds).should_run;
    if (!newPod) {
      if (!available(oldPod)) {
        if (!shouldRun)
          deleteOld.push_back(nameOf(*oldPod));
        else
          allowedNodes.push_back(node);
      } else if (!shouldRun) {
        shouldNotRun.push_back(nameOf(*oldPod));
      } else if (surging < maxSurge) {
        candidateNodes.push_back(node);
      }
      continue;
    }
    if (!available(newPod)) {
      ++surging;  // waiting for the new pod
      continue;
    }
    deleteOld.push_back(nameOf(*oldPod));
  }
  // Pods on nodes that no longer fit go only while enough others are available.
  if (int64_t spare = availableCount - desired; spare > 0) {
    spare = std::min<int64_t>(spare, static_cast<int64_t>(shouldNotRun.size()));
    deleteOld.insert(deleteOld.end(), shouldNotRun.begin(), shouldNotRun.begin() + spare);
  }
  int64_t room = std::clamp<int64_t>(maxSurge - surging, 0, static_cast<int64_t>(candidateNodes.size()));
  allowedNodes.insert(allowedNodes.end(), candidateNodes.begin(), candidateNodes.begin() + room);
  return syncNodes(s, deleteOld, allowedNodes);
}

}  // namespace shepherd::controllers::daemon
