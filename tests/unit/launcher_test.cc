// What `shepherd up` plans to run: the components, their order and their flags.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "launcher/cluster_plan.h"
#include "launcher/processes.h"

using namespace shepherd::launcher;

namespace {

UpOptions options() {
  UpOptions o;
  o.data_dir = "/d";
  o.bin_dir = "/b";
  o.port = 7000;
  o.node_name = "n";
  o.kubelet_port = "10250";
  o.containerd_socket = "/d/containerd/containerd.sock";
  return o;
}

std::vector<std::string> names(const ClusterPlan& p) {
  std::vector<std::string> out;
  for (const auto& c : p.components) out.push_back(c.name);
  return out;
}

bool has(const Component& c, const std::string& arg) {
  return std::find(c.argv.begin(), c.argv.end(), arg) != c.argv.end();
}

}  // namespace

TEST(ClusterPlan, EmbeddedStoreAndOneNode) {
  ClusterPlan p = planCluster(options());
  EXPECT_EQ(names(p), (std::vector<std::string>{"apiserver", "scheduler", "controller-manager", "kubelet"}));
  EXPECT_EQ(p.server_urls, "https://127.0.0.1:7000");
  EXPECT_TRUE(p.etcd_servers.empty());
  const Component& api = p.components[0];
  EXPECT_EQ(api.argv[0], "/b/shepherd-apiserver");
  EXPECT_TRUE(has(api, "--data-dir=/d/apiserver"));
  EXPECT_TRUE(has(api, "--port=7000"));
  EXPECT_TRUE(has(api, "--client-ca-file=/d/pki/ca.crt"));
  EXPECT_FALSE(api.needs_api || api.needs_etcd);
  for (size_t i = 1; i < p.components.size(); ++i)
    EXPECT_TRUE(p.components[i].needs_api) << p.components[i].name;
  const Component& kubelet = p.components[3];
  EXPECT_TRUE(has(kubelet, "--kubeconfig=/d/pki/node-n.kubeconfig"));
  EXPECT_TRUE(has(kubelet, "--container-runtime-endpoint=unix:///d/containerd/containerd.sock"));
  EXPECT_TRUE(has(p.components[2], "--root-ca-file=/d/pki/ca.crt"));
}

TEST(ClusterPlan, WithoutANode) {
  UpOptions o = options();
  o.with_node = false;
  EXPECT_EQ(names(planCluster(o)),
            (std::vector<std::string>{"apiserver", "scheduler", "controller-manager"}));
}

TEST(ClusterPlan, ThreeEtcdMembersAndTwoApiServers) {
  UpOptions o = options();
  o.with_etcd = true;
  o.etcd_port = 3000;
  ClusterPlan p = planCluster(o);
  EXPECT_EQ(names(p), (std::vector<std::string>{"etcd-0", "etcd-1", "etcd-2", "apiserver", "apiserver-2",
                                                "scheduler", "controller-manager", "kubelet"}));
  EXPECT_EQ(p.etcd_servers, "http://127.0.0.1:3000,http://127.0.0.1:3002,http://127.0.0.1:3004");
  EXPECT_EQ(p.server_urls, "https://127.0.0.1:7000,https://127.0.0.1:7001");
  EXPECT_TRUE(has(p.components[1], "--listen-peer-urls=http://127.0.0.1:3003"));
  EXPECT_TRUE(
      has(p.components[0],
          "--initial-cluster=m0=http://127.0.0.1:3001,m1=http://127.0.0.1:3003,m2=http://127.0.0.1:3005"));
  const Component& second = p.components[4];
  EXPECT_TRUE(second.needs_etcd);
  EXPECT_TRUE(has(second, "--data-dir=/d/apiserver-2"));
  EXPECT_TRUE(has(second, "--port=7001"));
  EXPECT_TRUE(has(second, "--etcd-servers=" + p.etcd_servers));
  EXPECT_TRUE(has(second, "--etcd-prefix=/registry"));
}

TEST(ClusterPlan, AnExternalEtcd) {
  UpOptions o = options();
  o.etcd_servers = "http://127.0.0.1:2379";
  o.etcd_prefix = "/other";
  ClusterPlan p = planCluster(o);
  EXPECT_EQ(p.components[0].name, "apiserver");
  EXPECT_FALSE(p.components[0].needs_etcd);
  EXPECT_TRUE(has(p.components[0], "--etcd-servers=http://127.0.0.1:2379"));
  EXPECT_TRUE(has(p.components[0], "--etcd-prefix=/other"));
}

// A crashed component is restarted after its back-off without reap() blocking meanwhile
// (the launcher's loop keeps answering signals).
TEST(Supervisor, RestartsAnExitedComponentAfterItsBackOffWithoutBlocking) {
  char dir[] = "/tmp/launcher_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  Supervisor sup(dir);
  std::vector<Component> cs(1);
  cs[0].name = "quits";
  cs[0].argv = {"/bin/sh", "-c", "exit 3"};
  sup.start(cs[0]);
  ASSERT_GT(cs[0].pid, 0);
  EXPECT_FALSE(cs[0].neverStarted());

  // reap() until `done`, each call returning at once: the back-off is 1 s, and reap() used
  // to sleep through it.
  auto t0 = std::chrono::steady_clock::now();
  auto reapUntil = [&](auto done) {
    while (!done()) {
      auto before = std::chrono::steady_clock::now();
      sup.reap(cs);
      EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(900));
      ASSERT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  };

  // Reaped: waiting out its back-off.
  ASSERT_NO_FATAL_FAILURE(reapUntil([&] { return cs[0].restart_at.has_value(); }));
  EXPECT_EQ(cs[0].pid, -1);
  EXPECT_EQ(cs[0].restarts, 1);
  EXPECT_FALSE(cs[0].neverStarted());
  auto due = *cs[0].restart_at;

  // Started again on the first reap() after the back-off.
  ASSERT_NO_FATAL_FAILURE(reapUntil([&] { return cs[0].pid != -1; }));
  EXPECT_GE(std::chrono::steady_clock::now(), due);
  EXPECT_FALSE(cs[0].restart_at.has_value());

  sup.stopAll(cs, 5);
  EXPECT_EQ(cs[0].pid, -1);
  EXPECT_FALSE(cs[0].restart_at.has_value());
  std::filesystem::remove_all(dir);
}
