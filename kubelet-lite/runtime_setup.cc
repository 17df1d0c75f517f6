#include "kubelet-lite/runtime_setup.h"

#include <thread>

#include "common/json.h"
#include "kubelet-lite/cri_client.h"
#include "kubelet-lite/kubelet.h"

namespace shepherd::kubelet {

ChosenRuntime makeRuntime(const KubeletOptions& o) {
  ChosenRuntime out;
  if (!o.fake_runtime) {
    out.service = std::make_unique<CriClient>(o.runtime_endpoint);
    return out;
  }
  FakeRuntimeOptions fo;
  fo.any_image = true;
  fo.sandbox_delay = std::chrono::milliseconds(o.fake_startup_ms);
  // The node's /24 in 10.128.0.0/9 from its name, so fake nodes in separate processes
  // hand out different pod IPs (FNV-1a).
  uint32_t h = 2166136261u;
  for (unsigned char ch : o.node_name) h = (h ^ ch) * 16777619u;
  fo.node_index = h % 32768;
  auto fake = std::make_unique<FakeRuntime>(fo);
  out.fake = fake.get();
  out.service = std::move(fake);
  return out;
}

Result<RuntimeIdentity> waitForRuntime(RuntimeService& runtime, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto v = runtime.version();
    if (v) return RuntimeIdentity{v->runtime_name(), v->runtime_name() + "://" + v->runtime_version()};
    if (std::chrono::steady_clock::now() > deadline)
      return ApiError::unavailable("container runtime is not answering: " + v.error().message);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

void exitInitContainersOnStart(FakeRuntime& fake, Kubelet& kubelet) {
  fake.setExitOnStart([&kubelet](const runtime::v1::ContainerConfig& c,
                                 const runtime::v1::PodSandboxConfig& sb) -> std::optional<int> {
    client::Object pod = kubelet.currentPod(sb.metadata().namespace_() + "/" + sb.metadata().name());
    const json::Value* inits = pod ? json::findPath(*pod, {"spec", "initContainers"}) : nullptr;
    if (inits && inits->IsArray())
      for (auto& ic : inits->GetArray())
        if (json::getString(ic, "name") == c.metadata().name()) return 0;
    return std::nullopt;
  });
}

NodeReadiness readinessFromRuntime(RuntimeService& runtime) {
  auto st = runtime.status();
  if (!st) return {false, "KubeletNotReady", "container runtime is down: " + st.error().message};
  bool runtimeReady = true, networkReady = true;
  std::string why;
  for (const auto& c : st->status().conditions()) {
    if (c.status()) continue;
    if (c.type() == "RuntimeReady") runtimeReady = false;
    if (c.type() == "NetworkReady") networkReady = false;
    why = c.type() + "=false reason:" + c.reason() + " message:" + c.message();
  }
  if (runtimeReady && networkReady) return {true, "KubeletReady", "kubelet-lite is posting ready status"};
  return {false, "KubeletNotReady", "container runtime not ready: " + why};
}

}  // namespace shepherd::kubelet
