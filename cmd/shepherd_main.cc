// shepherd: the launcher. `shepherd up` runs a whole cluster on this machine in the
// foreground: a private containerd (scripts/containerd.sh), the API server on the embedded
// store (or, with --etcd, three etcd members and two API servers on them), then the scheduler, the controller
// manager and one real node (kubelet-lite). It supervises each component as a child process: it restarts one
// that crashes, writes an admin kubeconfig once the API server is ready, and stops everything cleanly on
// SIGINT/SIGTERM.
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/files.h"
#include "common/flags.h"
#include "launcher/cluster_plan.h"
#include "launcher/probes.h"
#include "launcher/processes.h"
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

std::string absolute(const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return p;
  return std::string(cwd) + "/" + p;
}

std::string hostName() {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  return host;
}

// Writes the admin's kubeconfig for kubectl, which takes one server: the first.
void writeAdminKubeconfig(const launcher::ClusterPlan& plan, int port, const std::string& path) {
  auto admin = pki::readFile(plan.pki_dir + "/admin.kubeconfig");
  if (admin) {
    size_t at = admin->find(plan.server_urls);
    if (at != std::string::npos)
      admin->replace(at, plan.server_urls.size(), "https://127.0.0.1:" + std::to_string(port));
  }
  if (!admin || !pki::writeFileAtomically(path, *admin, 0600))
    std::fprintf(stderr, "shepherd: cannot write %s\n", path.c_str());
}

void announce(const launcher::UpOptions& o, const launcher::ClusterPlan& plan,
              const std::string& kubeconfig) {
  if (o.with_etcd)
    std::printf(
        "shepherd: objects are kept in etcd at %s; a second API server serves "
        "https://127.0.0.1:%d\n",
        plan.etcd_servers.c_str(), o.port + 1);
  std::printf(
      "shepherd: the cluster is up: API server on https://127.0.0.1:%d\n"
      "shepherd: kubeconfig written to %s\n"
      "shepherd: try   export KUBECONFIG=%s; kubectl get namespaces\n"
      "shepherd: press Ctrl-C to stop\n",
      o.port, kubeconfig.c_str(), kubeconfig.c_str());
  std::fflush(stdout);
}

void defineUpFlags(Flags& flags) {
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
}

// Supervises the components until SIGINT/SIGTERM: those that need nothing first, the API
// servers once etcd answers (--etcd), the API's clients once it is ready (with the admin's
// kubeconfig written then).
void superviseUntilStopped(const launcher::UpOptions& o, launcher::ClusterPlan& plan,
                           launcher::Supervisor& supervisor, const sigset_t& set) {
  auto& components = plan.components;
  for (auto& c : components)
    if (!c.needs_api && !c.needs_etcd) supervisor.start(c);
  bool etcdUp = !o.with_etcd, announced = false;
  std::string kubeconfig = o.data_dir + "/kubeconfig";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  timespec tick{0, 200 * 1000 * 1000};
  while (true) {
    siginfo_t info;
    int sig = sigtimedwait(&set, &info, &tick);
    if (sig == SIGINT || sig == SIGTERM) return;
    supervisor.reap(components);
    if (!etcdUp && launcher::etcdHealthy(o.etcd_port)) {
      etcdUp = true;
      for (auto& c : components)
        if (c.needs_etcd && c.neverStarted()) supervisor.start(c);
    }
    if (announced || !etcdUp) continue;
    if (launcher::apiServerReady(o.port)) {
      writeAdminKubeconfig(plan, o.port, kubeconfig);
      for (auto& c : components)
        if (c.needs_api && c.neverStarted()) supervisor.start(c);
      announce(o, plan, kubeconfig);
      announced = true;
    } else if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr,
                   "shepherd: the API server did not become ready in 60 s; see %s/logs/apiserver.log\n",
                   o.data_dir.c_str());
      deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    }
  }
}

int up(int argc, char** argv) {
  Flags flags;
  defineUpFlags(flags);
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
  launcher::UpOptions o;
  o.data_dir = absolute(flags.get("data-dir"));
  o.bin_dir = selfDir();
  o.port = flags.getInt("port");
  o.with_node = flags.getBool("node");
  o.node_name = flags.get("node-name");
  o.kubelet_port = flags.get("kubelet-port");
  std::string runtimeDir = o.data_dir + "/containerd";
  o.containerd_socket = runtimeDir + "/containerd.sock";
  o.with_etcd = flags.getBool("etcd");
  o.etcd_port = flags.getInt("etcd-port");
  o.etcd_servers = flags.get("etcd-servers");
  o.etcd_prefix = flags.get("etcd-prefix");
  if (o.with_etcd && !o.etcd_servers.empty()) {
    std::fprintf(stderr,
                 "shepherd up: --etcd runs its own etcd; it cannot be combined with --etcd-servers\n");
    return 2;
  }
  launcher::ClusterPlan plan = launcher::planCluster(o);
  if (!makeDirs(o.data_dir + "/logs", 0700) || !makeDirs(plan.pki_dir, 0700)) {
    std::fprintf(stderr, "shepherd up: cannot create %s: %s\n", o.data_dir.c_str(), std::strerror(errno));
    return 1;
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, nullptr);

  std::string script = flags.get("containerd-script");
  std::string containerdLog = o.data_dir + "/logs/containerd.log";
  if (o.with_node) {
    std::printf("shepherd: starting containerd in %s (pod network %s on %s)\n", runtimeDir.c_str(),
                flags.get("pod-subnet").c_str(), flags.get("bridge").c_str());
    std::fflush(stdout);
    int rc = launcher::runScript(
        {script, "start", runtimeDir, "--subnet", flags.get("pod-subnet"), "--bridge", flags.get("bridge")},
        containerdLog);
    if (rc != 0) {
      std::fprintf(stderr, "shepherd up: containerd did not start (exit %d); see %s\n", rc,
                   containerdLog.c_str());
      launcher::runScript({script, "stop", runtimeDir}, containerdLog);
      return 1;
    }
  }
  // The cluster's CA, certificates and one kubeconfig per component (kept across runs).
  pki::ClusterPkiOptions po;
  po.dir = plan.pki_dir;
  po.server_url = plan.server_urls;
  if (o.with_node) po.nodes.push_back(o.node_name);
  if (auto r = pki::ensureClusterPki(po); !r) {
    std::fprintf(stderr, "shepherd up: %s\n", r.error().message.c_str());
    return 1;
  }
  launcher::Supervisor supervisor(o.data_dir + "/logs");
  superviseUntilStopped(o, plan, supervisor, set);
  std::printf("shepherd: stopping\n");
  std::fflush(stdout);
  supervisor.stopAll(plan.components, 30);
  if (o.with_node) {
    // kubelet-lite leaves containers running (a restarted node adopts them); a stopped
    // cluster leaves nothing behind.
    int rc = launcher::runScript({script, "stop", runtimeDir}, containerdLog);
    if (rc != 0)
      std::fprintf(stderr, "shepherd: stopping containerd failed (exit %d); see %s\n", rc,
                   containerdLog.c_str());
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
