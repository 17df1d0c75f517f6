#include "kubelet-lite/cri_client.h"

#include <grpcpp/grpcpp.h>

namespace shepherd::kubelet {

namespace {

using Clock = std::chrono::system_clock;

void deadline(grpc::ClientContext& ctx, std::chrono::seconds s) {
  ctx.set_deadline(Clock::now() + s);
}

ApiError fromGrpc(const char* call, const grpc::Status& st) {
  ApiError e = ApiError::internal(std::string("CRI ") + call + ": " + st.error_message());
  // NOT_FOUND is common and meaningful (e.g. a container that is already gone).
  if (st.error_code() == grpc::StatusCode::NOT_FOUND) {
    e.code = 404;
    e.reason = "NotFound";
  } else if (st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    e.code = 504;
    e.reason = "Timeout";
  } else if (st.error_code() == grpc::StatusCode::UNAVAILABLE) {
    e.code = 503;
    e.reason = "ServiceUnavailable";
  }
  return e;
}

}  // namespace

CriClient::CriClient(const std::string& endpoint) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 * 1024 * 1024);
  channel_ = grpc::CreateCustomChannel(endpoint, grpc::InsecureChannelCredentials(), args);
  runtime_ = runtime::v1::RuntimeService::NewStub(channel_);
  images_ = runtime::v1::ImageService::NewStub(channel_);
}

Result<runtime::v1::VersionResponse> CriClient::version() {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(5));
  runtime::v1::VersionRequest req;
  req.set_version("v1");
  runtime::v1::VersionResponse resp;
  auto st = runtime_->Version(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("Version", st);
  return resp;
}

Result<runtime::v1::StatusResponse> CriClient::status() {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(5));
  runtime::v1::StatusRequest req;
  runtime::v1::StatusResponse resp;
  auto st = runtime_->Status(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("Status", st);
  return resp;
}

Result<std::string> CriClient::runPodSandbox(const runtime::v1::PodSandboxConfig& config) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(120));
  runtime::v1::RunPodSandboxRequest req;
  *req.mutable_config() = config;
  runtime::v1::RunPodSandboxResponse resp;
  auto st = runtime_->RunPodSandbox(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("RunPodSandbox", st);
  return resp.pod_sandbox_id();
}

Status CriClient::stopPodSandbox(const std::string& id) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(120));
  runtime::v1::StopPodSandboxRequest req;
  req.set_pod_sandbox_id(id);
  runtime::v1::StopPodSandboxResponse resp;
  auto st = runtime_->StopPodSandbox(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("StopPodSandbox", st);
  return okStatus();
}

Status CriClient::removePodSandbox(const std::string& id) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(120));
  runtime::v1::RemovePodSandboxRequest req;
  req.set_pod_sandbox_id(id);
  runtime::v1::RemovePodSandboxResponse resp;
  auto st = runtime_->RemovePodSandbox(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("RemovePodSandbox", st);
  return okStatus();
}

Result<runtime::v1::PodSandboxStatusResponse> CriClient::podSandboxStatus(const std::string& id) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(10));
  runtime::v1::PodSandboxStatusRequest req;
  req.set_pod_sandbox_id(id);
  runtime::v1::PodSandboxStatusResponse resp;
  auto st = runtime_->PodSandboxStatus(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("PodSandboxStatus", st);
  return resp;
}

Result<std::vector<runtime::v1::PodSandbox>> CriClient::listPodSandbox(
    const runtime::v1::PodSandboxFilter& filter) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(10));
  runtime::v1::ListPodSandboxRequest req;
  *req.mutable_filter() = filter;
  runtime::v1::ListPodSandboxResponse resp;
  auto st = runtime_->ListPodSandbox(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("ListPodSandbox", st);
  return std::vector<runtime::v1::PodSandbox>(resp.items().begin(), resp.items().end());
}

Result<std::string> CriClient::createContainer(const std::string& sandbox_id,
                                               const runtime::v1::ContainerConfig& config,
                                               const runtime::v1::PodSandboxConfig& sandbox_config) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(60));
  runtime::v1::CreateContainerRequest req;
  req.set_pod_sandbox_id(sandbox_id);
  *req.mutable_config() = config;
  *req.mutable_sandbox_config() = sandbox_config;
  runtime::v1::CreateContainerResponse resp;
  auto st = runtime_->CreateContainer(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("CreateContainer", st);
  return resp.container_id();
}

Status CriClient::startContainer(const std::string& id) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(60));
  runtime::v1::StartContainerRequest req;
  req.set_container_id(id);
  runtime::v1::StartContainerResponse resp;
  auto st = runtime_->StartContainer(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("StartContainer", st);
  return okStatus();
}

Status CriClient::stopContainer(const std::string& id, int64_t timeout_seconds) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(std::max<int64_t>(timeout_seconds, 0) + 30));
  runtime::v1::StopContainerRequest req;
  req.set_container_id(id);
  req.set_timeout(timeout_seconds);
  runtime::v1::StopContainerResponse resp;
  auto st = runtime_->StopContainer(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("StopContainer", st);
  return okStatus();
}

Status CriClient::removeContainer(const std::string& id) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(60));
  runtime::v1::RemoveContainerRequest req;
  req.set_container_id(id);
  runtime::v1::RemoveContainerResponse resp;
  auto st = runtime_->RemoveContainer(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("RemoveContainer", st);
  return okStatus();
}

Result<runtime::v1::ContainerStatus> CriClient::containerStatus(const std::string& id) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(10));
  runtime::v1::ContainerStatusRequest req;
  req.set_container_id(id);
  runtime::v1::ContainerStatusResponse resp;
  auto st = runtime_->ContainerStatus(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("ContainerStatus", st);
  return resp.status();
}

Result<std::vector<runtime::v1::Container>> CriClient::listContainers(
    const runtime::v1::ContainerFilter& filter) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(10));
  runtime::v1::ListContainersRequest req;
  *req.mutable_filter() = filter;
  runtime::v1::ListContainersResponse resp;
  auto st = runtime_->ListContainers(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("ListContainers", st);
  return std::vector<runtime::v1::Container>(resp.containers().begin(), resp.containers().end());
}

Result<runtime::v1::ExecSyncResponse> CriClient::execSync(const std::string& id,
                                                          const std::vector<std::string>& cmd,
                                                          int64_t timeout_seconds) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(std::max<int64_t>(timeout_seconds, 1) + 10));
  runtime::v1::ExecSyncRequest req;
  req.set_container_id(id);
  for (const auto& c : cmd) req.add_cmd(c);
  req.set_timeout(timeout_seconds);
  runtime::v1::ExecSyncResponse resp;
  auto st = runtime_->ExecSync(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("ExecSync", st);
  return resp;
}

Result<std::string> CriClient::exec(const runtime::v1::ExecRequest& request) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(10));
  runtime::v1::ExecResponse resp;
  auto st = runtime_->Exec(&ctx, request, &resp);
  if (!st.ok()) return fromGrpc("Exec", st);
  return resp.url();
}

Result<std::string> CriClient::attach(const runtime::v1::AttachRequest& request) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(10));
  runtime::v1::AttachResponse resp;
  auto st = runtime_->Attach(&ctx, request, &resp);
  if (!st.ok()) return fromGrpc("Attach", st);
  return resp.url();
}

Result<std::string> CriClient::portForward(const runtime::v1::PortForwardRequest& request) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(10));
  runtime::v1::PortForwardResponse resp;
  auto st = runtime_->PortForward(&ctx, request, &resp);
  if (!st.ok()) return fromGrpc("PortForward", st);
  return resp.url();
}

Result<runtime::v1::Image> CriClient::imageStatus(const std::string& image) {
  grpc::ClientContext ctx;
  deadline(ctx, std::chrono::seconds(10));
  runtime::v1::ImageStatusRequest req;
  req.mutable_image()->set_image(image);
  runtime::v1::ImageStatusResponse resp;
  auto st = images_->ImageStatus(&ctx, req, &resp);
  if (!st.ok()) return fromGrpc("ImageStatus", st);
  return resp.image();
}

}  // namespace shepherd::kubelet
