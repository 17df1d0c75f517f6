#include "kubelet-lite/pod_worker.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/clock.h"
#include "common/log.h"
#include "kubelet-lite/cgroups.h"
#include "kubelet-lite/cri_log.h"
#include "kubelet-lite/volumes.h"
#include "meta/quantity.h"

namespace shepherd::kubelet {

namespace fs = std::filesystem;
using Steady = std::chrono::steady_clock;

namespace {

constexpr int kMaxBackoffSeconds = 300;
constexpr int kInitialBackoffSeconds = 10;

std::string nanosToRfc3339(int64_t ns) {
  if (ns <= 0) return "";
  return clock::rfc3339(std::chrono::system_clock::time_point(std::chrono::nanoseconds(ns)));
}

const json::Value& containersOf(const json::Value& pod, bool init) {
  static const json::Value empty(rapidjson::kArrayType);
  const json::Value* cs = json::findPath(pod, {"spec", init ? "initContainers" : "containers"});
  return cs && cs->IsArray() ? *cs : empty;
}

std::string restartPolicy(const json::Value& pod) {
  return std::string(json::getStringPath(pod, {"spec", "restartPolicy"}, "Always"));
}

int64_t milliOf(const json::Value& c, const char* kind, const char* res) {
  const json::Value* q = json::findPath(c, {"resources", kind, res});
  if (!q) return 0;
  auto v = meta::quantityValue(*q);
  return v ? static_cast<int64_t>(*v * 1000.0L + 0.5L) : 0;
}

}  // namespace

PodWorker::PodWorker(Kubelet& kubelet, const client::Object& pod) : k_(kubelet), pod_(pod) {
  ns_ = json::getStringPath(*pod, {"metadata", "namespace"});
  name_ = json::getStringPath(*pod, {"metadata", "name"});
  uid_ = json::getStringPath(*pod, {"metadata", "uid"});
  key_ = ns_ + "/" + name_;
  thread_ = std::thread([this] { run(); });
}

PodWorker::~PodWorker() {
  stop();
}

void PodWorker::update(const client::Object& pod) {
  std::lock_guard<std::mutex> g(mu_);
  pod_ = pod;
  if (!own_rv_.empty() && json::getStringPath(*pod, {"metadata", "resourceVersion"}) == own_rv_) return;
  updated_ = true;
  cv_.notify_all();
}

void PodWorker::removed() {
  std::lock_guard<std::mutex> g(mu_);
  removed_ = true;
  updated_ = true;
  cv_.notify_all();
}

void PodWorker::stop() {
  stop_ = true;
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PodWorker::run() {
  while (!stop_.load()) {
    bool more = true;
    try {
      more = sync();
    } catch (const std::exception& e) {
      LOG_ERROR("kubelet-lite: pod " << key_ << ": sync failed: " << e.what());
    }
    if (!more) break;
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, std::chrono::milliseconds(k_.config().fake ? 500 : 1000),
                 [&] { return updated_ || stop_.load(); });
    updated_ = false;
  }
  done_ = true;
}

runtime::v1::PodSandboxConfig PodWorker::sandboxConfig(const json::Value& pod) {
  runtime::v1::PodSandboxConfig c;
  auto* md = c.mutable_metadata();
  md->set_name(name_);
  md->set_namespace_(ns_);
  md->set_uid(uid_);
  md->set_attempt(0);
  bool hostNetwork = json::getBool(*json::find(pod, "spec"), "hostNetwork");
  std::string hostname = podHostname(pod);
  if (!hostNetwork) c.set_hostname(hostname);  // host-network pods keep the node's name
  c.set_log_directory(k_.podLogDir(ns_, name_, uid_));
  auto* dns = c.mutable_dns_config();
  std::string_view policy = json::getStringPath(pod, {"spec", "dnsPolicy"}, "ClusterFirst");
  if (policy != "None") {
    // No cluster DNS service exists yet, so ClusterFirst resolves like Default: the node's.
    for (const auto& s : k_.config().dns_servers) dns->add_servers(s);
    for (const auto& s : k_.config().dns_searches) dns->add_searches(s);
    for (const auto& s : k_.config().dns_options) dns->add_options(s);
  }
  if (const json::Value* dc = json::findPath(pod, {"spec", "dnsConfig"})) {
    if (const json::Value* ns = json::find(*dc, "nameservers"); ns && ns->IsArray())
      for (auto& x : ns->GetArray()) dns->add_servers(std::string(json::view(x)));
    if (const json::Value* se = json::find(*dc, "searches"); se && se->IsArray())
      for (auto& x : se->GetArray()) dns->add_searches(std::string(json::view(x)));
    if (const json::Value* op = json::find(*dc, "options"); op && op->IsArray())
      for (auto& x : op->GetArray()) {
        std::string o(json::getString(x, "name"));
        if (json::find(x, "value")) o += ":" + std::string(json::getString(x, "value"));
        dns->add_options(o);
      }
  }
  for (const char* list : {"containers", "initContainers"})
    for (auto& ctr : containersOf(pod, std::string(list) == "initContainers").GetArray())
      if (const json::Value* ports = json::find(ctr, "ports"); ports && ports->IsArray())
        for (auto& p : ports->GetArray()) {
          auto hp = json::getInt(p, "hostPort");
          if (!hp || *hp <= 0) continue;
          auto* pm = c.add_port_mappings();
          pm->set_container_port(static_cast<int32_t>(json::getInt(p, "containerPort").value_or(0)));
          pm->set_host_port(static_cast<int32_t>(*hp));
          std::string_view proto = json::getString(p, "protocol", "TCP");
          pm->set_protocol(proto == "UDP"    ? runtime::v1::UDP
                           : proto == "SCTP" ? runtime::v1::SCTP
                                             : runtime::v1::TCP);
          pm->set_host_ip(std::string(json::getString(p, "hostIP")));
        }
  (*c.mutable_labels())["io.kubernetes.pod.name"] = name_;
  (*c.mutable_labels())["io.kubernetes.pod.namespace"] = ns_;
  (*c.mutable_labels())["io.kubernetes.pod.uid"] = uid_;
  (*c.mutable_labels())["io.shepherd.node"] = k_.config().node_name;
  auto* linux = c.mutable_linux();
  linux->set_cgroup_parent(podCgroupParent(k_.config().cgroup_root, pod, uid_));
  auto* sc = linux->mutable_security_context();
  auto* nsOpts = sc->mutable_namespace_options();
  nsOpts->set_network(hostNetwork ? runtime::v1::NODE : runtime::v1::POD);
  nsOpts->set_pid(json::getBool(*json::find(pod, "spec"), "hostPID") ? runtime::v1::NODE
                                                                     : runtime::v1::CONTAINER);
  nsOpts->set_ipc(json::getBool(*json::find(pod, "spec"), "hostIPC") ? runtime::v1::NODE : runtime::v1::POD);
  if (auto u = json::findPath(pod, {"spec", "securityContext", "runAsUser"}); u && u->IsInt64())
    sc->mutable_run_as_user()->set_value(u->GetInt64());
  return c;
}

bool PodWorker::adopt(const json::Value& pod) {
  // After a kubelet-lite restart: reuse the ready sandbox and the containers it has.
  runtime::v1::PodSandboxFilter f;
  (*f.mutable_label_selector())["io.kubernetes.pod.uid"] = uid_;
  auto sandboxes = k_.runtime().listPodSandbox(f);
  if (!sandboxes) return false;
  int64_t newest = -1;
  for (const auto& sb : sandboxes.value())
    if (sb.state() == runtime::v1::SANDBOX_READY && sb.created_at() > newest) {
      newest = sb.created_at();
      sandbox_id_ = sb.id();
    }
  if (sandbox_id_.empty()) return false;
  auto st = k_.runtime().podSandboxStatus(sandbox_id_);
  if (st) pod_ip_ = st->status().network().ip();
  start_time_ = nanosToRfc3339(newest);
  runtime::v1::ContainerFilter cf;
  cf.set_pod_sandbox_id(sandbox_id_);
  auto cs = k_.runtime().listContainers(cf);
  if (cs) {
    for (const auto& c : cs.value()) {
      std::string cname = c.metadata().name();
      bool isInit = false;
      for (auto& ic : containersOf(pod, true).GetArray())
        if (json::getString(ic, "name") == cname) isInit = true;
      auto& rec = isInit ? init_[cname] : containers_[cname];
      if (!rec.id.empty() && c.metadata().attempt() < rec.attempt) continue;
      rec.id = c.id();
      rec.attempt = c.metadata().attempt();
      rec.started_once = true;
    }
  }
  LOG_INFO("kubelet-lite: adopted sandbox " << sandbox_id_.substr(0, 12) << " of " << key_);
  return true;
}

Status PodWorker::ensureSandbox(const json::Value& pod) {
  if (!sandbox_id_.empty()) {
    auto st = k_.runtime().podSandboxStatus(sandbox_id_);
    if (st && st->status().state() == runtime::v1::SANDBOX_READY) return okStatus();
    // The sandbox died (e.g. the node rebooted): start over with a fresh one.
    LOG_WARN("kubelet-lite: sandbox of " << key_ << " is not ready; recreating");
    (void)k_.runtime().stopPodSandbox(sandbox_id_);
    (void)k_.runtime().removePodSandbox(sandbox_id_);
    sandbox_id_.clear();
    for (auto* m : {&init_, &containers_})
      for (auto& [n, r] : *m) {
        r.id.clear();
        r.running = false;
      }
  }
  if (Steady::now() < next_sandbox_try_) return ApiError::make(500, "ContainerCreating", sandbox_error_);
  std::error_code ec;
  if (!k_.config().fake) fs::create_directories(k_.podLogDir(ns_, name_, uid_), ec);
  auto cfg = sandboxConfig(pod);
  auto id = k_.runtime().runPodSandbox(cfg);
  if (!id) {
    sandbox_error_ = id.error().message;
    next_sandbox_try_ = Steady::now() + std::chrono::seconds(5);
    k_.event(pod, "Warning", "FailedCreatePodSandBox", "Failed to create pod sandbox: " + sandbox_error_);
    return ApiError::make(500, "ContainerCreating", sandbox_error_);
  }
  sandbox_id_ = id.value();
  sandbox_error_.clear();
  auto st = k_.runtime().podSandboxStatus(sandbox_id_);
  if (st) pod_ip_ = st->status().network().ip();
  if (json::getBool(*json::find(pod, "spec"), "hostNetwork")) pod_ip_ = k_.config().node_ip;
  if (start_time_.empty()) start_time_ = clock::rfc3339(clock::now());
  return okStatus();
}

std::string PodWorker::containerId(const std::string& id) const {
  return k_.config().runtime_name + "://" + id;
}

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
  auto vols = onHost ? prepareVolumes(k_.podDir(uid_), facts, k_.dataLookup()) : PreparedVolumes{};
  if (!vols) {
    rec.waiting_reason = "ContainerCreating";
    rec.waiting_message = vols.error().message;
    containerEvent(pod, rec, "Warning", "FailedMount", "MountVolume.SetUp failed: " + vols.error().message);
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
    bool restartable = policy == "Always" || (policy == "OnFailure" && rec.exit_code != 0);
    if (init && policy == "Always") restartable = rec.exit_code != 0;  // init containers run to success
    if (rec.running) {
      runProbes(pod, spec, rec);
      if (init) return;  // wait for this init container to finish
      continue;
    }
    if (rec.exited) {
      if (init && rec.exit_code == 0) continue;  // done: next init container
      if (!restartable) {
        if (init) return;  // the pod fails (computed in the status)
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
        if (init) return;
        continue;
      }
      rec.backoff_seconds =
          fresh ? kInitialBackoffSeconds : std::min(rec.backoff_seconds * 2, kMaxBackoffSeconds);
      rec.backoff_updated = rec.finished_at;
      rec.events_sent.clear();  // a new attempt
      // The finished attempt becomes lastState.
      rec.last_terminated = rec.terminated;
      rec.exited = false;
    }
    if (!rec.id.empty() && !rec.exited && !rec.running) {
      // Created but not running (start failed earlier): start again.
    }
    auto st = startContainer(pod, spec, rec, init);
    if (st && init) return;  // started: wait for it
    if (!st && init) return;
  }
}

bool PodWorker::terminate(const json::Value& pod, bool final_delete) {
  int64_t grace =
      json::getInt(*json::find(pod, "metadata"), "deletionGracePeriodSeconds")
          .value_or(json::getInt(*json::find(pod, "spec"), "terminationGracePeriodSeconds").value_or(30));
  {
    // preStop hooks (exec) first, then stop every container within the grace period.
    std::vector<std::thread> stoppers;
    for (auto* m : {&containers_, &init_})
      for (auto& [cname, rec] : *m) {
        if (rec.id.empty()) continue;
        std::string id = rec.id;
        const json::Value* hook = nullptr;
        for (auto& spec : containersOf(pod, m == &init_).GetArray())
          if (json::getString(spec, "name") == cname)
            hook = json::findPath(spec, {"lifecycle", "preStop", "exec", "command"});
        std::vector<std::string> hookCmd;
        if (hook && hook->IsArray())
          for (auto& x : hook->GetArray()) hookCmd.emplace_back(json::view(x));
        k_.event(pod, "Normal", "Killing", "Stopping container " + cname);
        stoppers.emplace_back([this, id, grace, hookCmd] {
          if (!hookCmd.empty()) (void)k_.runtime().execSync(id, hookCmd, grace);
          (void)k_.runtime().stopContainer(id, grace);
        });
      }
    for (auto& t : stoppers) t.join();
    if (sandbox_id_.empty()) {
      runtime::v1::PodSandboxFilter f;
      (*f.mutable_label_selector())["io.kubernetes.pod.uid"] = uid_;
      if (auto sbs = k_.runtime().listPodSandbox(f))
        for (const auto& sb : sbs.value()) {
          (void)k_.runtime().stopPodSandbox(sb.id());
          (void)k_.runtime().removePodSandbox(sb.id());
        }
    } else {
      (void)k_.runtime().stopPodSandbox(sandbox_id_);
      (void)k_.runtime().removePodSandbox(sandbox_id_);
    }
    if (!k_.config().fake) {
      removePodCgroups(podCgroupParent(k_.config().cgroup_root, pod, uid_));
      teardownVolumes(k_.podDir(uid_));
    }
  }
  if (!final_delete) return true;
  // The node confirms: grace 0, only for this incarnation of the pod (uid precondition).
  std::string body =
      R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"preconditions":{"uid":")" + uid_ +
      R"("}})";
  auto r =
      k_.api().del("/api/v1/namespaces/" + ns_ + "/pods/" + name_, body, client::RequestOptions{15000, 3});
  if (!r && r.error().code != 404 && r.error().code != 409) {
    LOG_WARN("kubelet-lite: final delete of " << key_ << " failed: " << r.error().message);
    return true;  // keep trying
  }
  return false;
}

bool PodWorker::sync() {
  client::Object obj;
  bool removed = false;
  {
    std::lock_guard<std::mutex> g(mu_);
    obj = pod_;
    removed = removed_;
  }
  const json::Value& pod = *obj;
  if (removed) {
    terminate(pod, false);
    return false;
  }
  if (json::findPath(pod, {"metadata", "deletionTimestamp"})) return terminate(pod, true);
  if (!adopted_) {
    adopted_ = true;
    adopt(pod);
  }
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  bool terminal = phase == "Succeeded" || phase == "Failed";
  if (terminal) {
    // Finished pods keep their status; their containers and sandbox are stopped.
    if (!sandbox_id_.empty()) {
      terminate(pod, false);
      sandbox_id_.clear();
    }
    return true;
  }
  // activeDeadlineSeconds: the pod fails once it has been active that long.
  if (auto deadline = json::getInt(*json::find(pod, "spec"), "activeDeadlineSeconds");
      deadline && !start_time_.empty()) {
    auto started = clock::parseRfc3339(start_time_);
    if (started && clock::now() - *started > std::chrono::seconds(*deadline)) {
      failed_reason_ = "DeadlineExceeded";
      failed_message_ = "Pod was active on the node longer than the specified deadline";
      k_.event(pod, "Normal", "DeadlineExceeded", failed_message_);
      for (auto* m : {&containers_, &init_})
        for (auto& [n, rec] : *m)
          if (!rec.id.empty()) (void)k_.runtime().stopContainer(rec.id, 0);
      for (auto& spec : containersOf(pod, false).GetArray())
        refreshContainer(spec, containers_[std::string(json::getString(spec, "name"))]);
      writeStatus(pod);
      return true;
    }
  }
  auto sb = ensureSandbox(pod);
  if (!sb) {
    for (auto& spec : containersOf(pod, false).GetArray()) {
      auto& rec = containers_[std::string(json::getString(spec, "name"))];
      rec.waiting_reason = "ContainerCreating";
    }
    writeStatus(pod);
    return true;
  }
  syncContainers(pod, true);
  bool initDone = true;
  for (auto& spec : containersOf(pod, true).GetArray()) {
    auto& rec = init_[std::string(json::getString(spec, "name"))];
    if (!(rec.exited && rec.exit_code == 0)) initDone = false;
  }
  if (initDone) {
    syncContainers(pod, false);
  } else {
    for (auto& spec : containersOf(pod, false).GetArray()) {
      auto& rec = containers_[std::string(json::getString(spec, "name"))];
      if (rec.id.empty()) rec.waiting_reason = "PodInitializing";
    }
  }
  writeStatus(pod);
  return true;
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
      started = !json::find(spec, "startupProbe") || rec.startup.ok;
      ready = started && (json::find(spec, "readinessProbe") ? rec.readiness.ok : true);
      if (init) ready = false;
    } else if (rec.exited && rec.waiting_reason != "CrashLoopBackOff") {
      json::Document t;
      t.Parse(rec.terminated.data(), rec.terminated.size());
      state.AddMember("terminated", json::Value(t, a), a);
      ready = init && rec.exit_code == 0;
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
  // Init containers.
  json::Value initStatuses(rapidjson::kArrayType);
  bool initDone = true, initFailed = false;
  for (auto& spec : containersOf(pod, true).GetArray()) {
    auto& rec = init_[std::string(json::getString(spec, "name"))];
    initStatuses.PushBack(containerStatus(spec, rec, true), a);
    if (!(rec.exited && rec.exit_code == 0)) initDone = false;
    if (rec.exited && rec.exit_code != 0 && policy == "Never") initFailed = true;
  }
  json::Value statuses(rapidjson::kArrayType);
  int running = 0, waiting = 0, succeeded = 0, failed = 0, total = 0, ready = 0;
  for (auto& spec : containersOf(pod, false).GetArray()) {
    auto& rec = containers_[std::string(json::getString(spec, "name"))];
    json::Value cs = containerStatus(spec, rec, false);
    ++total;
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
  } else if (total > 0 && succeeded + failed == total) {
    if (policy == "Always")
      phase = "Running";
    else if (failed == 0)
      phase = "Succeeded";
    else
      phase = policy == "Never" ? "Failed" : "Running";
  }
  st.AddMember("phase", json::str(phase, a), a);
  if (!failed_reason_.empty()) {
    st.AddMember("reason", json::str(failed_reason_, a), a);
    st.AddMember("message", json::str(failed_message_, a), a);
  }
  // Conditions (PodScheduled is the scheduler's, kept as it is).
  json::Value conds(rapidjson::kArrayType);
  bool scheduled = false;
  if (const json::Value* existing = json::findPath(pod, {"status", "conditions"});
      existing && existing->IsArray())
    for (auto& c : existing->GetArray())
      if (json::getString(c, "type") == "PodScheduled") {
        conds.PushBack(json::Value(c, a), a);
        scheduled = true;
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

void PodWorker::writeStatus(const json::Value& pod) {
  std::string status = buildStatus(pod);
  if (status == last_status_) return;  // written only when it changes
  auto r = k_.api().patch(
      "/api/v1/namespaces/" + ns_ + "/pods/" + name_ + "/status?fieldManager=kubelet-lite",
      R"({"status":)" + status + "}", "application/merge-patch+json", client::RequestOptions{10000, 1});
  if (r) {
    last_status_ = status;
    std::lock_guard<std::mutex> g(mu_);
    own_rv_ = std::string(json::getStringPath(*r, {"metadata", "resourceVersion"}));
  } else if (r.error().code != 404) {
    LOG_WARN("kubelet-lite: status of " << key_ << " not written: " << r.error().message);
  }
}

}  // namespace shepherd::kubelet
