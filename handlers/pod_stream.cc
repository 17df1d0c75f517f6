// pods/exec, pods/attach and pods/portforward: the API server's end of kubectl exec,
// attach, cp, run -it and port-forward. Options are validated here, the pod's kubelet is
// dialled with the API server's kubelet-client identity, and then:
//  - a SPDY/3.1 client (kubectl 1.27-1.29, and newer ones falling back) is joined to the
//    kubelet's SPDY session byte for byte, as upstream's upgrade-aware proxy does;
//  - a WebSocket client of exec/attach (kubectl 1.30+: v5.channel.k8s.io) is translated
//    to SPDY towards the kubelet (stream/remotecommand_translator.h), as upstream's
//    StreamTranslatorHandler does; older WebSocket protocols (channel.k8s.io .. v4) are
//    joined to the kubelet like SPDY, since the runtime's streaming server speaks them;
//  - a WebSocket client of port-forward (kubectl 1.31+: SPDY/3.1+portforward.k8s.io)
//    carries SPDY inside WebSocket messages; the frames are unwrapped towards the kubelet
//    (stream/websocket_tunnel.h), as upstream's TunnelingHandler does.
#include <algorithm>

#include "common/log.h"
#include "common/url.h"
#include "handlers/pod_target.h"
#include "handlers/rest_handler.h"
#include "handlers/status.h"
#include "net/http/relay.h"
#include "net/http/upgrade_dialer.h"
#include "net/stream/remotecommand_translator.h"
#include "net/stream/spdy_framer.h"
#include "net/stream/websocket.h"
#include "net/stream/websocket_tunnel.h"

namespace shepherd::handlers {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool headerHasToken(const http::Request& req, std::string_view name, std::string_view token) {
  for (auto& [k, v] : req.headers) {
    if (k != name) continue;
    std::string value = lower(v);
    size_t pos = 0;
    while (pos <= value.size()) {
      size_t comma = value.find(',', pos);
      if (comma == std::string::npos) comma = value.size();
      std::string_view part = std::string_view(value).substr(pos, comma - pos);
      while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
      while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
      if (part == token) return true;
      pos = comma + 1;
    }
  }
  return false;
}

// Dials the kubelet; anything but a switch of protocols is an error for the client.
Result<http::UpgradeResult> dialKubelet(const http::UpgradeRequest& up, const std::string& sub,
                                        const std::string& pod) {
  auto dialed = http::dialUpgrade(up);
  if (!dialed) return dialed.error();
  if (dialed->response.status != 101)
    return kubeletError(dialed->response.status, dialed->response.body, "pods/" + sub, pod);
  return dialed;
}

}  // namespace

void RestHandler::podStream(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                            const RequestScope& s) {
  const std::string& sub = s.subresource;  // exec, attach, portforward
  if (req.method != "GET" && req.method != "POST")
    return resp->send(errorResponse(ApiError::methodNotSupported("", "pods/" + sub, req.method)));
  bool websocket = headerHasToken(req, "upgrade", "websocket");
  bool spdy = headerHasToken(req, "upgrade", "spdy/3.1");
  if (!websocket && !spdy) return resp->send(errorResponse(ApiError::badRequest("Upgrade request required")));

  // Options (PodExecOptions, PodAttachOptions, PodPortForwardOptions) from the query.
  bool stdin = req.queryBool("stdin"), stdout = req.queryBool("stdout"), stderr = req.queryBool("stderr"),
       tty = req.queryBool("tty");
  std::vector<std::string> command;
  std::vector<int> ports;
  for (auto& [k, v] : req.query) {
    if (k == "command") command.push_back(v);
    if (k == "ports") {
      char* end = nullptr;
      long p = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || p < 1 || p > 65535)
        return resp->send(errorResponse(ApiError::badRequest("invalid port \"" + v + "\": must be 1-65535")));
      ports.push_back(static_cast<int>(p));
    }
  }
  if (sub != "portforward") {
    if (!stdin && !stdout && !stderr)
      return resp->send(
          errorResponse(ApiError::badRequest("you must specify at least 1 of stdin, stdout, stderr")));
    if (sub == "exec" && command.empty())
      return resp->send(errorResponse(ApiError::badRequest("you must specify at least 1 command")));
    if (tty) stderr = false;  // a terminal has one output stream (as upstream's kubelet)
  }

  auto obj = s.store->get(s.ns, s.name);
  if (!obj) return resp->send(errorResponse(obj.error()));
  json::Document pod;
  pod.Parse(obj.value()->json.data(), obj.value()->json.size());
  std::string container;
  if (sub != "portforward") {
    auto chosen = podContainer(pod, std::string(req.queryValue("container")), s.name);
    if (!chosen) return resp->send(errorResponse(chosen.error()));
    container = *chosen;
  }
  std::string nodeName(json::getStringPath(pod, {"spec", "nodeName"}));
  if (nodeName.empty())
    return resp->send(
        errorResponse(ApiError::badRequest("pod " + s.name + " does not have a host assigned")));
  auto endpoint = kubeletEndpoint(registry_, nodeName);
  if (!endpoint) return resp->send(errorResponse(endpoint.error()));

  // The kubelet's path, with the query names upstream's API server uses towards it.
  std::string target = sub == "portforward" ? "/portForward/" + urlEncode(s.ns) + "/" + urlEncode(s.name)
                                            : "/" + sub + "/" + urlEncode(s.ns) + "/" + urlEncode(s.name) +
                                                  "/" + urlEncode(container);
  std::string query;
  auto add = [&](const std::string& kv) { query += (query.empty() ? "?" : "&") + kv; };
  for (auto& c : command) add("command=" + urlEncode(c));
  if (stdin) add("input=1");
  if (stdout) add("output=1");
  if (stderr) add("error=1");
  if (tty) add("tty=1");
  for (int p : ports) add("port=" + std::to_string(p));

  http::UpgradeRequest up;
  up.host = endpoint->host;
  up.port = endpoint->port;
  up.tls = kubelet_tls_;
  up.method = "POST";
  up.target = target + query;

  std::vector<std::string> offered = stream::offeredSubprotocols(req);
  auto offers = [&](std::string_view p) {
    return std::find(offered.begin(), offered.end(), p) != offered.end();
  };
  std::string key(req.header("sec-websocket-key"));
  if (websocket && (key.empty() || req.header("sec-websocket-version") != "13"))
    return resp->send(errorResponse(ApiError::badRequest("invalid WebSocket handshake")));

  if (websocket && sub == "portforward" && offers(stream::kPortForwardTunnelProtocol)) {
    up.headers = {{"Connection", "Upgrade"},
                  {"Upgrade", "SPDY/3.1"},
                  {"X-Stream-Protocol-Version", "portforward.k8s.io"}};
    auto dialed = dialKubelet(up, sub, s.name);
    if (!dialed) return resp->send(errorResponse(dialed.error()));
    auto kubelet = dialed->stream;
    return resp->upgrade(
        stream::websocketAccept(key, std::string(stream::kPortForwardTunnelProtocol)),
        [kubelet, idle = streaming_idle_timeout_seconds_](std::shared_ptr<http::ByteStream> c) {
          if (!c) return kubelet->close();
          stream::tunnelWebSocketToStream(std::move(c), kubelet, idle);
        });
  }
  if (websocket && sub != "portforward" && offers(stream::kRemoteCommandV5)) {
    // v5 is newer than the runtime's streaming server: translate to SPDY towards it.
    stream::RemoteCommandOptions ro;
    ro.stdin = stdin;
    ro.stdout = stdout;
    ro.stderr = stderr;
    ro.tty = tty;
    ro.idle_timeout_seconds = streaming_idle_timeout_seconds_;
    up.headers = {{"Connection", "Upgrade"},
                  {"Upgrade", "SPDY/3.1"},
                  {"X-Stream-Protocol-Version", "v4.channel.k8s.io"}};
    auto dialed = dialKubelet(up, sub, s.name);
    if (!dialed) return resp->send(errorResponse(dialed.error()));
    auto kubelet = dialed->stream;
    return resp->upgrade(stream::websocketAccept(key, std::string(stream::kRemoteCommandV5)),
                         [kubelet, ro](std::shared_ptr<http::ByteStream> c) {
                           if (!c) return kubelet->close();
                           stream::translateRemoteCommand(std::move(c), kubelet, ro);
                         });
  }

  // Otherwise the client's own negotiation (SPDY, or WebSocket with channel.k8s.io up to
  // v4, which the runtime's streaming server speaks) goes to the kubelet unchanged and the
  // two connections are joined byte for byte.
  up.method = websocket ? "GET" : "POST";
  for (auto& [k, v] : req.headers)
    if (k == "connection" || k == "upgrade" || k == "x-stream-protocol-version" ||
        k.rfind("sec-websocket-", 0) == 0)
      up.headers.emplace_back(k, v);
  auto dialed = dialKubelet(up, sub, s.name);
  if (!dialed) return resp->send(errorResponse(dialed.error()));
  http::Response switching{101, {}, ""};
  for (auto& [k, v] : dialed->response.headers) {
    std::string name = lower(k);
    if (name == "connection" || name == "upgrade" || name == "x-stream-protocol-version" ||
        name.rfind("sec-websocket-", 0) == 0)
      switching.headers.emplace_back(k, v);
  }
  auto kubelet = dialed->stream;
  resp->upgrade(std::move(switching), [kubelet, spdy, idle = streaming_idle_timeout_seconds_](
                                          std::shared_ptr<http::ByteStream> client) {
    if (!client) return kubelet->close();
    http::RelayOptions ro;
    ro.idle_timeout_seconds = idle;
    if (spdy) ro.activity_meter = stream::spdyActivityMeter;  // pings are not activity
    http::relay(std::move(client), kubelet, std::move(ro));
  });
}

}  // namespace shepherd::handlers
