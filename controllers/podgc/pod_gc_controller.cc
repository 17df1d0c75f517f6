#include "controllers/podgc/pod_gc_controller.h"

#include <algorithm>
#include <set>

#include "common/log.h"
#include "controllers/manager/object_meta.h"

namespace shepherd::controllers {

namespace {

constexpr const char* kPassKey = "pass";

bool terminal(const json::Value& pod) {
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed";
}

bool terminating(const json::Value& pod) {
  return json::findPath(pod, {"metadata", "deletionTimestamp"});
}

std::string_view nodeOf(const json::Value& pod) {
  return json::getStringPath(pod, {"spec", "nodeName"});
}

// Evicted pods first, then the oldest, then by name (upstream's byEvictionAndCreationTimestamp).
void sortForCollection(std::vector<client::Object>& pods) {
  auto evicted = [](const json::Value& p) {
    return json::getStringPath(p, {"status", "phase"}) == "Failed" &&
           json::getStringPath(p, {"status", "reason"}) == "Evicted";
  };
  std::sort(pods.begin(), pods.end(), [&](const client::Object& a, const client::Object& b) {
    if (evicted(*a) != evicted(*b)) return evicted(*a);
    auto ta = json::getStringPath(*a, {"metadata", "creationTimestamp"});
    auto tb = json::getStringPath(*b, {"metadata", "creationTimestamp"});
    if (ta != tb) return ta < tb;
    return nameOf(*a) < nameOf(*b);
  });
}

bool nodeReady(const json::Value& node) {
  if (const json::Value* conds = json::findPath(node, {"status", "conditions"}); conds && conds->IsArray())
    for (auto& c : conds->GetArray())
      if (json::getString(c, "type") == "Ready") return json::getString(c, "status") == "True";
  return false;
}

bool outOfService(const json::Value& node) {
  if (const json::Value* taints = json::findPath(node, {"spec", "taints"}); taints && taints->IsArray())
    for (auto& t : taints->GetArray())
      if (json::getString(t, "key") == "node.kubernetes.io/out-of-service") return true;
  return false;
}

}  // namespace

PodGcController::PodGcController(client::Client& c, client::SharedInformers& informers, PodGcOptions opts)
    : Controller("podgc"),
      client_(c),
      pods_(informers.get(client::allObjects("", "v1", "pods"))),
      nodes_(informers.get(client::allObjects("", "v1", "nodes"))),
      opts_(std::move(opts)) {}

void PodGcController::run(int workers) {
  queue_.add(kPassKey);
  (void)workers;
  Controller::run(1);  // one pass at a time
}

Result<SyncResult> PodGcController::sync(const std::string&) {
  if (opts_.terminated_threshold > 0) gcTerminated();
  gcTerminating();
  gcOrphaned();
  gcUnscheduledTerminating();
  return SyncResult{opts_.check_period};
}

Status PodGcController::failAndDelete(const json::Value& pod, bool orphaned) {
  std::string path =
      "/api/v1/namespaces/" + client::urlEncode(namespaceOf(pod)) + "/pods/" + client::urlEncode(nameOf(pod));
  LOG_INFO("podgc: force deleting pod " << namespaceOf(pod) << "/" << nameOf(pod));
  if (!terminal(pod)) {
    json::Document patch;
    patch.SetObject();
    auto& a = patch.GetAllocator();
    json::setString(json::ensureObject(patch, "metadata", a), "uid", uidOf(pod), a);
    json::Value& status = json::ensureObject(patch, "status", a);
    json::setString(status, "phase", "Failed", a);
    if (orphaned) {
      json::Value cond(rapidjson::kObjectType);
      json::setString(cond, "type", "DisruptionTarget", a);
      json::setString(cond, "status", "True", a);
      json::setString(cond, "reason", "DeletionByPodGC", a);
      json::setString(cond, "message", "PodGC: node no longer exists", a);
      json::setString(cond, "lastTransitionTime", clock::rfc3339(opts_.clock->now()), a);
      json::Value conds(rapidjson::kArrayType);
      conds.PushBack(std::move(cond), a);
      json::set(status, "conditions", std::move(conds), a);
    }
    auto r =
        client_.patch(path + "/status", json::serialize(patch), "application/strategic-merge-patch+json");
    if (!r && r.error().code != 404) return r.error();
  }
  auto d = client_.del(path, R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})");
  if (!d && d.error().code != 404) LOG_WARN("podgc: deleting " << nameOf(pod) << ": " << d.error().message);
  return okStatus();
}

void PodGcController::gcTerminated() {
  std::vector<client::Object> done;
  for (auto& p : pods_.list())
    if (terminal(*p)) done.push_back(p);
  if (static_cast<int>(done.size()) <= opts_.terminated_threshold) return;
  sortForCollection(done);
  size_t excess = done.size() - static_cast<size_t>(opts_.terminated_threshold);
  LOG_INFO("podgc: garbage collecting " << excess << " terminated pods");
  for (size_t i = 0; i < excess; ++i) (void)failAndDelete(*done[i], false);
}

void PodGcController::gcTerminating() {
  std::vector<client::Object> out;
  for (auto& p : pods_.list()) {
    if (!terminating(*p) || nodeOf(*p).empty()) continue;
    client::Object node = nodes_.get(std::string(nodeOf(*p)));
    if (node && !nodeReady(*node) && outOfService(*node)) out.push_back(p);
  }
  sortForCollection(out);
  for (auto& p : out) (void)failAndDelete(*p, false);
}

void PodGcController::gcOrphaned() {
  std::set<std::string> known, missing;
  for (auto& n : nodes_.list()) known.insert(nameOf(*n));
  auto now = opts_.clock->steady();
  for (auto& p : pods_.list()) {
    std::string node(nodeOf(*p));
    if (!node.empty() && !known.count(node)) missing.insert(node);
  }
  // A node missing for the whole quarantine, and confirmed gone by the API server.
  std::set<std::string> deleted;
  for (auto it = missing_since_.begin(); it != missing_since_.end();) {
    if (!missing.count(it->first)) {
      it = missing_since_.erase(it);
      continue;
    }
    if (now - it->second >= opts_.quarantine) {
      auto r = client_.get("/api/v1/nodes/" + client::urlEncode(it->first));
      if (!r && r.error().code == 404) {
        deleted.insert(it->first);
        it = missing_since_.erase(it);
        continue;
      }
      if (r) {  // it exists after all (our cache is behind)
        it = missing_since_.erase(it);
        continue;
      }
      LOG_WARN("podgc: getting node " << it->first << ": " << r.error().message);
    }
    ++it;
  }
  for (const auto& n : missing)
    if (!deleted.count(n)) missing_since_.emplace(n, now);
  for (auto& p : pods_.list())
    if (deleted.count(std::string(nodeOf(*p)))) {
      LOG_INFO("podgc: pod " << namespaceOf(*p) << "/" << nameOf(*p) << " is on deleted node " << nodeOf(*p));
      (void)failAndDelete(*p, true);
    }
}

void PodGcController::gcUnscheduledTerminating() {
  for (auto& p : pods_.list())
    if (terminating(*p) && nodeOf(*p).empty()) (void)failAndDelete(*p, false);
}

}  // namespace shepherd::controllers
