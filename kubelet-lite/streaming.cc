#include "kubelet-lite/streaming.h"

#include <algorithm>

#include "common/json.h"
#include "common/log.h"
#include "kubelet-lite/kubelet.h"
#include "net/http/relay.h"
#include "net/http/upgrade_dialer.h"
#include "net/stream/spdy_framer.h"

namespace shepherd::kubelet {

namespace {

bool flag(const http::Request& req, std::string_view key) {
  std::string_view v = req.queryValue(key);
  return v == "1" || v == "true";
}

// The running container's runtime ID ("containerd://<id>" in its status), or "".
std::string runningContainerId(const json::Value& pod, const std::string& container) {
  for (const char* list : {"containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"}) {
    const json::Value* statuses = json::findPath(pod, {"status", list});
    if (!statuses || !statuses->IsArray()) continue;
    for (auto& cs : statuses->GetArray()) {
      if (json::getString(cs, "name") != container || !json::findPath(cs, {"state", "running"})) continue;
      std::string id(json::getString(cs, "containerID"));
      auto sep = id.find("://");
      return sep == std::string::npos ? id : id.substr(sep + 3);
    }
  }
  return "";
}

// The headers of the client's upgrade request the runtime's streaming server needs.
http::Headers upgradeHeaders(const http::Request& req) {
  http::Headers out;
  for (auto& [k, v] : req.headers)
    if (k == "connection" || k == "upgrade" || k == "x-stream-protocol-version" ||
        k.rfind("sec-websocket-", 0) == 0)
      out.emplace_back(k, v);
  return out;
}

}  // namespace

void serveStreaming(Kubelet& k, const StreamingOptions& options, const std::string& kind,
                    const std::vector<std::string>& parts, http::Request& req,
                    std::shared_ptr<http::Responder> resp) {
  bool portForward = kind == "portForward";
  if (parts.size() != (portForward ? 2u : 3u))
    return resp->send(http::plainText(404, "404 page not found\n"));
  if (req.method != "GET" && req.method != "POST")
    return resp->send(http::plainText(405, "method not allowed\n"));
  const std::string &ns = parts[0], &name = parts[1];
  client::Object pod = k.currentPod(ns + "/" + name);
  if (!pod) return resp->send(http::plainText(404, "pod does not exist\n"));
  std::string podUid(json::getStringPath(*pod, {"metadata", "uid"}));

  Result<std::string> url = ApiError::internal("unreachable");
  if (portForward) {
    runtime::v1::PodSandboxFilter filter;
    (*filter.mutable_label_selector())["io.kubernetes.pod.uid"] = podUid;
    auto sandboxes = k.runtime().listPodSandbox(filter);
    if (!sandboxes) return resp->send(http::plainText(500, sandboxes.error().message + "\n"));
    std::string sandbox;
    for (auto& sb : *sandboxes)
      if (sb.state() == runtime::v1::SANDBOX_READY) sandbox = sb.id();
    if (sandbox.empty())
      return resp->send(http::plainText(404, "pod \"" + name + "\" has no running sandbox\n"));
    runtime::v1::PortForwardRequest r;
    r.set_pod_sandbox_id(sandbox);
    for (auto& [key, value] : req.query)
      if (key == "port") try {
          r.add_port(std::stoi(value));
        } catch (...) {
          return resp->send(http::plainText(400, "invalid port \"" + value + "\"\n"));
        }
    url = k.runtime().portForward(r);
  } else {
    const std::string& container = parts[2];
    std::string id = runningContainerId(*pod, container);
    if (id.empty()) return resp->send(http::plainText(404, "container not found (\"" + container + "\")\n"));
    if (kind == "exec") {
      runtime::v1::ExecRequest r;
      r.set_container_id(id);
      for (auto& [key, value] : req.query)
        if (key == "command") r.add_cmd(value);
      if (r.cmd_size() == 0) return resp->send(http::plainText(400, "missing command\n"));
      r.set_stdin(flag(req, "input"));
      r.set_stdout(flag(req, "output"));
      r.set_stderr(flag(req, "error"));
      r.set_tty(flag(req, "tty"));
      url = k.runtime().exec(r);
    } else {
      runtime::v1::AttachRequest r;
      r.set_container_id(id);
      r.set_stdin(flag(req, "input"));
      r.set_stdout(flag(req, "output"));
      r.set_stderr(flag(req, "error"));
      r.set_tty(flag(req, "tty"));
      url = k.runtime().attach(r);
    }
  }
  if (!url) return resp->send(http::plainText(url.error().code, url.error().message + "\n"));

  http::UpgradeRequest up;
  bool https = false;
  if (!http::splitUrl(*url, https, up.host, up.port, up.target) || https)
    return resp->send(http::plainText(500, "the runtime returned an unusable streaming URL " + *url + "\n"));
  up.method = req.method;
  up.headers = upgradeHeaders(req);
  auto dialed = http::dialUpgrade(up);
  if (!dialed) return resp->send(http::plainText(dialed.error().code, dialed.error().message + "\n"));
  if (dialed->response.status != 101) return resp->send(std::move(dialed->response));
  auto runtimeSide = dialed->stream;
  http::Response switching{101, {}, ""};
  for (auto& [k2, v] : dialed->response.headers) {
    std::string lower = k2;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (lower == "connection" || lower == "upgrade" || lower == "x-stream-protocol-version" ||
        lower.rfind("sec-websocket-", 0) == 0)
      switching.headers.emplace_back(k2, v);
  }
  int idle = options.idle_timeout_seconds;
  bool spdy = false;
  for (auto& [k2, v] : req.headers)
    if (k2 == "upgrade" && v.find("SPDY") != std::string::npos) spdy = true;
  std::string what = kind + " " + ns + "/" + name;
  resp->upgrade(std::move(switching),
                [runtimeSide, idle, what, spdy](std::shared_ptr<http::ByteStream> client) {
                  if (!client) {
                    runtimeSide->close();  // the client left before the switch: nothing to keep open
                    return;
                  }
                  http::RelayOptions ro;
                  ro.idle_timeout_seconds = idle;
                  if (spdy) ro.activity_meter = stream::spdyActivityMeter;
                  ro.on_end = [what] { LOG_INFO("kubelet-lite: " << what << " stream ended"); };
                  http::relay(std::move(client), runtimeSide, std::move(ro));
                });
}

}  // namespace shepherd::kubelet
