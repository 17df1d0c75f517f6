// Choosing and reaching the container runtime at start-up, and what its health says about
// the node's Ready condition.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/api_error.h"
#include "kubelet-lite/fake_runtime.h"
#include "kubelet-lite/options.h"
#include "kubelet-lite/runtime_service.h"

namespace shepherd::kubelet {

struct ChosenRuntime {
  std::unique_ptr<RuntimeService> service;
  FakeRuntime* fake = nullptr;  // the same object when --runtime=fake
};

// containerd's CRI at --container-runtime-endpoint, or a FakeRuntime in which every image is
// present, a sandbox takes --fake-startup-ms, and pod IPs come from a /24 chosen by the
// node's name.
ChosenRuntime makeRuntime(const KubeletOptions& o);

struct RuntimeIdentity {
  std::string name;     // "containerd"
  std::string version;  // "containerd://1.6.20", the Node's containerRuntimeVersion
};

// Asks the runtime for its version until it answers or `timeout` passes.
Result<RuntimeIdentity> waitForRuntime(RuntimeService& runtime, std::chrono::seconds timeout);

// A fake runtime's init containers complete as soon as they start; the others run until
// stopped. `kubelet` says which containers are init containers.
void exitInitContainersOnStart(FakeRuntime& fake, Kubelet& kubelet);

struct NodeReadiness {
  bool ready = false;
  std::string reason, message;  // of the node's Ready condition
};

// The node is Ready while the runtime answers and reports RuntimeReady and NetworkReady.
NodeReadiness readinessFromRuntime(RuntimeService& runtime);

}  // namespace shepherd::kubelet
