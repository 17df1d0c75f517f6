// FakeRuntime: a container runtime in memory (the shape of upstream's fake
// RuntimeService/ImageService in cri-api). Sandboxes have ids, labels, a state and a fake
// IP from the node's /24; containers are created, started, stopped and removed with CRI's
// states, exit codes and times, but run no process. It backs `--runtime=fake` (the real
// pod workers over it), the fake fleet (one per simulated node) and unit tests, which
// steer it with the knobs below (fail the next call, make a container exit) and wait on
// it without sleeping.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "kubelet-lite/runtime_service.h"

namespace shepherd::kubelet {

struct FakeRuntimeOptions {
  // The node's position in a fleet: its pods' IPs are 10.<128 + (i/256)%128>.<i%256>.x.
  size_t node_index = 0;
  // Images present on the node; with any_image every image is.
  std::vector<std::string> images;
  bool any_image = false;
  // How long runPodSandbox takes (a real node's sandbox and network set-up).
  std::chrono::milliseconds sandbox_delay{0};
  // Keep calls() (off for long simulations: it grows with every call).
  bool record_calls = true;
};

// Thread-safety: one mutex guards all state; every method may be called from any thread.
// The exit-on-start hook and waitFor's predicate are called without it held.
class FakeRuntime final : public RuntimeService {
 public:
  explicit FakeRuntime(FakeRuntimeOptions options = {});

  Result<runtime::v1::VersionResponse> version() override;  // "fake" 0.1.0
  Result<runtime::v1::StatusResponse> status() override;    // always ready
  Result<std::string> runPodSandbox(const runtime::v1::PodSandboxConfig& config) override;
  Status stopPodSandbox(const std::string& id) override;    // its containers exit too
  Status removePodSandbox(const std::string& id) override;  // with its containers
  Result<runtime::v1::PodSandboxStatusResponse> podSandboxStatus(const std::string& id) override;
  Result<std::vector<runtime::v1::PodSandbox>> listPodSandbox(
      const runtime::v1::PodSandboxFilter& filter) override;
  Result<std::string> createContainer(const std::string& sandbox_id,
                                      const runtime::v1::ContainerConfig& config,
                                      const runtime::v1::PodSandboxConfig& sandbox_config) override;
  Status startContainer(const std::string& id) override;
  // Exits at once: code 137 with timeout 0 (SIGKILL), else 143 (SIGTERM).
  Status stopContainer(const std::string& id, int64_t timeout_seconds) override;
  Status removeContainer(const std::string& id) override;
  Result<runtime::v1::ContainerStatus> containerStatus(const std::string& id) override;
  Result<std::vector<runtime::v1::Container>> listContainers(
      const runtime::v1::ContainerFilter& filter) override;
  // Succeeds (exit code 0, no output) in a running container: the fake has no processes.
  Result<runtime::v1::ExecSyncResponse> execSync(const std::string& id, const std::vector<std::string>& cmd,
                                                 int64_t timeout_seconds) override;
  // Not supported: no streaming server (500).
  Result<std::string> exec(const runtime::v1::ExecRequest& request) override;
  Result<std::string> attach(const runtime::v1::AttachRequest& request) override;
  Result<std::string> portForward(const runtime::v1::PortForwardRequest& request) override;
  Result<runtime::v1::Image> imageStatus(const std::string& image) override;

  // Knobs for tests and simulations.
  void addImage(const std::string& image);
  // The next call of this method (its name as above, e.g. "startContainer") fails.
  void failNext(const std::string& call, ApiError error);
  // A created or running container exits now with this code (reason "Completed" for 0,
  // else "Error" unless given).
  Status exitContainer(const std::string& id, int exit_code, const std::string& reason = "");
  // When set, a container for which the hook returns a code exits with it as soon as it
  // has started (e.g. init containers that complete at once).
  using ExitOnStart = std::function<std::optional<int>(const runtime::v1::ContainerConfig&,
                                                       const runtime::v1::PodSandboxConfig&)>;
  void setExitOnStart(ExitOnStart hook);

  // Inspection for tests.
  // Every call so far, in order: "<method> <id or name>".
  std::vector<std::string> calls() const;
  // The id of the newest container named `name` in a sandbox of the pod with this uid
  // ("" if none).
  std::string containerId(const std::string& pod_uid, const std::string& name) const;
  size_t sandboxCount() const;
  size_t containerCount() const;
  // Waits until `pred` holds, checking it again after every change to the runtime; false
  // after `timeout`. What tests wait on instead of sleeping.
  bool waitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout);

 private:
  struct Sandbox {
    runtime::v1::PodSandbox info;
    runtime::v1::PodSandboxConfig config;
    std::string ip;
  };
  struct Container {
    runtime::v1::Container info;
    int64_t started_at = 0, finished_at = 0;
    int32_t exit_code = 0;
    std::string reason, log_path;
  };

  // Under mu_: records the call and takes a failure queued for it.
  std::optional<ApiError> enter(const std::string& call, const std::string& what) REQUIRES(mu_);
  void changed() REQUIRES(mu_);  //: wakes waitFor
  std::string newIdLocked() REQUIRES(mu_);
  void exitLocked(Container& c, int exit_code, const std::string& reason) REQUIRES(mu_);
  bool imagePresentLocked(const std::string& image) const REQUIRES(mu_);

  FakeRuntimeOptions options_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  uint64_t changes_ GUARDED_BY(mu_) = 0;
  uint64_t next_id_ GUARDED_BY(mu_) = 0;
  uint32_t next_host_ GUARDED_BY(mu_) = 0;  // last host number handed out in the node's /24
  std::set<std::string> images_ GUARDED_BY(mu_);
  std::map<std::string, Sandbox> sandboxes_ GUARDED_BY(mu_);
  std::map<std::string, Container> containers_ GUARDED_BY(mu_);
  std::multimap<std::string, ApiError> failures_ GUARDED_BY(mu_);
  std::vector<std::string> calls_ GUARDED_BY(mu_);
  ExitOnStart exit_on_start_ GUARDED_BY(mu_);
};

}  // namespace shepherd::kubelet
