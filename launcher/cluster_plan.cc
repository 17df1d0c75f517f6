#include "launcher/cluster_plan.h"

namespace shepherd::launcher {

namespace {

std::string loopback(int port) {
  return "http://127.0.0.1:" + std::to_string(port);
}

// Three etcd members on loopback; appends their client URLs to `servers`.
std::vector<Component> etcdMembers(const UpOptions& o, std::string& servers) {
  std::string initial;
  for (int i = 0; i < 3; ++i)
    initial +=
        (i ? "," : "") + std::string("m") + std::to_string(i) + "=" + loopback(o.etcd_port + 2 * i + 1);
  std::vector<Component> members;
  for (int i = 0; i < 3; ++i) {
    std::string client = loopback(o.etcd_port + 2 * i), peer = loopback(o.etcd_port + 2 * i + 1);
    Component m;
    m.name = "etcd-" + std::to_string(i);
    m.argv = {"/usr/bin/etcd",
              "--name=m" + std::to_string(i),
              "--data-dir=" + o.data_dir + "/etcd/m" + std::to_string(i),
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
    servers += (i ? "," : "") + client;
  }
  return members;
}

Component apiServer(const UpOptions& o, const ClusterPlan& plan, const std::string& name, int port) {
  Component a;
  a.name = name;
  a.argv = {o.bin_dir + "/shepherd-apiserver",
            "--data-dir=" + o.data_dir + "/" + name,
            "--port=" + std::to_string(port),
            "--bind-address=127.0.0.1",
            "--cert-dir=" + plan.pki_dir,
            "--tls-cert-file=" + plan.pki_dir + "/apiserver.crt",
            "--tls-private-key-file=" + plan.pki_dir + "/apiserver.key",
            "--client-ca-file=" + plan.pki_dir + "/ca.crt"};
  if (!plan.etcd_servers.empty()) {
    a.argv.push_back("--etcd-servers=" + plan.etcd_servers);
    a.argv.push_back("--etcd-prefix=" + o.etcd_prefix);
  }
  a.needs_etcd = o.with_etcd;
  return a;
}

Component client(const std::string& name, std::vector<std::string> argv) {
  Component c;
  c.name = name;
  c.argv = std::move(argv);
  c.needs_api = true;
  return c;
}

}  // namespace

ClusterPlan planCluster(const UpOptions& o) {
  ClusterPlan plan;
  plan.pki_dir = o.data_dir + "/pki";
  plan.etcd_servers = o.etcd_servers;
  if (o.with_etcd) plan.components = etcdMembers(o, plan.etcd_servers);
  // Our components fail over between the API servers (a comma-separated server list in
  // their kubeconfigs).
  plan.server_urls = "https://127.0.0.1:" + std::to_string(o.port);
  plan.components.push_back(apiServer(o, plan, "apiserver", o.port));
  if (o.with_etcd) {
    plan.server_urls += ",https://127.0.0.1:" + std::to_string(o.port + 1);
    plan.components.push_back(apiServer(o, plan, "apiserver-2", o.port + 1));
  }
  const std::string& pki = plan.pki_dir;
  plan.components.push_back(client(
      "scheduler", {o.bin_dir + "/shepherd-scheduler", "--kubeconfig=" + pki + "/scheduler.kubeconfig"}));
  plan.components.push_back(client(
      "controller-manager",
      {o.bin_dir + "/shepherd-controller-manager", "--kubeconfig=" + pki + "/controller-manager.kubeconfig",
       "--root-ca-file=" + pki + "/ca.crt"}));
  if (o.with_node)
    plan.components.push_back(
        client("kubelet",
               {o.bin_dir + "/kubelet-lite", "--kubeconfig=" + pki + "/node-" + o.node_name + ".kubeconfig",
                "--hostname-override=" + o.node_name, "--port=" + o.kubelet_port,
                "--container-runtime-endpoint=unix://" + o.containerd_socket,
                "--root-dir=" + o.data_dir + "/kubelet"}));
  return plan;
}

}  // namespace shepherd::launcher
