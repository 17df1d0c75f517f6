#include "kubelet-lite/probes.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace shepherd::kubelet {

namespace {

int connectWithTimeout(const std::string& ip, int port, int timeout_ms) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1) {
    close(fd);
    return -1;
  }
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  if (rc != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  pollfd p{fd, POLLOUT, 0};
  if (poll(&p, 1, timeout_ms) != 1) {
    close(fd);
    return -1;
  }
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    close(fd);
    return -1;
  }
  int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

int portOf(const json::Value& action, const json::Value& container) {
  const json::Value* port = json::find(action, "port");
  if (!port) return 0;
  if (port->IsInt64()) return static_cast<int>(port->GetInt64());
  if (port->IsString()) {  // a named container port
    if (const json::Value* ports = json::find(container, "ports"); ports && ports->IsArray())
      for (auto& p : ports->GetArray())
        if (json::getString(p, "name") == json::view(*port))
          return static_cast<int>(json::getInt(p, "containerPort").value_or(0));
    return std::atoi(std::string(json::view(*port)).c_str());
  }
  return 0;
}

}  // namespace

ProbeResult runProbe(const json::Value& probe, const json::Value& container, RuntimeService* runtime,
                     const std::string& container_id, const std::string& pod_ip, std::string& message) {
  int timeout = static_cast<int>(json::getInt(probe, "timeoutSeconds").value_or(1));
  if (const json::Value* exec = json::find(probe, "exec")) {
    std::vector<std::string> cmd;
    if (const json::Value* c = json::find(*exec, "command"); c && c->IsArray())
      for (auto& x : c->GetArray()) cmd.emplace_back(json::view(x));
    if (!runtime) return ProbeResult::Success;
    auto r = runtime->execSync(container_id, cmd, timeout);
    if (!r) {
      message = r.error().message;
      return ProbeResult::Failure;
    }
    if (r->exit_code() != 0) {
      message = "command failed with exit code " + std::to_string(r->exit_code()) + ": " + r->stdout() +
                r->stderr();
      return ProbeResult::Failure;
    }
    return ProbeResult::Success;
  }
  if (const json::Value* tcp = json::find(probe, "tcpSocket")) {
    int port = portOf(*tcp, container);
    std::string host(json::getString(*tcp, "host", pod_ip));
    int fd = connectWithTimeout(host, port, timeout * 1000);
    if (fd < 0) {
      message = "dial tcp " + host + ":" + std::to_string(port) + ": connect: connection refused";
      return ProbeResult::Failure;
    }
    close(fd);
    return ProbeResult::Success;
  }
  if (const json::Value* http = json::find(probe, "httpGet")) {
    int port = portOf(*http, container);
    std::string host(json::getString(*http, "host", pod_ip));
    std::string path(json::getString(*http, "path", "/"));
    int fd = connectWithTimeout(host, port, timeout * 1000);
    if (fd < 0) {
      message =
          "Get \"http://" + host + ":" + std::to_string(port) + path + "\": dial tcp: connection refused";
      return ProbeResult::Failure;
    }
    std::string req = "GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + std::to_string(port) +
                      "\r\nUser-Agent: kube-probe/1.31\r\nAccept: */*\r\nConnection: close\r\n";
    if (const json::Value* hs = json::find(*http, "httpHeaders"); hs && hs->IsArray())
      for (auto& h : hs->GetArray())
        req += std::string(json::getString(h, "name")) + ": " + std::string(json::getString(h, "value")) +
               "\r\n";
    req += "\r\n";
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) < 0) {
      close(fd);
      message = "write failed";
      return ProbeResult::Failure;
    }
    char buf[512];
    ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    close(fd);
    if (n < 12) {
      message = "no HTTP response";
      return ProbeResult::Failure;
    }
    buf[n] = 0;
    int code = std::atoi(buf + 9);
    if (code >= 200 && code < 400) return ProbeResult::Success;
    message = "HTTP probe failed with statuscode: " + std::to_string(code);
    return ProbeResult::Failure;
  }
  return ProbeResult::Success;  // grpc probes etc.: treated as passing
}

bool tickProbe(const json::Value& probe, const json::Value& container, ProbeState& st,
               std::chrono::steady_clock::time_point started, RuntimeService* runtime,
               const std::string& container_id, const std::string& pod_ip) {
  auto now = std::chrono::steady_clock::now();
  if (st.next_run == std::chrono::steady_clock::time_point{})
    st.next_run = started + std::chrono::seconds(json::getInt(probe, "initialDelaySeconds").value_or(0));
  if (now < st.next_run) return false;
  st.next_run =
      now + std::chrono::seconds(std::max<int64_t>(1, json::getInt(probe, "periodSeconds").value_or(10)));
  std::string msg;
  ProbeResult r = runProbe(probe, container, runtime, container_id, pod_ip, msg);
  int successThreshold = static_cast<int>(json::getInt(probe, "successThreshold").value_or(1));
  int failureThreshold = static_cast<int>(json::getInt(probe, "failureThreshold").value_or(3));
  if (r == ProbeResult::Success) {
    st.failures = 0;
    if (++st.successes >= successThreshold) {
      st.ok = true;
      st.decided = true;
    }
  } else {
    st.successes = 0;
    st.last_message = msg;
    if (++st.failures >= failureThreshold) {
      st.ok = false;
      st.decided = true;
    }
  }
  return true;
}

}  // namespace shepherd::kubelet
