// PodWorker: the pod's sandbox: its CRI config, adoption after a restart, creation, and
// the teardown on deletion (containers stopped, sandbox removed, final DELETE).
#include <filesystem>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "kubelet-lite/cgroups.h"
#include "kubelet-lite/pod_worker.h"
#include "kubelet-lite/pod_worker_internal.h"
#include "kubelet-lite/volumes.h"

namespace shepherd::kubelet {

namespace fs = std::filesystem;
using namespace pod_worker_detail;

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
  // A privileged container needs a privileged sandbox (HasPrivilegedContainer upstream);
  // containerd refuses it otherwise.
  for (bool init : {false, true})
    for (auto& ctr : containersOf(pod, init).GetArray())
      if (const json::Value* csc = json::find(ctr, "securityContext");
          csc && csc->IsObject() && json::getBool(*csc, "privileged"))
        sc->set_privileged(true);
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

void PodWorker::stopSidecars(const json::Value& pod, int64_t grace_seconds) {
  const json::Value& specs = containersOf(pod, true);
  for (rapidjson::SizeType i = specs.Size(); i-- > 0;) {
    const json::Value& spec = specs[i];
    if (!isSidecar(spec)) continue;
    std::string cname(json::getString(spec, "name"));
    auto it = init_.find(cname);
    if (it == init_.end() || it->second.id.empty()) continue;
    k_.event(pod, "Normal", "Killing", "Stopping container " + cname);
    std::vector<std::string> hookCmd = preStopCommand(spec);
    if (!hookCmd.empty()) (void)k_.runtime().execSync(it->second.id, hookCmd, grace_seconds);
    (void)k_.runtime().stopContainer(it->second.id, grace_seconds);
  }
}

bool PodWorker::terminate(const json::Value& pod, bool final_delete) {
  int64_t grace =
      json::getInt(*json::find(pod, "metadata"), "deletionGracePeriodSeconds")
          .value_or(json::getInt(*json::find(pod, "spec"), "terminationGracePeriodSeconds").value_or(30));
  {
    // preStop hooks (exec) first, then stop the main (and running regular init) containers
    // within the grace period, all at once; then the sidecars, last-defined first, with
    // what is left of it (at least 2 s), as upstream's termination order.
    auto begun = Steady::now();
    std::vector<std::thread> stoppers;
    for (auto* m : {&containers_, &init_})
      for (auto& spec : containersOf(pod, m == &init_).GetArray()) {
        if (m == &init_ && isSidecar(spec)) continue;
        std::string cname(json::getString(spec, "name"));
        auto it = m->find(cname);
        if (it == m->end() || it->second.id.empty()) continue;
        std::string id = it->second.id;
        std::vector<std::string> hookCmd = preStopCommand(spec);
        k_.event(pod, "Normal", "Killing", "Stopping container " + cname);
        stoppers.emplace_back([this, id, grace, hookCmd] {
          if (!hookCmd.empty()) (void)k_.runtime().execSync(id, hookCmd, grace);
          (void)k_.runtime().stopContainer(id, grace);
        });
      }
    for (auto& t : stoppers) t.join();
    int64_t spent = std::chrono::duration_cast<std::chrono::seconds>(Steady::now() - begun).count();
    stopSidecars(pod, std::max<int64_t>(2, grace - spent));
    if (final_delete) {
      // The terminal status (containers terminated, phase Succeeded or Failed) is written
      // before the final delete, so whoever holds a finalizer sees how the pod ended.
      stopped_for_deletion_ = true;
      for (auto* m : {&containers_, &init_})
        for (auto& spec : containersOf(pod, m == &init_).GetArray()) {
          auto it = m->find(std::string(json::getString(spec, "name")));
          if (it != m->end() && !it->second.id.empty()) refreshContainer(spec, it->second);
        }
      if (!writeStatus(pod)) return true;  // try again before deleting
    }
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

}  // namespace shepherd::kubelet
