// CriClient: kubelet-lite's connection to the container runtime (containerd's CRI,
// runtime.v1 over a unix socket), the production RuntimeService. Each call has a
// deadline and returns a Result; gRPC errors become ApiError with the gRPC status in the
// message.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "api.grpc.pb.h"
#include "common/api_error.h"
#include "kubelet-lite/runtime_service.h"

namespace shepherd::kubelet {

// Thread-safety: the stubs are thread-safe; so is every method.
class CriClient final : public RuntimeService {
 public:
  explicit CriClient(const std::string& endpoint);  // "unix:///path/to/containerd.sock"

  Result<runtime::v1::VersionResponse> version() override;
  Result<runtime::v1::StatusResponse> status() override;
  Result<std::string> runPodSandbox(const runtime::v1::PodSandboxConfig& config) override;
  Status stopPodSandbox(const std::string& id) override;
  Status removePodSandbox(const std::string& id) override;
  Result<runtime::v1::PodSandboxStatusResponse> podSandboxStatus(const std::string& id) override;
  Result<std::vector<runtime::v1::PodSandbox>> listPodSandbox(
      const runtime::v1::PodSandboxFilter& filter) override;
  Result<std::string> createContainer(const std::string& sandbox_id,
                                      const runtime::v1::ContainerConfig& config,
                                      const runtime::v1::PodSandboxConfig& sandbox_config) override;
  Status startContainer(const std::string& id) override;
  Status stopContainer(const std::string& id, int64_t timeout_seconds) override;
  Status removeContainer(const std::string& id) override;
  Result<runtime::v1::ContainerStatus> containerStatus(const std::string& id) override;
  Result<std::vector<runtime::v1::Container>> listContainers(
      const runtime::v1::ContainerFilter& filter) override;
  Result<runtime::v1::ExecSyncResponse> execSync(const std::string& id, const std::vector<std::string>& cmd,
                                                 int64_t timeout_seconds) override;
  // Streaming sessions: the URL on the runtime's streaming server that serves them.
  Result<std::string> exec(const runtime::v1::ExecRequest& request) override;
  Result<std::string> attach(const runtime::v1::AttachRequest& request) override;
  Result<std::string> portForward(const runtime::v1::PortForwardRequest& request) override;
  // The image's record, or an empty optional-like Image (id "") when it is not present.
  Result<runtime::v1::Image> imageStatus(const std::string& image) override;

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<runtime::v1::RuntimeService::Stub> runtime_;
  std::unique_ptr<runtime::v1::ImageService::Stub> images_;
};

}  // namespace shepherd::kubelet
