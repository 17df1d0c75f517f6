#include "kubelet-lite/fake_runtime.h"

#include <cstdio>
#include <thread>

#include "common/clock.h"
#include "common/wait.h"

namespace shepherd::kubelet {

namespace {

int64_t nowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now().time_since_epoch()).count();
}

bool labelsMatch(const google::protobuf::Map<std::string, std::string>& selector,
                 const google::protobuf::Map<std::string, std::string>& labels) {
  for (const auto& [k, v] : selector) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

ApiError notFound(const std::string& what, const std::string& id) {
  return ApiError::make(404, "NotFound", what + " \"" + id + "\" not found");
}

}  // namespace

FakeRuntime::FakeRuntime(FakeRuntimeOptions options)
    : options_(std::move(options)), images_(options_.images.begin(), options_.images.end()) {}

std::optional<ApiError> FakeRuntime::enter(const std::string& call, const std::string& what) {
  if (options_.record_calls) calls_.push_back(what.empty() ? call : call + " " + what);
  auto it = failures_.find(call);
  if (it == failures_.end()) return std::nullopt;
  ApiError e = it->second;
  failures_.erase(it);
  return e;
}

std::string FakeRuntime::newIdLocked() {
  // The node's index, then a counter: unique on the node and across a fleet.
  char id[32];
  std::snprintf(id, sizeof id, "%04zx%012llx", options_.node_index & 0xffff,
                static_cast<unsigned long long>(++next_id_));
  return id;
}

void FakeRuntime::changed() {
  ++changes_;
  cv_.notify_all();
}

Result<runtime::v1::VersionResponse> FakeRuntime::version() {
  MutexLock g(mu_);
  if (auto e = enter("version", "")) return *e;
  runtime::v1::VersionResponse v;
  v.set_version("0.1.0");
  v.set_runtime_name("fake");
  v.set_runtime_version("0.1.0");
  v.set_runtime_api_version("v1");
  return v;
}

Result<runtime::v1::StatusResponse> FakeRuntime::status() {
  MutexLock g(mu_);
  if (auto e = enter("status", "")) return *e;
  runtime::v1::StatusResponse r;
  for (const char* type : {"RuntimeReady", "NetworkReady"}) {
    auto* c = r.mutable_status()->add_conditions();
    c->set_type(type);
    c->set_status(true);
  }
  return r;
}

Result<std::string> FakeRuntime::runPodSandbox(const runtime::v1::PodSandboxConfig& config) {
  if (options_.sandbox_delay.count() > 0) std::this_thread::sleep_for(options_.sandbox_delay);
  MutexLock g(mu_);
  if (auto e = enter("runPodSandbox", config.metadata().name())) return *e;
  std::string id = newIdLocked();
  Sandbox& sb = sandboxes_[id];
  sb.config = config;
  sb.info.set_id(id);
  *sb.info.mutable_metadata() = config.metadata();
  sb.info.set_state(runtime::v1::SANDBOX_READY);
  sb.info.set_created_at(nowNanos());
  *sb.info.mutable_labels() = config.labels();
  *sb.info.mutable_annotations() = config.annotations();
  // Host-network pods have the node's address (the kubelet fills it in); others one from
  // the node's /24 (hosts .2 to .254, then round again).
  if (config.linux().security_context().namespace_options().network() != runtime::v1::NODE) {
    size_t i = options_.node_index;
    next_host_ = next_host_ % 253 + 1;
    sb.ip = "10." + std::to_string(128 + (i / 256) % 128) + "." + std::to_string(i % 256) + "." +
            std::to_string(next_host_ + 1);
  }
  changed();
  return id;
}

Status FakeRuntime::stopPodSandbox(const std::string& id) {
  MutexLock g(mu_);
  if (auto e = enter("stopPodSandbox", id)) return *e;
  auto it = sandboxes_.find(id);
  if (it == sandboxes_.end()) return okStatus();  // idempotent, as CRI's
  it->second.info.set_state(runtime::v1::SANDBOX_NOTREADY);
  for (auto& [cid, c] : containers_)
    if (c.info.pod_sandbox_id() == id && c.info.state() != runtime::v1::CONTAINER_EXITED)
      exitLocked(c, 137, "");
  changed();
  return okStatus();
}

Status FakeRuntime::removePodSandbox(const std::string& id) {
  MutexLock g(mu_);
  if (auto e = enter("removePodSandbox", id)) return *e;
  for (auto it = containers_.begin(); it != containers_.end();)
    it = it->second.info.pod_sandbox_id() == id ? containers_.erase(it) : std::next(it);
  sandboxes_.erase(id);
  changed();
  return okStatus();
}

Result<runtime::v1::PodSandboxStatusResponse> FakeRuntime::podSandboxStatus(const std::string& id) {
  MutexLock g(mu_);
  if (auto e = enter("podSandboxStatus", id)) return *e;
  auto it = sandboxes_.find(id);
  if (it == sandboxes_.end()) return notFound("sandbox", id);
  const Sandbox& sb = it->second;
  runtime::v1::PodSandboxStatusResponse r;
  auto* st = r.mutable_status();
  st->set_id(id);
  *st->mutable_metadata() = sb.info.metadata();
  st->set_state(sb.info.state());
  st->set_created_at(sb.info.created_at());
  st->mutable_network()->set_ip(sb.ip);
  *st->mutable_labels() = sb.info.labels();
  *st->mutable_annotations() = sb.info.annotations();
  return r;
}

Result<std::vector<runtime::v1::PodSandbox>> FakeRuntime::listPodSandbox(
    const runtime::v1::PodSandboxFilter& filter) {
  MutexLock g(mu_);
  if (auto e = enter("listPodSandbox", "")) return *e;
  std::vector<runtime::v1::PodSandbox> out;
  for (const auto& [id, sb] : sandboxes_) {
    if (!filter.id().empty() && filter.id() != id) continue;
    if (filter.has_state() && filter.state().state() != sb.info.state()) continue;
    if (!labelsMatch(filter.label_selector(), sb.info.labels())) continue;
    out.push_back(sb.info);
  }
  return out;
}

Result<std::string> FakeRuntime::createContainer(const std::string& sandbox_id,
                                                 const runtime::v1::ContainerConfig& config,
                                                 const runtime::v1::PodSandboxConfig&) {
  MutexLock g(mu_);
  if (auto e = enter("createContainer", config.metadata().name())) return *e;
  auto sb = sandboxes_.find(sandbox_id);
  if (sb == sandboxes_.end()) return notFound("sandbox", sandbox_id);
  if (sb->second.info.state() != runtime::v1::SANDBOX_READY)
    return ApiError::internal("sandbox \"" + sandbox_id + "\" is not ready");
  if (!imagePresentLocked(config.image().image())) return notFound("image", config.image().image());
  std::string id = newIdLocked();
  Container& c = containers_[id];
  c.info.set_id(id);
  c.info.set_pod_sandbox_id(sandbox_id);
  *c.info.mutable_metadata() = config.metadata();
  *c.info.mutable_image() = config.image();
  c.info.set_image_ref(config.image().image());
  c.info.set_state(runtime::v1::CONTAINER_CREATED);
  c.info.set_created_at(nowNanos());
  *c.info.mutable_labels() = config.labels();
  *c.info.mutable_annotations() = config.annotations();
  c.log_path = config.log_path();
  changed();
  return id;
}

Status FakeRuntime::startContainer(const std::string& id) {
  runtime::v1::ContainerConfig config;
  runtime::v1::PodSandboxConfig sandboxConfig;
  ExitOnStart hook;
  {
    MutexLock g(mu_);
    if (auto e = enter("startContainer", id)) return *e;
    auto it = containers_.find(id);
    if (it == containers_.end()) return notFound("container", id);
    Container& c = it->second;
    if (c.info.state() != runtime::v1::CONTAINER_CREATED)
      return ApiError::internal("container \"" + id + "\" is not in created state");
    c.info.set_state(runtime::v1::CONTAINER_RUNNING);
    c.started_at = nowNanos();
    changed();
    if (!exit_on_start_) return okStatus();
    hook = exit_on_start_;
    *config.mutable_metadata() = c.info.metadata();
    *config.mutable_image() = c.info.image();
    *config.mutable_labels() = c.info.labels();
    *config.mutable_annotations() = c.info.annotations();
    if (auto sb = sandboxes_.find(c.info.pod_sandbox_id()); sb != sandboxes_.end())
      sandboxConfig = sb->second.config;
  }
  if (auto code = hook(config, sandboxConfig)) {
    MutexLock g(mu_);
    auto it = containers_.find(id);
    if (it != containers_.end() && it->second.info.state() == runtime::v1::CONTAINER_RUNNING)
      exitLocked(it->second, *code, "");
  }
  return okStatus();
}

Status FakeRuntime::stopContainer(const std::string& id, int64_t timeout_seconds) {
  MutexLock g(mu_);
  if (auto e = enter("stopContainer", id)) return *e;
  auto it = containers_.find(id);
  if (it == containers_.end()) return notFound("container", id);
  if (it->second.info.state() != runtime::v1::CONTAINER_EXITED)
    exitLocked(it->second, timeout_seconds == 0 ? 137 : 143, "");
  return okStatus();
}

Status FakeRuntime::removeContainer(const std::string& id) {
  MutexLock g(mu_);
  if (auto e = enter("removeContainer", id)) return *e;
  containers_.erase(id);  // idempotent, as CRI's
  changed();
  return okStatus();
}

Result<runtime::v1::ContainerStatus> FakeRuntime::containerStatus(const std::string& id) {
  MutexLock g(mu_);
  if (auto e = enter("containerStatus", id)) return *e;
  auto it = containers_.find(id);
  if (it == containers_.end()) return notFound("container", id);
  const Container& c = it->second;
  runtime::v1::ContainerStatus s;
  s.set_id(id);
  *s.mutable_metadata() = c.info.metadata();
  s.set_state(c.info.state());
  s.set_created_at(c.info.created_at());
  s.set_started_at(c.started_at);
  s.set_finished_at(c.finished_at);
  s.set_exit_code(c.exit_code);
  *s.mutable_image() = c.info.image();
  s.set_image_ref(c.info.image_ref());
  s.set_reason(c.reason);
  *s.mutable_labels() = c.info.labels();
  *s.mutable_annotations() = c.info.annotations();
  s.set_log_path(c.log_path);
  return s;
}

Result<std::vector<runtime::v1::Container>> FakeRuntime::listContainers(
    const runtime::v1::ContainerFilter& filter) {
  MutexLock g(mu_);
  if (auto e = enter("listContainers", "")) return *e;
  std::vector<runtime::v1::Container> out;
  for (const auto& [id, c] : containers_) {
    if (!filter.id().empty() && filter.id() != id) continue;
    if (filter.has_state() && filter.state().state() != c.info.state()) continue;
    if (!filter.pod_sandbox_id().empty() && filter.pod_sandbox_id() != c.info.pod_sandbox_id()) continue;
    if (!labelsMatch(filter.label_selector(), c.info.labels())) continue;
    out.push_back(c.info);
  }
  return out;
}

Result<runtime::v1::ExecSyncResponse> FakeRuntime::execSync(const std::string& id,
                                                            const std::vector<std::string>&, int64_t) {
  MutexLock g(mu_);
  if (auto e = enter("execSync", id)) return *e;
  auto it = containers_.find(id);
  if (it == containers_.end()) return notFound("container", id);
  if (it->second.info.state() != runtime::v1::CONTAINER_RUNNING)
    return ApiError::internal("container \"" + id + "\" is not running");
  return runtime::v1::ExecSyncResponse();
}

Result<std::string> FakeRuntime::exec(const runtime::v1::ExecRequest&) {
  return ApiError::internal("exec is not supported by the fake runtime");
}

Result<std::string> FakeRuntime::attach(const runtime::v1::AttachRequest&) {
  return ApiError::internal("attach is not supported by the fake runtime");
}

Result<std::string> FakeRuntime::portForward(const runtime::v1::PortForwardRequest&) {
  return ApiError::internal("portForward is not supported by the fake runtime");
}

Result<runtime::v1::Image> FakeRuntime::imageStatus(const std::string& image) {
  MutexLock g(mu_);
  if (auto e = enter("imageStatus", image)) return *e;
  runtime::v1::Image img;
  if (!imagePresentLocked(image)) return img;  // id "": not present
  img.set_id(image);
  img.add_repo_tags(image);
  img.mutable_spec()->set_image(image);
  return img;
}

bool FakeRuntime::imagePresentLocked(const std::string& image) const {
  return options_.any_image || images_.count(image) > 0;
}

void FakeRuntime::exitLocked(Container& c, int exit_code, const std::string& reason) {
  c.info.set_state(runtime::v1::CONTAINER_EXITED);
  c.exit_code = exit_code;
  c.finished_at = nowNanos();
  c.reason = !reason.empty() ? reason : exit_code == 0 ? "Completed" : "Error";
  changed();
}

void FakeRuntime::addImage(const std::string& image) {
  MutexLock g(mu_);
  images_.insert(image);
  changed();
}

void FakeRuntime::failNext(const std::string& call, ApiError error) {
  MutexLock g(mu_);
  failures_.emplace(call, std::move(error));
}

Status FakeRuntime::exitContainer(const std::string& id, int exit_code, const std::string& reason) {
  MutexLock g(mu_);
  auto it = containers_.find(id);
  if (it == containers_.end()) return notFound("container", id);
  exitLocked(it->second, exit_code, reason);
  return okStatus();
}

void FakeRuntime::setExitOnStart(ExitOnStart hook) {
  MutexLock g(mu_);
  exit_on_start_ = std::move(hook);
}

std::vector<std::string> FakeRuntime::calls() const {
  MutexLock g(mu_);
  return calls_;
}

std::string FakeRuntime::containerId(const std::string& pod_uid, const std::string& name) const {
  MutexLock g(mu_);
  std::string best;
  int64_t newest = -1;
  for (const auto& [id, c] : containers_) {
    auto sb = sandboxes_.find(c.info.pod_sandbox_id());
    if (sb == sandboxes_.end() || sb->second.info.metadata().uid() != pod_uid) continue;
    if (c.info.metadata().name() != name || c.info.created_at() < newest) continue;
    newest = c.info.created_at();
    best = id;
  }
  return best;
}

size_t FakeRuntime::sandboxCount() const {
  MutexLock g(mu_);
  return sandboxes_.size();
}

size_t FakeRuntime::containerCount() const {
  MutexLock g(mu_);
  return containers_.size();
}

// waitForChange reads `changes_` only under mu_; the analysis cannot follow the reference.
bool FakeRuntime::waitFor(const std::function<bool()>& pred,
                          std::chrono::milliseconds timeout) NO_THREAD_SAFETY_ANALYSIS {
  return waitForChange(mu_, cv_, changes_, pred, timeout);
}

}  // namespace shepherd::kubelet
