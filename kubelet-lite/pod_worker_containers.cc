// PodWorker: the containers: start (image, env, volumes, mounts, resources, security
// context), refresh from the runtime, probes, and restarts by policy with back-off.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/clock.h"
#include "kubelet-lite/cri_log.h"
#include "kubelet-lite/pod_worker.h"
#include "kubelet-lite/pod_worker_internal.h"
#include "kubelet-lite/volumes.h"
#include "meta/quantity.h"

namespace shepherd::kubelet {

namespace fs = std::filesystem;
using namespace pod_worker_detail;

namespace {

constexpr int kMaxBackoffSeconds = 300;
constexpr int kInitialBackoffSeconds = 10;

int64_t milliOf(const json::Value& c, const char* kind, const char* res) {
  const json::Value* q = json::findPath(c, {"resources", kind, res});
  if (!q) return 0;
  auto v = meta::quantityValue(*q);
  return v ? static_cast<int64_t>(*v * 1000.0L + 0.5L) : 0;
}

}  // namespace

void PodWorker::containerEvent(const json::Value& pod, ContainerRecord& rec, const std::string& type,
                               const std::string& reason, const std::string& message) {
  if (!rec.events_sent.insert(reason + "\n" + message).second) return;
  k_.event(pod, type, reason, message);
}

Status PodWorker::startContainer(const json::Value& pod, const json::Value& spec, ContainerRecord& rec,
                                 bool init) {
  std::string cname(json::getString(spec, "name"));
  std::string image(json::getString(spec, "image"));
  // Images come from the local store only: a missing image is ErrImagePull, never a pull.
  auto now = std::chrono::steady_clock::now();
  if (rec.pull_backoff_seconds > 0 && now < rec.pull_retry_at) {
    rec.waiting_reason = "ImagePullBackOff";
    rec.waiting_message = "Back-off pulling image \"" + image + "\"";
    containerEvent(pod, rec, "Normal", "BackOff", rec.waiting_message);
    return ApiError::make(500, rec.waiting_reason, rec.waiting_message);
  }
  auto img = k_.runtime().imageStatus(image);
  if (!img || img->id().empty()) {
    rec.pull_backoff_seconds =
        rec.pull_backoff_seconds == 0 ? 10 : std::min(300, rec.pull_backoff_seconds * 2);
    rec.pull_retry_at = now + std::chrono::seconds(rec.pull_backoff_seconds);
    rec.waiting_reason = "ErrImagePull";
    rec.waiting_message =
        "image \"" + image + "\" is not in the node's image store and Shepherd nodes do not pull images";
    containerEvent(pod, rec, "Warning", "Failed",
                   "Failed to pull image \"" + image + "\": " + rec.waiting_message);
    containerEvent(pod, rec, "Warning", "Failed", "Error: ErrImagePull");
    return ApiError::make(500, rec.waiting_reason, rec.waiting_message);
  }
  rec.pull_backoff_seconds = 0;
  containerEvent(pod, rec, "Normal", "Pulled",
                 "Container image \"" + image + "\" already present on machine");
  PodFacts facts;
  facts.pod = &pod;
  facts.pod_ip = pod_ip_;
  facts.host_ip = k_.config().node_ip;
  facts.node_name = k_.config().node_name;
  facts.node_cpu = k_.config().node_cpu;
  facts.node_memory = k_.config().node_memory;
  auto env = buildEnv(spec, facts, k_.dataLookup());
  if (!env) {
    rec.waiting_reason = "CreateContainerConfigError";
    rec.waiting_message = env.error().message;
    containerEvent(pod, rec, "Warning", "Failed", "Error: " + env.error().message);
    return env.error();
  }
  // The fake runtime runs no process: nothing is made on the host for its containers
  // (volumes, /etc/hosts, the termination-message file, the log directory).
  const bool onHost = !k_.config().fake;
  auto vols =
      onHost ? prepareVolumes(k_.podDir(uid_), facts, k_.dataLookup(), k_.claimLookup()) : PreparedVolumes{};
  if (!vols) {
    rec.waiting_reason = "ContainerCreating";
    rec.waiting_message = vols.error().message;
    containerEvent(pod, rec, "Warning", "FailedMount",
                   vols.error().reason == "UnmountedVolumes"
                       ? vols.error().message
                       : "MountVolume.SetUp failed: " + vols.error().message);
    return vols.error();
  }
  std::map<std::string, std::string> envMap(env->begin(), env->end());
  runtime::v1::ContainerConfig c;
  uint32_t attempt = rec.started_once ? rec.attempt + 1 : 0;
  c.mutable_metadata()->set_name(cname);
  c.mutable_metadata()->set_attempt(attempt);
  c.mutable_image()->set_image(image);
  if (const json::Value* cmd = json::find(spec, "command"); cmd && cmd->IsArray())
    for (auto& x : cmd->GetArray()) c.add_command(expand(std::string(json::view(x)), envMap));
  if (const json::Value* args = json::find(spec, "args"); args && args->IsArray())
    for (auto& x : args->GetArray()) c.add_args(expand(std::string(json::view(x)), envMap));
  c.set_working_dir(std::string(json::getString(spec, "workingDir")));
  for (const auto& [k, v] : env.value()) {
    auto* kv = c.add_envs();
    kv->set_key(k);
    kv->set_value(v);
  }
  bool hostNetwork = json::getBool(*json::find(pod, "spec"), "hostNetwork");
  if (const json::Value* mounts = json::find(spec, "volumeMounts"); mounts && mounts->IsArray()) {
    for (auto& m : mounts->GetArray()) {
      auto it = vols->host_paths.find(std::string(json::getString(m, "name")));
      if (it == vols->host_paths.end()) continue;
      std::string host = it->second;
      std::string sub(json::getString(m, "subPath"));
      if (!sub.empty()) {
        host += "/" + sub;
        std::error_code ec;
        if (!fs::exists(host, ec)) fs::create_directories(host, ec);
      }
      auto* mnt = c.add_mounts();
      mnt->set_container_path(std::string(json::getString(m, "mountPath")));
      mnt->set_host_path(host);
      mnt->set_readonly(json::getBool(m, "readOnly"));
      std::string_view prop = json::getString(m, "mountPropagation");
      if (prop == "HostToContainer")
        mnt->set_propagation(runtime::v1::PROPAGATION_HOST_TO_CONTAINER);
      else if (prop == "Bidirectional")
        mnt->set_propagation(runtime::v1::PROPAGATION_BIDIRECTIONAL);
    }
  }
  std::string podDir = k_.podDir(uid_);
  if (!hostNetwork && onHost) {
    auto hostsPath = writeHostsFile(podDir, pod, pod_ip_);
    if (!hostsPath) {
      rec.waiting_reason = "CreateContainerConfigError";
      rec.waiting_message = hostsPath.error().message;
      containerEvent(pod, rec, "Warning", "Failed", "Error: " + rec.waiting_message);
      return hostsPath.error();
    }
    auto* hosts = c.add_mounts();
    hosts->set_container_path("/etc/hosts");
    hosts->set_host_path(hostsPath.value());
  }
  std::error_code ec;
  if (onHost) {
    std::string termPath(json::getString(spec, "terminationMessagePath", "/dev/termination-log"));
    std::string termDir = podDir + "/containers/" + cname;
    fs::create_directories(termDir, ec);
    std::string termFile = termDir + "/" + std::to_string(attempt) + "-termination-log";
    writeFileAtomic(termFile, "", 0666);
    auto* tm = c.add_mounts();
    tm->set_container_path(termPath);
    tm->set_host_path(termFile);
    fs::create_directories(k_.podLogDir(ns_, name_, uid_) + "/" + cname, ec);
  }
  (*c.mutable_labels())["io.kubernetes.container.name"] = cname;
  (*c.mutable_labels())["io.kubernetes.pod.uid"] = uid_;
  (*c.mutable_labels())["io.kubernetes.pod.name"] = name_;
  (*c.mutable_labels())["io.kubernetes.pod.namespace"] = ns_;
  (*c.mutable_annotations())["io.kubernetes.container.restartCount"] = std::to_string(attempt);
  c.set_log_path(cname + "/" + std::to_string(attempt) + ".log");
  c.set_stdin(json::getBool(spec, "stdin"));
  c.set_stdin_once(json::getBool(spec, "stdinOnce"));
  c.set_tty(json::getBool(spec, "tty"));
  auto* lc = c.mutable_linux();
  auto* res = lc->mutable_resources();
  int64_t reqCpu = milliOf(spec, "requests", "cpu");
  int64_t limCpu = milliOf(spec, "limits", "cpu");
  res->set_cpu_shares(std::max<int64_t>(2, (reqCpu > 0 ? reqCpu : limCpu) * 1024 / 1000));
  if (limCpu > 0) {
    res->set_cpu_period(100000);
    res->set_cpu_quota(std::max<int64_t>(1000, limCpu * 100000 / 1000));
  }
  if (const json::Value* mem = json::findPath(spec, {"resources", "limits", "memory"}))
    if (auto v = meta::quantityValue(*mem)) res->set_memory_limit_in_bytes(static_cast<int64_t>(*v));
  auto* sc = lc->mutable_security_context();
  const json::Value* csc = json::find(spec, "securityContext");
  const json::Value* psc = json::findPath(pod, {"spec", "securityContext"});
  auto pick = [&](const char* field) -> const json::Value* {
    if (csc)
      if (const json::Value* v = json::find(*csc, field)) return v;
    return psc ? json::find(*psc, field) : nullptr;
  };
  if (const json::Value* u = pick("runAsUser"); u && u->IsInt64())
    sc->mutable_run_as_user()->set_value(u->GetInt64());
  if (const json::Value* g = pick("runAsGroup"); g && g->IsInt64())
    sc->mutable_run_as_group()->set_value(g->GetInt64());
  if (csc) {
    sc->set_privileged(json::getBool(*csc, "privileged"));
    sc->set_readonly_rootfs(json::getBool(*csc, "readOnlyRootFilesystem"));
    if (const json::Value* caps = json::find(*csc, "capabilities")) {
      if (const json::Value* add = json::find(*caps, "add"); add && add->IsArray())
        for (auto& x : add->GetArray())
          sc->mutable_capabilities()->add_add_capabilities(std::string(json::view(x)));
      if (const json::Value* drop = json::find(*caps, "drop"); drop && drop->IsArray())
        for (auto& x : drop->GetArray())
          sc->mutable_capabilities()->add_drop_capabilities(std::string(json::view(x)));
    }
    if (const json::Value* ape = json::find(*csc, "allowPrivilegeEscalation"); ape && ape->IsBool())
      sc->set_no_new_privs(!ape->GetBool());
  }
  if (psc) {
    if (const json::Value* groups = json::find(*psc, "supplementalGroups"); groups && groups->IsArray())
      for (auto& g : groups->GetArray())
        if (g.IsInt64()) sc->add_supplemental_groups(g.GetInt64());
    // The fsGroup owns the volumes, so the container's processes are in it.
    if (const json::Value* fsGroup = json::find(*psc, "fsGroup"); fsGroup && fsGroup->IsInt64())
      sc->add_supplemental_groups(fsGroup->GetInt64());
  }
  auto* nsOpts = sc->mutable_namespace_options();
  nsOpts->set_network(hostNetwork ? runtime::v1::NODE : runtime::v1::POD);
  bool shareProcess = json::getBool(*json::find(pod, "spec"), "shareProcessNamespace");
  nsOpts->set_pid(json::getBool(*json::find(pod, "spec"), "hostPID") ? runtime::v1::NODE
                  : shareProcess                                     ? runtime::v1::POD
                                                                     : runtime::v1::CONTAINER);
  // A previous attempt with this attempt number (e.g. after adoption) must go first.
  if (!rec.id.empty()) (void)k_.runtime().removeContainer(rec.id);
  auto id = k_.runtime().createContainer(sandbox_id_, c, sandboxConfig(pod));
  if (!id) {
    rec.waiting_reason = "CreateContainerError";
    rec.waiting_message = id.error().message;
    containerEvent(pod, rec, "Warning", "Failed", "Error: " + id.error().message);
    return id.error();
  }
  containerEvent(pod, rec, "Normal", "Created", "Created container " + cname);
  auto started = k_.runtime().startContainer(id.value());
  rec.id = id.value();
  rec.attempt = attempt;
  rec.started_once = true;
  rec.liveness = ProbeState{};
  rec.readiness = ProbeState{};
  rec.startup = ProbeState{};
  if (!started) {
    rec.waiting_reason = "RunContainerError";
    rec.waiting_message = started.error().message;
    containerEvent(pod, rec, "Warning", "Failed", "Error: " + started.error().message);
    return started.error();
  }
  rec.waiting_reason.clear();
  rec.waiting_message.clear();
  containerEvent(pod, rec, "Normal", "Started", "Started container " + cname);
  (void)init;
  return okStatus();
}

void PodWorker::refreshContainer(const json::Value& spec, ContainerRecord& rec) {
  if (rec.id.empty()) {
    rec.running = false;
    return;
  }
  auto st = k_.runtime().containerStatus(rec.id);
  if (!st) {
    if (st.error().code == 404) {
      rec.id.clear();
      rec.running = false;
    }
    return;
  }
  const auto& s = st.value();
  rec.image_ref = s.image_ref();
  rec.running = s.state() == runtime::v1::CONTAINER_RUNNING;
  if (rec.running) rec.started_at = nanosToRfc3339(s.started_at());
  rec.exited = s.state() == runtime::v1::CONTAINER_EXITED;
  if (rec.exited) {
    rec.exit_code = s.exit_code();
    std::string reason = s.reason();
    if (reason.empty()) reason = s.exit_code() == 0 ? "Completed" : "Error";
    // Termination message: the file, or (FallbackToLogsOnError) the log's tail on error.
    std::string message;
    std::string termFile = k_.podDir(uid_) + "/containers/" + std::string(json::getString(spec, "name")) +
                           "/" + std::to_string(rec.attempt) + "-termination-log";
    {
      std::ifstream f(termFile);
      std::stringstream ss;
      ss << f.rdbuf();
      message = ss.str().substr(0, 4096);
    }
    if (message.empty() && s.exit_code() != 0 &&
        json::getString(spec, "terminationMessagePolicy") == "FallbackToLogsOnError") {
      std::string path = k_.podLogDir(ns_, name_, uid_) + "/" + std::string(json::getString(spec, "name")) +
                         "/" + std::to_string(rec.attempt) + ".log";
      std::ifstream f(path);
      std::stringstream ss;
      ss << f.rdbuf();
      LogOptions lo;
      lo.tail_lines = 80;
      message = renderLog(parseCriLog(ss.str()), lo);
      if (message.size() > 2048) message = message.substr(message.size() - 2048);
    }
    json::Document t;
    t.SetObject();
    auto& a = t.GetAllocator();
    t.AddMember("exitCode", s.exit_code(), a);
    t.AddMember("reason", json::str(reason, a), a);
    if (!message.empty()) t.AddMember("message", json::str(message, a), a);
    // A container that never started (its command is not in the image) has no start time:
    // leave it out, as upstream's zero time is (an empty string is not a time).
    if (std::string at = nanosToRfc3339(s.started_at()); !at.empty())
      t.AddMember("startedAt", json::str(at, a), a);
    if (std::string at = nanosToRfc3339(s.finished_at()); !at.empty())
      t.AddMember("finishedAt", json::str(at, a), a);
    t.AddMember("containerID", json::str(containerId(rec.id), a), a);
    rec.terminated = json::serialize(t);
    rec.finished_at = std::chrono::system_clock::time_point(std::chrono::nanoseconds(s.finished_at()));
  } else {
    rec.terminated.clear();
  }
}

void PodWorker::runProbes(const json::Value& pod, const json::Value& spec, ContainerRecord& rec) {
  if (!rec.running) return;
  if (k_.config().fake) {
    // Nothing listens in a fake container: its probes pass.
    rec.startup.ok = rec.readiness.ok = rec.liveness.ok = true;
    rec.startup.decided = rec.readiness.decided = rec.liveness.decided = true;
    return;
  }
  auto started = Steady::now();
  if (auto t = clock::parseRfc3339(rec.started_at)) {
    auto age = clock::now() - *t;
    started = Steady::now() - std::chrono::duration_cast<Steady::duration>(age);
  }
  const json::Value* startup = json::find(spec, "startupProbe");
  if (startup) {
    if (!rec.startup.ok) tickProbe(*startup, spec, rec.startup, started, &k_.runtime(), rec.id, pod_ip_);
    if (!rec.startup.ok) {
      if (rec.startup.decided && !rec.startup.ok) {
        k_.event(pod, "Warning", "Unhealthy", "Startup probe failed: " + rec.startup.last_message);
        (void)k_.runtime().stopContainer(
            rec.id, json::getInt(*json::find(pod, "spec"), "terminationGracePeriodSeconds").value_or(30));
      }
      return;  // liveness and readiness wait for startup
    }
  }
  if (const json::Value* live = json::find(spec, "livenessProbe")) {
    tickProbe(*live, spec, rec.liveness, started, &k_.runtime(), rec.id, pod_ip_);
    if (rec.liveness.decided && !rec.liveness.ok) {
      k_.event(pod, "Warning", "Unhealthy", "Liveness probe failed: " + rec.liveness.last_message);
      k_.event(pod, "Normal", "Killing",
               "Container " + std::string(json::getString(spec, "name")) +
                   " failed liveness probe, will be restarted");
      int64_t grace =
          json::getInt(*live, "terminationGracePeriodSeconds")
              .value_or(json::getInt(*json::find(pod, "spec"), "terminationGracePeriodSeconds").value_or(30));
      (void)k_.runtime().stopContainer(rec.id, grace);
      rec.liveness = ProbeState{};
    }
  }
  if (const json::Value* ready = json::find(spec, "readinessProbe")) {
    tickProbe(*ready, spec, rec.readiness, started, &k_.runtime(), rec.id, pod_ip_);
    if (rec.readiness.decided && !rec.readiness.ok)
      containerEvent(pod, rec, "Warning", "Unhealthy",
                     "Readiness probe failed: " + rec.readiness.last_message);
  }
}

void PodWorker::syncContainers(const json::Value& pod, bool init) {
  std::string policy = restartPolicy(pod);
  auto& records = init ? init_ : containers_;
  for (auto& spec : containersOf(pod, init).GetArray()) {
    std::string cname(json::getString(spec, "name"));
    auto& rec = records[cname];
    refreshContainer(spec, rec);
    const bool sidecar = init && isSidecar(spec);
    // Init containers are started one at a time, in order: a regular one must have exited
    // 0 and a sidecar must have started before the next one starts. Once the pod is
    // initialized, regular init containers never run again; sidecars are kept running.
    if (init && !sidecar && initialized_) continue;
    const bool waitForIt = init && !(sidecar && initialized_);
    // A sidecar restarts whatever the pod's policy; regular init containers run to success.
    bool restartable = sidecar || policy == "Always" || (policy == "OnFailure" && rec.exit_code != 0);
    if (init && !sidecar && policy == "Always") restartable = rec.exit_code != 0;
    if (sidecar && sidecars_stopped_) restartable = false;
    if (rec.running) {
      runProbes(pod, spec, rec);
      if (init && !sidecar) return;                     // wait for this init container to finish
      if (waitForIt && !rec.startedWith(spec)) return;  // wait for the sidecar's startup
      continue;
    }
    if (rec.exited) {
      if (init && !sidecar && rec.exit_code == 0) continue;  // done: next init container
      if (!restartable) {
        if (waitForIt && !sidecar) return;  // the pod fails (computed in the status)
        continue;
      }
      // Upstream's doBackOff: the first exit restarts at once; later ones wait 10 s,
      // doubling to 5 min, counted from the exit; an entry idle 10 min starts over.
      auto idle = rec.finished_at - rec.backoff_updated;
      bool fresh = rec.backoff_seconds == 0 || idle > std::chrono::seconds(2 * kMaxBackoffSeconds);
      if (!fresh && clock::now() - rec.finished_at < std::chrono::seconds(rec.backoff_seconds)) {
        rec.waiting_reason = "CrashLoopBackOff";
        rec.waiting_message = "back-off " + std::to_string(rec.backoff_seconds) +
                              "s restarting failed container=" + cname + " pod=" + name_ + "_" + ns_ + "(" +
                              uid_ + ")";
        containerEvent(pod, rec, "Warning", "BackOff",
                       "Back-off restarting failed container " + cname + " in pod " + name_ + "_" + ns_ +
                           "(" + uid_ + ")");
        if (waitForIt) return;
        continue;
      }
      rec.backoff_seconds =
          fresh ? kInitialBackoffSeconds : std::min(rec.backoff_seconds * 2, kMaxBackoffSeconds);
      rec.backoff_updated = rec.finished_at;
      rec.events_sent.clear();  // a new attempt
      // The finished attempt becomes lastState.
      rec.last_terminated = rec.terminated;
      rec.exited = false;
    } else if (sidecar && sidecars_stopped_) {
      continue;
    }
    (void)startContainer(pod, spec, rec, init);
    if (waitForIt) return;  // started (or failed to): look again on the next pass
  }
}

}  // namespace shepherd::kubelet
