// shepherd: the launcher. `shepherd up` runs a whole cluster on this machine in the
// foreground: a private containerd (scripts/containerd.sh), the API server on the embedded
// store (or, with --etcd, three etcd members and two API servers on them), then the scheduler, the controller
// manager and one real node (kubelet-lite). It supervises each component as a child process: it restarts one
// that crashes, writes an admin kubeconfig once the API server is ready, and stops everything cleanly on
// SIGINT/SIGTERM.
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/ssl.h>
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
#include "pki/certificates.h"
#include "pki/cluster_pki.h"

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

// GET /health over plain HTTP on loopback (an etcd member); true when it says healthy.
bool etcdHealthy(int port) {
  std::string host = "127.0.0.1:" + std::to_string(port);
  BIO* bio = BIO_new_connect(host.c_str());
  bool ok = false;
  if (bio && BIO_do_connect(bio) == 1) {
    const char req[] = "GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n";
    if (BIO_write(bio, req, sizeof req - 1) == static_cast<int>(sizeof req - 1)) {
      std::string answer;
      char buf[256];
      for (int n; (n = BIO_read(bio, buf, sizeof buf)) > 0;) answer.append(buf, n);
      ok = answer.find("\"health\":\"true\"") != std::string::npos;
    }
  }
  if (bio) BIO_free_all(bio);
  return ok;
}

// GET /readyz over HTTPS on loopback (the probe needs no credentials); true on 200.
bool ready(int port) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) return false;
  BIO* bio = BIO_new_ssl_connect(ctx);
  bool ok = false;
  if (bio) {
    std::string host = "127.0.0.1:" + std::to_string(port);
    BIO_set_conn_hostname(bio, host.c_str());
    if (BIO_do_connect(bio) == 1 && BIO_do_handshake(bio) == 1) {
      const char req[] = "GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
      if (BIO_write(bio, req, sizeof req - 1) == static_cast<int>(sizeof req - 1)) {
        char buf[64] = {0};
        int n = BIO_read(bio, buf, sizeof buf - 1);
        ok = n > 12 && std::strncmp(buf + 9, "200", 3) == 0;
      }
    }
    BIO_free_all(bio);
  }
  SSL_CTX_free(ctx);
  return ok;
}

struct Component {
  std::string name;
  std::vector<std::string> argv;
  bool needs_api = false;   // started once the API server is ready (it needs the kubeconfig)
  bool needs_etcd = false;  // started once the first etcd member answers (--etcd)
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
  flags.define("etcd-servers", "",
               "Keep the cluster's objects in this etcd (client URLs, comma-separated) instead of the "
               "embedded store.");
  flags.define("etcd-prefix", "/registry", "Prefix of the cluster's keys in etcd.");
  flags.define("etcd", "false",
               "Run a three-member etcd cluster on loopback (data under DATA-DIR/etcd) and two API "
               "servers on it (PORT and PORT+1), instead of the embedded store.",
               true);
  flags.define("etcd-port", "2379",
               "With --etcd: member i serves clients on this port + 2i and peers on this port + 2i + 1.");
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
  bool withEtcd = flags.getBool("etcd");
  std::string etcdServers = flags.get("etcd-servers");
  if (withEtcd && !etcdServers.empty()) {
    std::fprintf(stderr,
                 "shepherd up: --etcd runs its own etcd; it cannot be combined with --etcd-servers\n");
    return 2;
  }
  int etcdPort = flags.getInt("etcd-port");
  std::vector<Component> members;
  if (withEtcd) {
    std::string initial;
    for (int i = 0; i < 3; ++i)
      initial += (i ? "," : "") + std::string("m") + std::to_string(i) +
                 "=http://127.0.0.1:" + std::to_string(etcdPort + 2 * i + 1);
    for (int i = 0; i < 3; ++i) {
      std::string client = "http://127.0.0.1:" + std::to_string(etcdPort + 2 * i);
      std::string peer = "http://127.0.0.1:" + std::to_string(etcdPort + 2 * i + 1);
      Component m;
      m.name = "etcd-" + std::to_string(i);
      m.argv = {"/usr/bin/etcd",
                "--name=m" + std::to_string(i),
                "--data-dir=" + dir + "/etcd/m" + std::to_string(i),
                "--listen-client-urls=" + client,
                "--advertise-client-urls=" + client,
                "--listen-peer-urls=" + peer,
                "--initial-advertise-peer-urls=" + peer,
                "--initial-cluster=" + initial,
                "--initial-cluster-state=new",
                "--initial-cluster-token=shepherd",
                "--enable-grpc-gateway=true",
                "--log-level=warn"};
      members.push_back(m);
      etcdServers += (i ? "," : "") + client;
    }
  }
  // Our components fail over between the API servers (a comma-separated server list in
  // their kubeconfigs); kubectl gets the first.
  std::string serverUrls = "https://127.0.0.1:" + std::to_string(port);
  if (withEtcd) serverUrls += ",https://127.0.0.1:" + std::to_string(port + 1);
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
  // The cluster's CA, certificates and one kubeconfig per component (kept across runs).
  std::string pkiDir = dir + "/pki";
  pki::ClusterPkiOptions po;
  po.dir = pkiDir;
  po.server_url = serverUrls;
  if (withNode) po.nodes.push_back(flags.get("node-name"));
  if (auto r = pki::ensureClusterPki(po); !r) {
    std::fprintf(stderr, "shepherd up: %s\n", r.error().message.c_str());
    return 1;
  }
  std::vector<Component> components = members;
  Component apiserver;
  apiserver.name = "apiserver";
  apiserver.argv = {bin + "/shepherd-apiserver",
                    "--data-dir=" + dir + "/apiserver",
                    "--port=" + std::to_string(port),
                    "--bind-address=127.0.0.1",
                    "--cert-dir=" + pkiDir,
                    "--tls-cert-file=" + pkiDir + "/apiserver.crt",
                    "--tls-private-key-file=" + pkiDir + "/apiserver.key",
                    "--client-ca-file=" + pkiDir + "/ca.crt"};
  if (!etcdServers.empty()) {
    apiserver.argv.push_back("--etcd-servers=" + etcdServers);
    apiserver.argv.push_back("--etcd-prefix=" + flags.get("etcd-prefix"));
  }
  apiserver.needs_etcd = withEtcd;
  components.push_back(apiserver);
  if (withEtcd) {
    Component second = apiserver;
    second.name = "apiserver-2";
    second.argv[1] = "--data-dir=" + dir + "/apiserver-2";
    second.argv[2] = "--port=" + std::to_string(port + 1);
    components.push_back(second);
  }
  std::string kubeconfig = dir + "/kubeconfig";  // the admin's, written once the API is up
  Component scheduler;
  scheduler.name = "scheduler";
  scheduler.argv = {bin + "/shepherd-scheduler", "--kubeconfig=" + pkiDir + "/scheduler.kubeconfig"};
  scheduler.needs_api = true;
  components.push_back(scheduler);
  Component controllers;
  controllers.name = "controller-manager";
  controllers.argv = {bin + "/shepherd-controller-manager",
                      "--kubeconfig=" + pkiDir + "/controller-manager.kubeconfig",
                      "--root-ca-file=" + dir + "/pki/ca.crt"};
  controllers.needs_api = true;
  components.push_back(controllers);
  if (withNode) {
    Component node;
    node.name = "kubelet";
    node.argv = {bin + "/kubelet-lite",
                 "--kubeconfig=" + pkiDir + "/node-" + flags.get("node-name") + ".kubeconfig",
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
    if (!c.needs_api && !c.needs_etcd) startComponent(c);
  bool etcdUp = !withEtcd;

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
    if (!etcdUp && etcdHealthy(etcdPort)) {
      etcdUp = true;
      for (auto& c : components)
        if (c.needs_etcd && c.pid <= 0) startComponent(c);
    }
    if (!announced && etcdUp) {
      if (ready(port)) {
        auto admin = pki::readFile(pkiDir + "/admin.kubeconfig");
        // kubectl takes one server: the first.
        if (admin) {
          size_t at = admin->find(serverUrls);
          if (at != std::string::npos)
            admin->replace(at, serverUrls.size(), "https://127.0.0.1:" + std::to_string(port));
        }
        if (!admin || !pki::writeFileAtomically(kubeconfig, *admin, 0600))
          std::fprintf(stderr, "shepherd: cannot write %s\n", kubeconfig.c_str());
        for (auto& c : components)
          if (c.needs_api && c.pid <= 0) startComponent(c);
        if (withEtcd)
          std::printf(
              "shepherd: objects are kept in etcd at %s; a second API server serves "
              "https://127.0.0.1:%d\n",
              etcdServers.c_str(), port + 1);
        std::printf(
            "shepherd: the cluster is up: API server on https://127.0.0.1:%d\n"
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

// `shepherd pki`: writes (or completes) the cluster PKI in a directory, for clusters whose
// components are started by hand or by a test harness.
int pkiCommand(int argc, char** argv) {
  Flags flags;
  flags.define("dir", "", "Directory of the PKI (created if missing).");
  flags.define("server", "", "API server URL written into the kubeconfigs (none written when empty).");
  flags.define("nodes", "", "Comma-separated node names that get a certificate and kubeconfig.");
  flags.define("sans", "", "Comma-separated extra IPs or DNS names for the serving certificate.");
  flags.define("help", "false", "Show this help.", true);
  std::string error;
  if (!flags.parse(argc, argv, 2, error) || flags.get("dir").empty()) {
    std::fprintf(stderr, "shepherd pki: %s\nflags:\n%s", error.empty() ? "--dir is required" : error.c_str(),
                 flags.usage().c_str());
    return 2;
  }
  pki::ClusterPkiOptions po;
  po.dir = absolute(flags.get("dir"));
  po.server_url = flags.get("server");
  po.nodes = flags.getList("nodes");
  po.extra_sans = flags.getList("sans");
  if (auto r = pki::ensureClusterPki(po); !r) {
    std::fprintf(stderr, "shepherd pki: %s\n", r.error().message.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "up") return up(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "pki") return pkiCommand(argc, argv);
  std::fprintf(stderr,
               "usage: shepherd up [--data-dir DIR] [--port PORT]\n"
               "  Runs a Shepherd cluster on this machine in the foreground.\n"
               "       shepherd pki --dir DIR [--server URL] [--nodes a,b] [--sans x,y]\n"
               "  Writes the cluster CA, certificates and kubeconfigs into DIR.\n");
  return argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "help") ? 0 : 2;
}
