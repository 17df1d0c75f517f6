// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection: a
// candidate acquires the lease when it is free or expired, renews it every retry period
// while it leads, steps down if it cannot renew within the renew deadline, and releases
// the lease (empty holder) when it stops.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "client/client.h"
#include "common/flags.h"

namespace shepherd::client {

struct LeaderElectionConfig {
  std::string ns = "kube-system";
  std::string name;
  std::string identity;
  std::chrono::seconds lease_duration{15};
  std::chrono::seconds renew_deadline{10};
  std::chrono::seconds retry_period{2};
  std::function<void()> on_started_leading;  // called on the elector's thread
  std::function<void()> on_stopped_leading;
};

// Thread-safety: start/stop from one thread; isLeader() from any.
class LeaderElector {
 public:
  LeaderElector(Client& client, LeaderElectionConfig cfg);
  ~LeaderElector();
  void start();
  // Stops campaigning; a leader releases the lease first.
  void stop();
  bool isLeader() const { return leading_.load(); }
  // One acquire-or-renew attempt; true if we hold the lease afterwards. (Public for tests.)
  bool tryAcquireOrRenew();

 private:
  void run();
  void release();

  Client& client_;
  LeaderElectionConfig cfg_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> leading_{false};
  std::thread thread_;
};

// Upstream's --leader-elect* flags, for the components that run one leader at a time.
void defineLeaderElectionFlags(Flags& flags, const std::string& default_lease_name);
// The election those flags describe (callbacks and identity left for the caller).
LeaderElectionConfig leaderElectionConfigFromFlags(const Flags& flags);

}  // namespace shepherd::client
