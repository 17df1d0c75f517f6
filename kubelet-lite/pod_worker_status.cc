// PodWorker: the pod's status (phase, conditions, container statuses) and writing it.
#include "common/clock.h"
#include "common/log.h"
#include "kubelet-lite/pod_worker.h"
#include "kubelet-lite/pod_worker_internal.h"

namespace shepherd::kubelet {

using namespace pod_worker_detail;

std::string PodWorker::containerId(const std::string& id) const {
  return k_.config().runtime_name + "://" + id;
}

std::string PodWorker::buildStatus(const json::Value& pod) {
  json::Document st;
  st.SetObject();
  auto& a = st.GetAllocator();
  std::string policy = restartPolicy(pod);
  auto containerStatus = [&](const json::Value& spec, ContainerRecord& rec, bool init) {
    json::Value cs(rapidjson::kObjectType);
    std::string cname(json::getString(spec, "name"));
    cs.AddMember("name", json::str(cname, a), a);
    json::Value state(rapidjson::kObjectType);
    bool ready = false, started = false;
    if (rec.running) {
      json::Value run(rapidjson::kObjectType);
      if (!rec.started_at.empty()) run.AddMember("startedAt", json::str(rec.started_at, a), a);
      state.AddMember("running", run, a);
      started = rec.startedWith(spec);
      ready = started && (json::find(spec, "readinessProbe") ? rec.readiness.ok : true);
      if (init && !isSidecar(spec)) ready = false;  // a regular init container is ready once it exited 0
    } else if (rec.exited && rec.waiting_reason != "CrashLoopBackOff") {
      json::Document t;
      t.Parse(rec.terminated.data(), rec.terminated.size());
      state.AddMember("terminated", json::Value(t, a), a);
      ready = init && !isSidecar(spec) && rec.exit_code == 0;
    } else {
      json::Value w(rapidjson::kObjectType);
      w.AddMember("reason",
                  json::str(rec.waiting_reason.empty() ? "ContainerCreating" : rec.waiting_reason, a), a);
      if (!rec.waiting_message.empty()) w.AddMember("message", json::str(rec.waiting_message, a), a);
      state.AddMember("waiting", w, a);
    }
    cs.AddMember("state", state, a);
    json::Value last(rapidjson::kObjectType);
    std::string lastJson = rec.waiting_reason == "CrashLoopBackOff" && !rec.terminated.empty()
                               ? rec.terminated
                               : rec.last_terminated;
    if (!lastJson.empty()) {
      json::Document t;
      t.Parse(lastJson.data(), lastJson.size());
      last.AddMember("terminated", json::Value(t, a), a);
    }
    cs.AddMember("lastState", last, a);
    cs.AddMember("ready", ready, a);
    cs.AddMember("restartCount", static_cast<int64_t>(rec.attempt), a);
    cs.AddMember("image", json::str(json::getString(spec, "image"), a), a);
    cs.AddMember("imageID", json::str(rec.image_ref, a), a);
    if (!rec.id.empty()) cs.AddMember("containerID", json::str(containerId(rec.id), a), a);
    cs.AddMember("started", rec.running && started, a);
    return cs;
  };
  // Init containers. Sidecars count like main containers for readiness and while they
  // run; once stopped (or between restarts) they do not count for the phase.
  json::Value initStatuses(rapidjson::kArrayType);
  bool initFailed = false;
  int running = 0, waiting = 0, succeeded = 0, failed = 0, total = 0, ready = 0;
  for (auto& spec : containersOf(pod, true).GetArray()) {
    auto& rec = init_[std::string(json::getString(spec, "name"))];
    json::Value cs = containerStatus(spec, rec, true);
    if (isSidecar(spec)) {
      ++total;
      if (json::getBool(cs, "ready")) ++ready;
      if (rec.running) ++running;
    } else if (rec.exited && rec.exit_code != 0 && policy == "Never") {
      initFailed = true;
    }
    initStatuses.PushBack(cs, a);
  }
  bool initDone = initializedNow(pod);
  json::Value statuses(rapidjson::kArrayType);
  int mains = 0;
  for (auto& spec : containersOf(pod, false).GetArray()) {
    auto& rec = containers_[std::string(json::getString(spec, "name"))];
    json::Value cs = containerStatus(spec, rec, false);
    ++total;
    ++mains;
    if (json::getBool(cs, "ready")) ++ready;
    if (rec.running)
      ++running;
    else if (rec.exited && rec.waiting_reason != "CrashLoopBackOff")
      (rec.exit_code == 0 ? succeeded : failed)++;
    else
      ++waiting;
    statuses.PushBack(cs, a);
  }
  // Phase (upstream's getPhase, simplified for this kubelet's states).
  std::string phase = "Pending";
  if (!failed_reason_.empty() || initFailed) {
    phase = "Failed";
  } else if (!initDone) {
    phase = "Pending";
  } else if (running > 0) {
    phase = "Running";
  } else if (waiting > 0) {
    // A container waiting to restart keeps the pod Running once it has run.
    bool ranBefore = false;
    for (auto& [n, r] : containers_)
      if (r.started_once) ranBefore = true;
    phase = ranBefore ? "Running" : "Pending";
  } else if (mains > 0 && succeeded + failed == mains) {
    if (policy == "Always")
      phase = "Running";
    else if (failed == 0)
      phase = "Succeeded";
    else
      phase = policy == "Never" ? "Failed" : "Running";
  }
  // A pod whose containers were stopped for its deletion ends in a terminal phase (since
  // upstream 1.27): Succeeded when every main container exited 0, Failed otherwise.
  if (stopped_for_deletion_ && phase != "Succeeded" && phase != "Failed")
    phase = mains > 0 && succeeded == mains ? "Succeeded" : "Failed";
  st.AddMember("phase", json::str(phase, a), a);
  if (!failed_reason_.empty()) {
    st.AddMember("reason", json::str(failed_reason_, a), a);
    st.AddMember("message", json::str(failed_message_, a), a);
  }
  // Conditions: those the kubelet does not own (PodScheduled, DisruptionTarget, readiness
  // gates, ...) are kept as they are (the status is a merge patch: the list is replaced).
  json::Value conds(rapidjson::kArrayType);
  bool scheduled = false;
  if (const json::Value* existing = json::findPath(pod, {"status", "conditions"});
      existing && existing->IsArray())
    for (auto& c : existing->GetArray()) {
      std::string_view type = json::getString(c, "type");
      if (type == "Initialized" || type == "Ready" || type == "ContainersReady") continue;
      conds.PushBack(json::Value(c, a), a);
      if (type == "PodScheduled") scheduled = true;
    }
  bool containersReady = total > 0 && ready == total && phase == "Running";
  bool podReady = containersReady;
  if (const json::Value* gates = json::findPath(pod, {"spec", "readinessGates"}); gates && gates->IsArray())
    for (auto& g : gates->GetArray()) {
      bool ok = false;
      if (const json::Value* existing = json::findPath(pod, {"status", "conditions"});
          existing && existing->IsArray())
        for (auto& c : existing->GetArray())
          if (json::getString(c, "type") == json::getString(g, "conditionType") &&
              json::getString(c, "status") == "True")
            ok = true;
      podReady = podReady && ok;
    }
  auto cond = [&](const char* type, bool value, const char* reason) {
    std::string status = value ? "True" : "False";
    std::string key = std::string(type) + "=" + status;
    std::string& since = condition_since_[key];
    if (since.empty()) {
      since = clock::rfc3339(clock::now());
      condition_since_.erase(std::string(type) + "=" + (value ? "False" : "True"));
    }
    json::Value c(rapidjson::kObjectType);
    c.AddMember("type", json::str(type, a), a);
    c.AddMember("status", json::str(status, a), a);
    c.AddMember("lastProbeTime", json::Value(), a);
    c.AddMember("lastTransitionTime", json::str(since, a), a);
    if (!value && reason) c.AddMember("reason", json::str(reason, a), a);
    conds.PushBack(c, a);
  };
  bool finished = phase == "Succeeded" || phase == "Failed";
  if (!scheduled) cond("PodScheduled", true, nullptr);  // bound without a scheduler (spec.nodeName)
  cond("Initialized", initDone, initDone ? nullptr : "ContainersNotInitialized");
  cond("Ready", podReady, finished ? "PodCompleted" : "ContainersNotReady");
  cond("ContainersReady", containersReady, finished ? "PodCompleted" : "ContainersNotReady");
  st.AddMember("conditions", conds, a);
  st.AddMember("hostIP", json::str(k_.config().node_ip, a), a);
  json::Value hostIPs(rapidjson::kArrayType);
  json::Value hip(rapidjson::kObjectType);
  hip.AddMember("ip", json::str(k_.config().node_ip, a), a);
  hostIPs.PushBack(hip, a);
  st.AddMember("hostIPs", hostIPs, a);
  if (!pod_ip_.empty()) {
    st.AddMember("podIP", json::str(pod_ip_, a), a);
    json::Value ips(rapidjson::kArrayType);
    json::Value ip(rapidjson::kObjectType);
    ip.AddMember("ip", json::str(pod_ip_, a), a);
    ips.PushBack(ip, a);
    st.AddMember("podIPs", ips, a);
  }
  if (!start_time_.empty()) st.AddMember("startTime", json::str(start_time_, a), a);
  if (const json::Value* q = json::findPath(pod, {"status", "qosClass"}))
    st.AddMember("qosClass", json::Value(*q, a), a);
  if (!initStatuses.Empty()) st.AddMember("initContainerStatuses", initStatuses, a);
  st.AddMember("containerStatuses", statuses, a);
  return json::serialize(st);
}

bool PodWorker::writeStatus(const json::Value& pod) {
  std::string status = buildStatus(pod);
  if (status == last_status_) return true;  // written only when it changes
  auto r = k_.api().patch(
      "/api/v1/namespaces/" + ns_ + "/pods/" + name_ + "/status?fieldManager=kubelet-lite",
      R"({"status":)" + status + "}", "application/merge-patch+json", client::RequestOptions{10000, 1});
  if (r) {
    last_status_ = status;
    std::lock_guard<std::mutex> g(mu_);
    own_rv_ = std::string(json::getStringPath(*r, {"metadata", "resourceVersion"}));
    return true;
  }
  if (r.error().code == 404) return true;
  LOG_WARN("kubelet-lite: status of " << key_ << " not written: " << r.error().message);
  return false;
}

}  // namespace shepherd::kubelet
