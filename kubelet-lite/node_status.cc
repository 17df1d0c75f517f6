#include "kubelet-lite/node_status.h"

#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

#include "common/clock.h"
#include "common/log.h"

namespace shepherd::kubelet {

MachineResources detectMachine(const std::string& root_dir) {
  MachineResources m;
  m.cpus = std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN));
  std::ifstream mem("/proc/meminfo");
  std::string key;
  long long kb = 0;
  std::string unit;
  while (mem >> key >> kb >> unit) {
    if (key == "MemTotal:") {
      m.memory_bytes = kb * 1024;
      break;
    }
  }
  struct statvfs vfs {};
  if (statvfs(root_dir.c_str(), &vfs) == 0)
    m.ephemeral_bytes = static_cast<int64_t>(vfs.f_blocks) * static_cast<int64_t>(vfs.f_frsize);
  return m;
}

NodeAgent::NodeAgent(client::Client& client, NodeConfig cfg, MachineResources machine)
    : client_(client), cfg_(std::move(cfg)), machine_(machine) {
  ready_since_ = clock::rfc3339(clock::now());
}

NodeAgent::~NodeAgent() {
  stop();
}

std::string NodeAgent::statusJson() {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  std::string cpu = cfg_.cpu.empty() ? std::to_string(machine_.cpus) : cfg_.cpu;
  std::string memory =
      cfg_.memory.empty() ? std::to_string(machine_.memory_bytes / 1024) + "Ki" : cfg_.memory;
  std::string eph = cfg_.ephemeral_storage.empty() ? std::to_string(machine_.ephemeral_bytes / 1024) + "Ki"
                                                   : cfg_.ephemeral_storage;
  auto resources = [&] {
    json::Value r(rapidjson::kObjectType);
    r.AddMember("cpu", json::str(cpu, a), a);
    r.AddMember("memory", json::str(memory, a), a);
    r.AddMember("ephemeral-storage", json::str(eph, a), a);
    r.AddMember("pods", json::str(std::to_string(cfg_.max_pods), a), a);
    return r;
  };
  d.AddMember("capacity", resources(), a);
  d.AddMember("allocatable", resources(), a);
  std::string now = clock::rfc3339(clock::now());
  json::Value conds(rapidjson::kArrayType);
  auto cond = [&](const char* type, bool status, const std::string& reason, const std::string& message,
                  const std::string& since) {
    json::Value c(rapidjson::kObjectType);
    c.AddMember("type", json::str(type, a), a);
    c.AddMember("status", rapidjson::StringRef(status ? "True" : "False"), a);
    c.AddMember("lastHeartbeatTime", json::str(now, a), a);
    c.AddMember("lastTransitionTime", json::str(since, a), a);
    c.AddMember("reason", json::str(reason, a), a);
    c.AddMember("message", json::str(message, a), a);
    conds.PushBack(c, a);
  };
  cond("MemoryPressure", false, "KubeletHasSufficientMemory", "kubelet has sufficient memory available",
       ready_since_);
  cond("DiskPressure", false, "KubeletHasNoDiskPressure", "kubelet has no disk pressure", ready_since_);
  cond("PIDPressure", false, "KubeletHasSufficientPID", "kubelet has sufficient PID available", ready_since_);
  cond("Ready", ready_, ready_reason_, ready_message_, ready_since_);
  d.AddMember("conditions", conds, a);
  json::Value addrs(rapidjson::kArrayType);
  for (auto [t, v] :
       {std::pair<const char*, std::string>{"InternalIP", cfg_.internal_ip}, {"Hostname", cfg_.name}}) {
    json::Value ad(rapidjson::kObjectType);
    ad.AddMember("type", json::str(t, a), a);
    ad.AddMember("address", json::str(v, a), a);
    addrs.PushBack(ad, a);
  }
  d.AddMember("addresses", addrs, a);
  json::Value ep(rapidjson::kObjectType);
  json::Value ke(rapidjson::kObjectType);
  ke.AddMember("Port", cfg_.kubelet_port, a);
  ep.AddMember("kubeletEndpoint", ke, a);
  d.AddMember("daemonEndpoints", ep, a);
  struct utsname u {};
  uname(&u);
  json::Value info(rapidjson::kObjectType);
  info.AddMember("machineID", "", a);
  info.AddMember("systemUUID", "", a);
  info.AddMember("bootID", "", a);
  info.AddMember("kernelVersion", json::str(u.release, a), a);
  info.AddMember("osImage", "Debian GNU/Linux 12 (bookworm)", a);
  info.AddMember("containerRuntimeVersion", json::str(cfg_.runtime_version, a), a);
  info.AddMember("kubeletVersion", "v1.31.0-shepherd", a);
  info.AddMember("kubeProxyVersion", "", a);
  info.AddMember("operatingSystem", "linux", a);
  info.AddMember("architecture", "amd64", a);
  d.AddMember("nodeInfo", info, a);
  return json::serialize(d);
}

bool NodeAgent::registerNode() {
  std::string labels;
  std::map<std::string, std::string> all = cfg_.labels;
  all["kubernetes.io/hostname"] = cfg_.name;
  all["kubernetes.io/os"] = "linux";
  all["kubernetes.io/arch"] = "amd64";
  for (const auto& [k, v] : all)
    labels += (labels.empty() ? "" : ",") + json::serialize(json::Value(rapidjson::StringRef(k.c_str()))) +
              ":" + json::serialize(json::Value(rapidjson::StringRef(v.c_str())));
  std::string annotations;
  for (const auto& [k, v] : cfg_.annotations)
    annotations += (annotations.empty() ? "" : ",") +
                   json::serialize(json::Value(rapidjson::StringRef(k.c_str()))) + ":" +
                   json::serialize(json::Value(rapidjson::StringRef(v.c_str())));
  std::string status;
  {
    std::lock_guard<std::mutex> g(mu_);
    status = statusJson();
  }
  std::string body = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + cfg_.name +
                     R"(","labels":{)" + labels + R"(},"annotations":{)" + annotations +
                     R"(}},"spec":{},"status":)" + status + "}";
  auto created = client_.post("/api/v1/nodes", body, client::RequestOptions{10000, 1});
  if (created) {
    node_uid_ = json::getStringPath(created.value(), {"metadata", "uid"});
    LOG_INFO("kubelet-lite: registered node " << cfg_.name);
    return true;
  }
  if (created.error().code != 409) {
    LOG_WARN("kubelet-lite: cannot register node " << cfg_.name << ": " << created.error().message);
    return false;
  }
  // Already registered: refresh labels and status.
  auto patched =
      client_.patch("/api/v1/nodes/" + cfg_.name,
                    R"({"metadata":{"labels":{)" + labels + R"(},"annotations":{)" + annotations + "}}}",
                    "application/merge-patch+json", client::RequestOptions{10000, 1});
  if (!patched) {
    LOG_WARN("kubelet-lite: cannot update node labels: " << patched.error().message);
    return false;
  }
  node_uid_ = json::getStringPath(patched.value(), {"metadata", "uid"});
  return writeStatus();
}

bool NodeAgent::writeStatus() {
  std::string status;
  {
    std::lock_guard<std::mutex> g(mu_);
    status = statusJson();
  }
  auto r = client_.patch("/api/v1/nodes/" + cfg_.name + "/status", R"({"status":)" + status + "}",
                         "application/merge-patch+json", client::RequestOptions{10000, 1});
  if (!r) {
    LOG_WARN("kubelet-lite: node status update failed: " << r.error().message);
    return false;
  }
  return true;
}

bool NodeAgent::renewLease() {
  std::string path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/" + cfg_.name;
  std::string now = clock::rfc3339Micro(clock::now());
  // Owned by the Node, so the garbage collector removes it with the node.
  std::string body =
      R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":")" + cfg_.name +
      R"(","namespace":"kube-node-lease","ownerReferences":[{"apiVersion":"v1","kind":"Node","name":")" +
      cfg_.name + R"(","uid":")" + node_uid_ + R"("}]},"spec":{"holderIdentity":")" + cfg_.name +
      R"(","leaseDurationSeconds":)" + std::to_string(cfg_.lease_seconds) + R"(,"renewTime":")" + now +
      R"("}})";
  // PUT creates the lease when missing (leases allow create on update).
  auto r = client_.put(path, body, client::RequestOptions{10000, 1});
  if (!r) {
    LOG_WARN("kubelet-lite: lease renewal failed: " << r.error().message);
    return false;
  }
  return true;
}

bool NodeAgent::apiReadyDiffers() {
  auto node = client_.get("/api/v1/nodes/" + cfg_.name, client::RequestOptions{10000, 1});
  if (!node) return false;
  std::string ours;
  {
    std::lock_guard<std::mutex> g(mu_);
    ours = ready_ ? "True" : "False";
  }
  if (const json::Value* conds = json::findPath(*node, {"status", "conditions"}); conds && conds->IsArray())
    for (auto& c : conds->GetArray())
      if (json::getString(c, "type") == "Ready") return json::getString(c, "status") != ours;
  return true;
}

void NodeAgent::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { loop(); });
}

void NodeAgent::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NodeAgent::setReady(bool ready, const std::string& reason, const std::string& message) {
  std::lock_guard<std::mutex> g(mu_);
  if (ready == ready_ && reason == ready_reason_) return;
  ready_ = ready;
  ready_reason_ = reason;
  ready_message_ = message;
  ready_since_ = clock::rfc3339(clock::now());
  dirty_ = true;
  cv_.notify_all();
}

void NodeAgent::loop() {
  auto nextLease = std::chrono::steady_clock::now();
  auto nextStatus = std::chrono::steady_clock::now() + std::chrono::seconds(cfg_.status_interval_seconds);
  std::unique_lock<std::mutex> lk(mu_);
  while (!stop_) {
    auto now = std::chrono::steady_clock::now();
    bool doLease = now >= nextLease;
    bool doStatus = dirty_ || now >= nextStatus;
    dirty_ = false;
    lk.unlock();
    if (doLease) {
      renewLease();
      nextLease = std::chrono::steady_clock::now() + std::chrono::seconds(cfg_.renew_interval_seconds);
      if (!doStatus && apiReadyDiffers()) doStatus = true;
    }
    if (doStatus) {
      if (!writeStatus()) {
        std::lock_guard<std::mutex> g(mu_);
        dirty_ = true;  // try again soon
      }
      nextStatus = std::chrono::steady_clock::now() + std::chrono::seconds(cfg_.status_interval_seconds);
    }
    lk.lock();
    cv_.wait_until(lk, std::min(nextLease, nextStatus), [&] { return stop_ || dirty_; });
  }
}

}  // namespace shepherd::kubelet
