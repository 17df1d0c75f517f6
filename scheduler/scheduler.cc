#include "scheduler/scheduler.h"

#include <algorithm>
#include <cstdio>

#include "common/clock.h"
#include "common/log.h"
#include "scheduler/framework.h"

namespace shepherd::scheduler {

namespace {

// events.k8s.io events with series (repeated FailedScheduling grows one event), as
// upstream's scheduler; a full queue drops rather than slowing scheduling.
client::EventRecorderOptions eventOptions(const SchedulerOptions& o) {
  client::EventRecorderOptions e;
  e.component = o.scheduler_name;
  e.instance = o.instance;
  e.events_v1 = true;
  e.series = true;
  e.max_queued = 10000;
  return e;
}

std::string rvOf(const json::Value& obj) {
  return std::string(json::getStringPath(obj, {"metadata", "resourceVersion"}));
}

}  // namespace

void SchedulerMetrics::observe(double seconds) {
  size_t i = 0;
  while (i < sizeof(kBuckets) / sizeof(double) && seconds > kBuckets[i]) ++i;
  bucket_counts[i]++;
  duration_count++;
  duration_sum_us += static_cast<uint64_t>(seconds * 1e6);
}

Scheduler::Scheduler(client::Client& client, SchedulerOptions opts)
    : client_(client),
      opts_(std::move(opts)),
      pods_(client, client::InformerOptions{"", "v1", "pods", "", "",
                                            "status.phase!=Succeeded,status.phase!=Failed", 500}),
      nodes_(client, client::InformerOptions{"", "v1", "nodes", "", "", "", 500}),
      volume_binding_(client),
      queue_(opts_.initial_backoff, opts_.max_backoff),
      events_(client, eventOptions(opts_)) {
  client::EventHandlers ph;
  ph.on_add = [this](const client::Object& o) { onPodAdd(o); };
  ph.on_update = [this](const client::Object& a, const client::Object& b) { onPodUpdate(a, b); };
  ph.on_delete = [this](const client::Object& o) { onPodDelete(o); };
  pods_.addHandlers(ph);
  client::EventHandlers nh;
  nh.on_add = [this](const client::Object& o) { onNodeChange(o); };
  nh.on_update = [this](const client::Object&, const client::Object& o) { onNodeChange(o); };
  nh.on_delete = [this](const client::Object& o) { onNodeDelete(o); };
  nodes_.addHandlers(nh);
}

Scheduler::~Scheduler() {
  stop();
  stopInformers();
}

bool Scheduler::startInformers(int timeout_ms) {
  nodes_.start();
  pods_.start();
  volume_binding_.start();
  return nodes_.waitForSync(timeout_ms) && pods_.waitForSync(timeout_ms) &&
         volume_binding_.waitForSync(timeout_ms);
}

void Scheduler::stopInformers() {
  pods_.stop();
  nodes_.stop();
  volume_binding_.stop();
}

void Scheduler::run() {
  if (running_.exchange(true)) return;
  stopping_ = false;
  // Everything unscheduled that is ours is pending (informers ran before we led).
  for (const auto& o : pods_.list()) onPodAdd(o);
  threads_.emplace_back([this] { scheduleLoop(); });
  for (int i = 0; i < std::max(1, opts_.bind_workers); ++i) threads_.emplace_back([this] { bindLoop(); });
}

void Scheduler::stop() {
  if (!running_.exchange(false)) return;
  {
    // Under the bind workers' lock: a worker between its predicate check and its wait would
    // otherwise miss the wake-up and never return (its wait has no timeout).
    MutexLock g(bind_mu_);
    stopping_ = true;
  }
  queue_.shutDown();
  bind_cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

// --- cache and event handlers ---------------------------------------------------------

void Scheduler::addPodToCache(const PodInfo& pod) {
  MutexLock g(cache_mu_);
  auto prev = pod_node_.find(pod.key);
  if (prev != pod_node_.end()) {
    if (prev->second == pod.node_name) return;  // assumed here already, or already counted
    auto n = node_map_.find(prev->second);
    if (n != node_map_.end()) n->second.removePod(pod.key);
  }
  pod_node_[pod.key] = pod.node_name;
  auto& node = node_map_[pod.node_name];
  if (node.name.empty()) node.name = pod.node_name;  // a node we have not seen yet
  node.addPod(pod);
}

void Scheduler::removePodFromCache(const std::string& key) {
  MutexLock g(cache_mu_);
  auto prev = pod_node_.find(key);
  if (prev == pod_node_.end()) return;
  auto n = node_map_.find(prev->second);
  if (n != node_map_.end()) n->second.removePod(key);
  pod_node_.erase(prev);
}

void Scheduler::onPodAdd(const client::Object& obj) {
  PodInfo p = parsePod(*obj);
  if (!p.node_name.empty()) {
    if (p.terminal)
      removePodFromCache(p.key);
    else
      addPodToCache(p);
    queue_.remove(p.key);
    return;
  }
  if (mine(p) && !p.deleting && running_.load()) queue_.add(p.key, p.priority, p.creation);
}

void Scheduler::onPodUpdate(const client::Object&, const client::Object& obj) {
  PodInfo p = parsePod(*obj);
  if (!p.node_name.empty()) {
    bool wasCounted;
    {
      MutexLock g(cache_mu_);
      wasCounted = pod_node_.count(p.key) > 0;
    }
    if (p.terminal) {
      removePodFromCache(p.key);
      if (wasCounted) queue_.moveAllToActive();  // resources freed
    } else {
      addPodToCache(p);
    }
    queue_.remove(p.key);
    return;
  }
  if (mine(p) && !p.deleting && running_.load()) queue_.add(p.key, p.priority, p.creation);
}

void Scheduler::onPodDelete(const client::Object& obj) {
  PodInfo p = parsePod(*obj);
  queue_.remove(p.key);
  bool counted;
  {
    MutexLock g(cache_mu_);
    counted = pod_node_.count(p.key) > 0;
    last_failure_.erase(p.key);
  }
  removePodFromCache(p.key);
  if (counted) queue_.moveAllToActive();  // a deleted pod frees room
}

void Scheduler::onNodeChange(const client::Object& obj) {
  NodeInfo fresh = parseNode(*obj);
  {
    MutexLock g(cache_mu_);
    auto& n = node_map_[fresh.name];
    bool isNew =
        n.name.empty() || std::find(node_order_.begin(), node_order_.end(), fresh.name) == node_order_.end();
    n.name = fresh.name;
    n.labels = std::move(fresh.labels);
    n.taints = std::move(fresh.taints);
    n.unschedulable = fresh.unschedulable;
    n.ready = fresh.ready;
    n.allocatable = fresh.allocatable;
    if (isNew) node_order_.push_back(fresh.name);
  }
  queue_.moveAllToActive();  // a new or changed node may fit what did not
}

void Scheduler::onNodeDelete(const client::Object& obj) {
  std::string name(json::getStringPath(*obj, {"metadata", "name"}));
  MutexLock g(cache_mu_);
  node_map_.erase(name);
  node_order_.erase(std::remove(node_order_.begin(), node_order_.end(), name), node_order_.end());
  for (auto it = pod_node_.begin(); it != pod_node_.end();)
    if (it->second == name)
      it = pod_node_.erase(it);
    else
      ++it;
}

// --- scheduling -----------------------------------------------------------------------

void Scheduler::scheduleLoop() {
  std::string key;
  while (!stopping_.load()) {
    if (!queue_.pop(key, std::chrono::milliseconds(500))) continue;
    scheduleOne(key);
  }
}

void Scheduler::scheduleOne(const std::string& key) {
  auto started = std::chrono::steady_clock::now();
  client::Object obj = pods_.get(key);
  if (!obj) {
    queue_.remove(key);
    return;
  }
  PodInfo pod = parsePod(*obj);
  if (!pod.node_name.empty() || pod.deleting || !mine(pod)) {
    queue_.remove(key);
    return;
  }
  std::string chosen;
  std::string failure;
  PodClaims claims = volume_binding_.preFilter(*obj);
  {
    MutexLock g(cache_mu_);
    size_t numNodes = node_order_.size();
    // How many feasible nodes to find before scoring (upstream's percentageOfNodesToScore).
    size_t toFind = numNodes;
    if (numNodes >= 100) {
      int pct = opts_.percentage_of_nodes_to_score;
      if (pct <= 0) pct = std::max<int>(5, 50 - static_cast<int>(numNodes / 125));
      toFind = std::max<size_t>(100, numNodes * static_cast<size_t>(std::min(pct, 100)) / 100);
    }
    std::vector<NodeInfo*> feasible;
    std::vector<std::vector<std::string>> reasons;
    size_t start = numNodes ? next_start_ % numNodes : 0;
    size_t visited = 0;
    for (; visited < numNodes && feasible.size() < toFind && claims.unresolvable.empty(); ++visited) {
      NodeInfo& n = node_map_[node_order_[(start + visited) % numNodes]];
      auto why = filter(pod, n);
      if (why.empty() && claims.any) {
        client::Object node = nodes_.get(n.name);
        if (node) why = volume_binding_.filter(claims, *node);
      }
      if (why.empty())
        feasible.push_back(&n);
      else
        reasons.push_back(std::move(why));
    }
    next_start_ = numNodes ? (start + visited) % numNodes : 0;
    if (!claims.unresolvable.empty()) {
      // PreFilter's failure holds for every node.
      failure = "0/" + std::to_string(numNodes) + " nodes are available: " + claims.unresolvable + ".";
    } else if (feasible.empty()) {
      failure = unschedulableMessage(numNodes, reasons);
    } else {
      int64_t best = -1;
      int ties = 0;
      for (NodeInfo* n : feasible) {
        int64_t s = score(pod, *n);
        if (s > best) {
          best = s;
          chosen = n->name;
          ties = 1;
        } else if (s == best && (rng_() % static_cast<uint64_t>(++ties)) == 0) {
          chosen = n->name;  // uniform choice among equal scores (reservoir sampling)
        }
      }
      // Assume: charge the node now so the next pod sees it, before the bind returns.
      pod.node_name = chosen;
      node_map_[chosen].addPod(pod);
      pod_node_[pod.key] = chosen;
    }
  }
  metrics_.observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (!failure.empty()) {
    metrics_.unschedulable++;
    recordFailure(pod, rvOf(*obj), failure);
    queue_.done(key);
    queue_.backoff(key);
    return;
  }
  {
    MutexLock g(bind_mu_);
    bind_queue_.push_back(BindTask{pod, obj, claims.any, chosen, rvOf(*obj), started});
  }
  bind_cv_.notify_one();
}

void Scheduler::bindLoop() {
  while (true) {
    BindTask t;
    {
      UniqueMutexLock lk(bind_mu_);
      lk.wait(bind_cv_, [&]() REQUIRES(bind_mu_) { return !bind_queue_.empty() || stopping_.load(); });
      if (bind_queue_.empty()) return;
      t = std::move(bind_queue_.front());
      bind_queue_.pop_front();
    }
    if (t.volumes) {
      client::Object node = nodes_.get(t.node);
      PodClaims claims = volume_binding_.preFilter(*t.object);
      std::string err = node ? claims.unresolvable : "node \"" + t.node + "\" not found";
      if (err.empty()) err = volume_binding_.preBind(claims, *node, opts_.volume_bind_timeout, stopping_);
      if (!err.empty()) {
        forgetAssumed(t.pod, t.node);
        metrics_.errors++;
        recordFailure(t.pod, t.resource_version, "running PreBind plugin \"VolumeBinding\": " + err);
        queue_.done(t.pod.key);
        queue_.backoff(t.pod.key);
        continue;
      }
    }
    std::string body = R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":")" + t.pod.name +
                       R"(","namespace":")" + t.pod.ns + R"(","uid":")" + t.pod.uid +
                       R"("},"target":{"apiVersion":"v1","kind":"Node","name":")" + t.node + R"("}})";
    auto r = client_.post("/api/v1/namespaces/" + t.pod.ns + "/pods/" + t.pod.name + "/binding", body,
                          client::RequestOptions{15000, 1});
    if (r) {
      metrics_.scheduled++;
      queue_.remove(t.pod.key);
      {
        MutexLock g(cache_mu_);
        last_failure_.erase(t.pod.key);
      }
      emit(t.pod, t.resource_version, "Scheduled",
           "Successfully assigned " + t.pod.ns + "/" + t.pod.name + " to " + t.node, "Normal", "Binding");
      continue;
    }
    // Forget the assumption; the informer will show what really happened.
    forgetAssumed(t.pod, t.node);
    if (r.error().code == 409 || r.error().code == 404) {
      // Bound by someone else, or gone: nothing to retry.
      metrics_.bind_conflicts++;
      LOG_DEBUG("scheduler: binding " << t.pod.key << " to " << t.node << ": " << r.error().message);
      queue_.done(t.pod.key);
      continue;
    }
    metrics_.errors++;
    LOG_WARN("scheduler: binding " << t.pod.key << " to " << t.node << " failed: " << r.error().message);
    queue_.done(t.pod.key);
    queue_.backoff(t.pod.key);
  }
}

void Scheduler::forgetAssumed(const PodInfo& pod, const std::string& node) {
  MutexLock g(cache_mu_);
  auto it = pod_node_.find(pod.key);
  if (it != pod_node_.end() && it->second == node) {
    auto n = node_map_.find(node);
    if (n != node_map_.end()) n->second.removePod(pod.key);
    pod_node_.erase(it);
  }
}

void Scheduler::recordFailure(const PodInfo& pod, const std::string& rv, const std::string& message) {
  bool changed;
  {
    MutexLock g(cache_mu_);
    auto& last = last_failure_[pod.key];
    changed = last != message;
    last = message;
  }
  if (changed) {
    // PodScheduled=False/Unschedulable on the pod (merged into its conditions by type).
    std::string now = clock::rfc3339(clock::now());
    json::Document patch;
    patch.SetObject();
    auto& a = patch.GetAllocator();
    json::Value cond(rapidjson::kObjectType);
    cond.AddMember("type", "PodScheduled", a);
    cond.AddMember("status", "False", a);
    cond.AddMember("reason", "Unschedulable", a);
    cond.AddMember("message", json::str(message, a), a);
    cond.AddMember("lastProbeTime", json::Value(), a);
    cond.AddMember("lastTransitionTime", json::str(now, a), a);
    json::Value conds(rapidjson::kArrayType);
    conds.PushBack(cond, a);
    json::Value status(rapidjson::kObjectType);
    status.AddMember("conditions", conds, a);
    patch.AddMember("status", status, a);
    auto r = client_.patch("/api/v1/namespaces/" + pod.ns + "/pods/" + pod.name +
                               "/status?fieldManager=" + client::urlEncode(opts_.scheduler_name),
                           json::serialize(patch), "application/strategic-merge-patch+json",
                           client::RequestOptions{10000, 1});
    if (!r && r.error().code != 404)
      LOG_WARN("scheduler: cannot set PodScheduled on " << pod.key << ": " << r.error().message);
  }
  emit(pod, rv, "FailedScheduling", message, "Warning", "Scheduling");
}

// --- events ---------------------------------------------------------------------------

void Scheduler::emit(const PodInfo& pod, const std::string& resource_version, const std::string& reason,
                     const std::string& note, const std::string& type, const std::string& action) {
  json::Document obj;
  obj.SetObject();
  auto& a = obj.GetAllocator();
  json::Value& m = json::ensureObject(obj, "metadata", a);
  json::setString(m, "name", pod.name, a);
  json::setString(m, "namespace", pod.ns, a);
  json::setString(m, "uid", pod.uid, a);
  if (!resource_version.empty()) json::setString(m, "resourceVersion", resource_version, a);
  events_.event(obj, "v1", "Pod", type, reason, note, action);
}

std::string Scheduler::metricsText() {
  std::string out;
  out += "# HELP scheduler_schedule_attempts_total Number of attempts to schedule pods, by the result.\n";
  out += "# TYPE scheduler_schedule_attempts_total counter\n";
  out += "scheduler_schedule_attempts_total{result=\"scheduled\"} " +
         std::to_string(metrics_.scheduled.load()) + "\n";
  out += "scheduler_schedule_attempts_total{result=\"unschedulable\"} " +
         std::to_string(metrics_.unschedulable.load()) + "\n";
  out +=
      "scheduler_schedule_attempts_total{result=\"error\"} " + std::to_string(metrics_.errors.load()) + "\n";
  out +=
      "# HELP scheduler_scheduling_attempt_duration_seconds Scheduling attempt latency (filter and score).\n";
  out += "# TYPE scheduler_scheduling_attempt_duration_seconds histogram\n";
  uint64_t cumulative = 0;
  size_t nb = sizeof(SchedulerMetrics::kBuckets) / sizeof(double);
  for (size_t i = 0; i < nb; ++i) {
    cumulative += metrics_.bucket_counts[i].load();
    char le[32];
    std::snprintf(le, sizeof le, "%g", SchedulerMetrics::kBuckets[i]);
    out += "scheduler_scheduling_attempt_duration_seconds_bucket{le=\"" + std::string(le) + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  cumulative += metrics_.bucket_counts[nb].load();
  out += "scheduler_scheduling_attempt_duration_seconds_bucket{le=\"+Inf\"} " + std::to_string(cumulative) +
         "\n";
  char sum[32];
  std::snprintf(sum, sizeof sum, "%.6f", static_cast<double>(metrics_.duration_sum_us.load()) / 1e6);
  out += "scheduler_scheduling_attempt_duration_seconds_sum " + std::string(sum) + "\n";
  out += "scheduler_scheduling_attempt_duration_seconds_count " +
         std::to_string(metrics_.duration_count.load()) + "\n";
  out += "# HELP scheduler_pending_pods Number of pending pods, by the queue type.\n";
  out += "# TYPE scheduler_pending_pods gauge\n";
  out += "scheduler_pending_pods{queue=\"active\"} " + std::to_string(queue_.activeCount()) + "\n";
  out += "scheduler_pending_pods{queue=\"backoff\"} " + std::to_string(queue_.backoffCount()) + "\n";
  out +=
      "# HELP shepherd_scheduler_events_dropped_total Events not written because the event queue was full.\n";
  out += "# TYPE shepherd_scheduler_events_dropped_total counter\n";
  out += "shepherd_scheduler_events_dropped_total " + std::to_string(events_.dropped()) + "\n";
  return out;
}

}  // namespace shepherd::scheduler
