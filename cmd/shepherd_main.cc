// shepherd: the launcher. `shepherd up` runs a whole cluster on this machine in the
// foreground: a private containerd (scripts/containerd.sh), the API server on the embedded
// store, then the scheduler, the controller manager and one real node (kubelet-lite). It
// supervises each component as a child process: it restarts one that crashes, writes an
// admin kubeconfig once the API server is ready, and stops everything cleanly on
// SIGINT/SIGTERM.
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/flags.h"

using namespace shepherd;

namespace {

std::string selfDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = 0;
  std::string p(buf);
  return p.substr(0, p.rfind('/'));
}

std::string defaultDataDir() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/shepherd";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/share/shepherd";
}

bool makeDirs(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i < path.size(); ++i) {
    cur += path[i];
    if ((path[i] == '/' && i > 0) || i + 1 == path.size())
      if (mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  return true;
}

std::string absolute(const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return p;
  return std::string(cwd) + "/" + p;
}

// GET /readyz on loopback; true on HTTP 200.
bool ready(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = false;
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const char req[] = "GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    if (write(fd, req, sizeof req - 1) == static_cast<ssize_t>(sizeof req - 1)) {
      char buf[64] = {0};
      ssize_t n = read(fd, buf, sizeof buf - 1);
      ok = n > 12 && std::strncmp(buf + 9, "200", 3) == 0;
    }
  }
  close(fd);
  return ok;
}

struct Component {
  std::string name;
  std::vector<std::string> argv;
  bool needs_api = false;  // started once the API server is ready (it needs the kubeconfig)
  pid_t pid = -1;
  int restarts = 0;
  std::chrono::steady_clock::time_point started;
};

// Starts `argv` as a child with default signal handling and its output appended to
// `logPath`; the child's pid (-1 if fork failed).
pid_t spawn(const std::vector<std::string>& argv, const std::string& logPath) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int fd = open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd >= 0) {
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
  _exit(127);
}

// Runs a helper script to completion with its output appended to `logPath`; its exit code.
int runScript(const std::vector<std::string>& argv, const std::string& logPath) {
  pid_t pid = spawn(argv, logPath);
  if (pid < 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string hostName() {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  return host;
}

void writeKubeconfig(const std::string& path, int port) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << "apiVersion: v1\nkind: Config\nclusters:\n- name: shepherd\n  cluster:\n    server: "
         "http://127.0.0.1:"
      << port
      << "\ncontexts:\n- name: shepherd\n  context:\n    cluster: shepherd\n    user: admin\n"
         "current-context: shepherd\nusers:\n- name: admin\n  user: {}\n";
  }
  chmod(tmp.c_str(), 0600);
  std::rename(tmp.c_str(), path.c_str());
}

int up(int argc, char** argv) {
  Flags flags;
  flags.define("data-dir", defaultDataDir(), "Where the cluster keeps its state, logs and kubeconfig.");
  flags.define("port", "6443", "API server port on 127.0.0.1.");
  flags.define("node", "true", "Also run containerd and one node (kubelet-lite) on this machine.", true);
  flags.define("node-name", hostName(), "The node's name.");
  flags.define("kubelet-port", "10250", "The node's kubelet port on 127.0.0.1 (container logs).");
  flags.define("pod-subnet", "10.199.0.0/24", "The node's pod network (a private bridge, no route out).");
  flags.define("bridge", "shepherd0", "Name of the node's pod bridge.");
  flags.define("containerd-script", SHEPHERD_SOURCE_DIR "/scripts/containerd.sh",
               "The script that runs the node's private containerd.");
  flags.define("help", "false", "Show this help.", true);
  std::string error;
  if (!flags.parse(argc, argv, 2, error)) {
    std::fprintf(stderr, "shepherd up: %s\nflags:\n%s", error.c_str(), flags.usage().c_str());
    return 2;
  }
  if (flags.getBool("help")) {
    std::printf("usage: shepherd up [--data-dir DIR] [--port PORT] [--node=false]\n%s",
                flags.usage().c_str());
    return 0;
  }
  std::string dir = absolute(flags.get("data-dir"));
  int port = flags.getInt("port");
  if (!makeDirs(dir + "/logs") || !makeDirs(dir + "/pki")) {
    std::fprintf(stderr, "shepherd up: cannot create %s: %s\n", dir.c_str(), std::strerror(errno));
    return 1;
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, nullptr);

  std::string bin = selfDir();
  bool withNode = flags.getBool("node");
  std::string runtimeDir = dir + "/containerd";
  std::string script = flags.get("containerd-script");
  if (withNode) {
    std::printf("shepherd: starting containerd in %s (pod network %s on %s)\n", runtimeDir.c_str(),
                flags.get("pod-subnet").c_str(), flags.get("bridge").c_str());
    std::fflush(stdout);
    int rc = runScript(
        {script, "start", runtimeDir, "--subnet", flags.get("pod-subnet"), "--bridge", flags.get("bridge")},
        dir + "/logs/containerd.log");
    if (rc != 0) {
      std::fprintf(stderr, "shepherd up: containerd did not start (exit %d); see %s/logs/containerd.log\n",
                   rc, dir.c_str());
      runScript({script, "stop", runtimeDir}, dir + "/logs/containerd.log");
      return 1;
    }
  }
  std::vector<Component> components;
  Component apiserver;
  apiserver.name = "apiserver";
  apiserver.argv = {bin + "/shepherd-apiserver", "--data-dir=" + dir + "/apiserver",
                    "--port=" + std::to_string(port), "--bind-address=127.0.0.1"};
  components.push_back(apiserver);
  std::string kubeconfig = dir + "/kubeconfig";
  Component scheduler;
  scheduler.name = "scheduler";
  scheduler.argv = {bin + "/shepherd-scheduler", "--kubeconfig=" + kubeconfig};
  scheduler.needs_api = true;
  components.push_back(scheduler);
  Component controllers;
  controllers.name = "controller-manager";
  controllers.argv = {bin + "/shepherd-controller-manager", "--kubeconfig=" + kubeconfig,
                      "--root-ca-file=" + dir + "/pki/ca.crt"};
  controllers.needs_api = true;
  components.push_back(controllers);
  if (withNode) {
    Component node;
    node.name = "kubelet";
    node.argv = {bin + "/kubelet-lite",
                 "--kubeconfig=" + kubeconfig,
                 "--hostname-override=" + flags.get("node-name"),
                 "--port=" + flags.get("kubelet-port"),
                 "--container-runtime-endpoint=unix://" + runtimeDir + "/containerd.sock",
                 "--root-dir=" + dir + "/kubelet"};
    node.needs_api = true;
    components.push_back(node);
  }
  auto startComponent = [&](Component& c) {
    c.pid = spawn(c.argv, dir + "/logs/" + c.name + ".log");
    c.started = std::chrono::steady_clock::now();
    std::printf("shepherd: started %s (pid %d), log %s/logs/%s.log\n", c.name.c_str(), c.pid, dir.c_str(),
                c.name.c_str());
    std::fflush(stdout);
  };
  for (auto& c : components)
    if (!c.needs_api) startComponent(c);

  bool announced = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  timespec tick{0, 200 * 1000 * 1000};
  while (true) {
    siginfo_t info;
    int sig = sigtimedwait(&set, &info, &tick);
    if (sig == SIGINT || sig == SIGTERM) break;
    // Reap and restart crashed components, with a back-off that grows per crash.
    int status;
    pid_t dead;
    while ((dead = waitpid(-1, &status, WNOHANG)) > 0) {
      for (auto& c : components) {
        if (c.pid != dead) continue;
        std::fprintf(stderr, "shepherd: %s (pid %d) exited (%s %d); restarting\n", c.name.c_str(), dead,
                     WIFSIGNALED(status) ? "signal" : "status",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        auto ran = std::chrono::steady_clock::now() - c.started;
        if (ran > std::chrono::seconds(60)) c.restarts = 0;
        int backoff = std::min(30, 1 << std::min(c.restarts, 5));
        ++c.restarts;
        std::this_thread::sleep_for(std::chrono::seconds(backoff));
        c.pid = spawn(c.argv, dir + "/logs/" + c.name + ".log");
        c.started = std::chrono::steady_clock::now();
      }
    }
    if (!announced) {
      if (ready(port)) {
        writeKubeconfig(kubeconfig, port);
        for (auto& c : components)
          if (c.needs_api && c.pid <= 0) startComponent(c);
        std::printf(
            "shepherd: the cluster is up: API server on http://127.0.0.1:%d\n"
            "shepherd: kubeconfig written to %s\n"
            "shepherd: try   export KUBECONFIG=%s; kubectl get namespaces\n"
            "shepherd: press Ctrl-C to stop\n",
            port, kubeconfig.c_str(), kubeconfig.c_str());
        std::fflush(stdout);
        announced = true;
      } else if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr,
                     "shepherd: the API server did not become ready in 60 s; see %s/logs/apiserver.log\n",
                     dir.c_str());
        deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      }
    }
  }
  std::printf("shepherd: stopping\n");
  std::fflush(stdout);
  // In reverse start order, each after the one before has exited: clients (the scheduler
  // releasing its lease, a node agent) still reach the API server while they stop.
  auto stopBy = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (auto it = components.rbegin(); it != components.rend(); ++it) {
    auto& c = *it;
    if (c.pid > 0) kill(c.pid, SIGTERM);
    while (c.pid > 0) {
      int status;
      pid_t r = waitpid(c.pid, &status, WNOHANG);
      if (r == c.pid || r < 0) {
        c.pid = -1;
        break;
      }
      if (std::chrono::steady_clock::now() > stopBy) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, &status, 0);
        c.pid = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  if (withNode) {
    // kubelet-lite leaves containers running (a restarted node adopts them); a stopped
    // cluster leaves nothing behind.
    int rc = runScript({script, "stop", runtimeDir}, dir + "/logs/containerd.log");
    if (rc != 0)
      std::fprintf(stderr, "shepherd: stopping containerd failed (exit %d); see %s/logs/containerd.log\n", rc,
                   dir.c_str());
  }
  std::printf("shepherd: stopped\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "up") return up(argc, argv);
  std::fprintf(stderr,
               "usage: shepherd up [--data-dir DIR] [--port PORT]\n"
               "  Runs a Shepherd cluster on this machine in the foreground.\n");
  return argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "help") ? 0 : 2;
}
