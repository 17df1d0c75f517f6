#include "tests/support/etcd_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/free_port.h"
#include "tests/support/process.h"

namespace shepherd::testsupport {

namespace {

using SteadyClock = std::chrono::steady_clock;

// GET /health over a raw socket: true once etcd answers {"health":"true"}.
bool healthy(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  timeval tv{};
  tv.tv_sec = 1;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = false;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string req = "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      std::string answer;
      char buf[512];
      ssize_t n;
      while ((n = recv(fd, buf, sizeof buf, 0)) > 0) answer.append(buf, static_cast<size_t>(n));
      ok = answer.find(" 200 ") != std::string::npos &&
           answer.find("\"health\":\"true\"") != std::string::npos;
    }
  }
  close(fd);
  return ok;
}

std::string tail(const std::string& path, size_t bytes = 3000) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  return all.size() > bytes ? all.substr(all.size() - bytes) : all;
}

}  // namespace

std::string findEtcd() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/etcd";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string EtcdProcess::start(const EtcdProcessOptions& options) {
  stop();
  std::string bin = findEtcd();
  if (bin.empty())
    return "etcd is not on PATH. The etcd tests need a real etcd and do not skip: install Debian's "
           "etcd-server (scripts/setup-deps.sh does).";
  dir_ = options.dir;
  owns_dir_ = dir_.empty();
  if (owns_dir_) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/shepherd-etcd-XXXXXX";
    if (!mkdtemp(tmpl.data())) return "cannot create a temporary directory for etcd";
    dir_ = tmpl;
  }
  std::string log, error;
  for (int attempt = 0; attempt < 3; ++attempt) {  // a "free" port can be taken before etcd binds it
    client_port_ = freeLoopbackPort();
    int peer_port = freeLoopbackPort();
    if (client_port_ == 0 || peer_port == 0 || client_port_ == peer_port) continue;
    std::string c = "http://127.0.0.1:" + std::to_string(client_port_);
    std::string p = "http://127.0.0.1:" + std::to_string(peer_port);
    std::string data = dir_ + "/etcd-" + std::to_string(attempt);
    log = data + ".log";
    std::vector<std::string> args = {bin,
                                     "--name=" + options.name,
                                     "--data-dir=" + data,
                                     "--listen-client-urls=" + c,
                                     "--advertise-client-urls=" + c,
                                     "--listen-peer-urls=" + p,
                                     "--initial-advertise-peer-urls=" + p,
                                     "--initial-cluster=" + options.name + "=" + p,
                                     "--enable-grpc-gateway=true",
                                     "--log-level=warn"};
    if (options.progress_notify_interval_ms > 0)
      args.push_back("--experimental-watch-progress-notify-interval=" +
                     std::to_string(options.progress_notify_interval_ms) + "ms");
    args.insert(args.end(), options.extra_flags.begin(), options.extra_flags.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0) {
      pid_ = -1;
      error = "fork failed";
      break;
    }
    if (pid_ == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      execv(argv[0], argv.data());
      _exit(127);
    }
    // etcd tells nobody when it is ready: ask /health every 50 ms until it answers,
    // waiting in between on the process, so that an exit (e.g. its port was taken: try
    // again) is seen at once.
    auto deadline = SteadyClock::now() + std::chrono::milliseconds(options.startup_timeout_ms);
    while (SteadyClock::now() < deadline) {
      if (healthy(client_port_)) return "";
      int status;
      if (waitChildExit(pid_, std::chrono::milliseconds(50), status)) {
        pid_ = -1;
        break;
      }
    }
    stopProcess();
  }
  if (error.empty())
    error =
        "etcd did not become healthy; the end of its log (" + log + "):\n" + (log.empty() ? "" : tail(log));
  stop();
  return error;
}

void EtcdProcess::stopProcess() {
  stopChild(pid_, SIGTERM, std::chrono::seconds(5));
  pid_ = -1;
}

void EtcdProcess::stop() {
  stopProcess();
  if (owns_dir_ && !dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
    owns_dir_ = false;
  }
}

}  // namespace shepherd::testsupport
