// RuntimeService: what kubelet-lite asks of a container runtime, in the shape of CRI's
// runtime.v1 RuntimeService and ImageService (only the calls kubelet-lite makes). The
// pod workers, housekeeping, probes and the kubelet port's streaming are written against
// it; `CriClient` (containerd over gRPC) and `FakeRuntime` (in memory, for --runtime=fake
// and unit tests) implement it. Messages are CRI's own (api.proto).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api.pb.h"
#include "common/api_error.h"

namespace shepherd::kubelet {

// Thread-safety: every implementation may be called from any thread, concurrently.
// Errors are ApiError: code 404 when the sandbox, container or image does not exist.
class RuntimeService {
 public:
  virtual ~RuntimeService() = default;

  // Runtime identity and health.
  virtual Result<runtime::v1::VersionResponse> version() = 0;
  virtual Result<runtime::v1::StatusResponse> status() = 0;

  // Pod sandboxes.
  virtual Result<std::string> runPodSandbox(const runtime::v1::PodSandboxConfig& config) = 0;
  virtual Status stopPodSandbox(const std::string& id) = 0;
  virtual Status removePodSandbox(const std::string& id) = 0;
  virtual Result<runtime::v1::PodSandboxStatusResponse> podSandboxStatus(const std::string& id) = 0;
  virtual Result<std::vector<runtime::v1::PodSandbox>> listPodSandbox(
      const runtime::v1::PodSandboxFilter& filter) = 0;

  // Containers.
  virtual Result<std::string> createContainer(const std::string& sandbox_id,
                                              const runtime::v1::ContainerConfig& config,
                                              const runtime::v1::PodSandboxConfig& sandbox_config) = 0;
  virtual Status startContainer(const std::string& id) = 0;
  virtual Status stopContainer(const std::string& id, int64_t timeout_seconds) = 0;
  virtual Status removeContainer(const std::string& id) = 0;
  virtual Result<runtime::v1::ContainerStatus> containerStatus(const std::string& id) = 0;
  virtual Result<std::vector<runtime::v1::Container>> listContainers(
      const runtime::v1::ContainerFilter& filter) = 0;
  virtual Result<runtime::v1::ExecSyncResponse> execSync(const std::string& id,
                                                         const std::vector<std::string>& cmd,
                                                         int64_t timeout_seconds) = 0;

  // Streaming sessions: the URL on the runtime's streaming server that serves them.
  virtual Result<std::string> exec(const runtime::v1::ExecRequest& request) = 0;
  virtual Result<std::string> attach(const runtime::v1::AttachRequest& request) = 0;
  virtual Result<std::string> portForward(const runtime::v1::PortForwardRequest& request) = 0;

  // ImageService: the image's record, or an Image with id "" when it is not present.
  virtual Result<runtime::v1::Image> imageStatus(const std::string& image) = 0;
};

}  // namespace shepherd::kubelet
