#include "client/leader_election.h"

#include "common/clock.h"
#include "common/log.h"

namespace shepherd::client {

LeaderElector::LeaderElector(Client& client, LeaderElectionConfig cfg)
    : client_(client), cfg_(std::move(cfg)) {}

LeaderElector::~LeaderElector() {
  stop();
}

void LeaderElector::start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { run(); });
}

void LeaderElector::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

bool LeaderElector::tryAcquireOrRenew() {
  std::string path = resourcePath("coordination.k8s.io", "v1", "leases", cfg_.ns) + "/" + cfg_.name;
  std::string now = clock::rfc3339Micro(clock::now());
  auto cur = client_.get(path, RequestOptions{5000, 1});
  if (!cur && cur.error().code == 404) {
    json::Document lease;
    lease.SetObject();
    auto& a = lease.GetAllocator();
    lease.AddMember("apiVersion", "coordination.k8s.io/v1", a);
    lease.AddMember("kind", "Lease", a);
    json::Value meta(rapidjson::kObjectType);
    meta.AddMember("name", json::str(cfg_.name, a), a);
    meta.AddMember("namespace", json::str(cfg_.ns, a), a);
    lease.AddMember("metadata", meta, a);
    json::Value spec(rapidjson::kObjectType);
    spec.AddMember("holderIdentity", json::str(cfg_.identity, a), a);
    spec.AddMember("leaseDurationSeconds", static_cast<int64_t>(cfg_.lease_duration.count()), a);
    spec.AddMember("acquireTime", json::str(now, a), a);
    spec.AddMember("renewTime", json::str(now, a), a);
    spec.AddMember("leaseTransitions", 0, a);
    lease.AddMember("spec", spec, a);
    auto created = client_.post(resourcePath("coordination.k8s.io", "v1", "leases", cfg_.ns),
                                json::serialize(lease), RequestOptions{5000, 1});
    return created.ok();
  }
  if (!cur) return false;
  json::Document& lease = cur.value();
  auto& a = lease.GetAllocator();
  json::Value& spec = json::ensureObject(lease, "spec", a);
  std::string holder(json::getString(spec, "holderIdentity"));
  auto renew = clock::parseRfc3339(json::getString(spec, "renewTime"));
  int64_t duration = json::getInt(spec, "leaseDurationSeconds").value_or(cfg_.lease_duration.count());
  bool expired = !renew || clock::now() > *renew + std::chrono::seconds(duration);
  if (!holder.empty() && holder != cfg_.identity && !expired) return false;  // someone else leads
  if (holder != cfg_.identity) {
    json::set(spec, "leaseTransitions", json::Value(json::getInt(spec, "leaseTransitions").value_or(0) + 1),
              a);
    json::setString(spec, "acquireTime", now, a);
  }
  json::setString(spec, "holderIdentity", cfg_.identity, a);
  json::setString(spec, "renewTime", now, a);
  json::set(spec, "leaseDurationSeconds", json::Value(static_cast<int64_t>(cfg_.lease_duration.count())), a);
  // The update carries the resourceVersion we read: a concurrent candidate loses the race.
  auto updated = client_.put(path, json::serialize(lease), RequestOptions{5000, 1});
  return updated.ok();
}

void LeaderElector::release() {
  std::string path = resourcePath("coordination.k8s.io", "v1", "leases", cfg_.ns) + "/" + cfg_.name;
  auto cur = client_.get(path, RequestOptions{3000, 1});
  if (!cur || json::getStringPath(*cur, {"spec", "holderIdentity"}) != cfg_.identity) return;
  auto& a = cur->GetAllocator();
  json::Value& spec = json::ensureObject(*cur, "spec", a);
  json::setString(spec, "holderIdentity", "", a);
  json::set(spec, "leaseDurationSeconds", json::Value(1), a);
  json::setString(spec, "renewTime", clock::rfc3339Micro(clock::now()), a);
  (void)client_.put(path, json::serialize(*cur), RequestOptions{3000, 1});
}

void LeaderElector::run() {
  auto sleepFor = [&](std::chrono::milliseconds d) {
    for (auto t = std::chrono::milliseconds(0); t < d && !stop_.load(); t += std::chrono::milliseconds(50))
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  };
  while (!stop_.load()) {
    // Campaign.
    while (!stop_.load() && !tryAcquireOrRenew()) sleepFor(cfg_.retry_period);
    if (stop_.load()) break;
    leading_ = true;
    LOG_INFO("leader election: " << cfg_.identity << " leads " << cfg_.ns << "/" << cfg_.name);
    if (cfg_.on_started_leading) cfg_.on_started_leading();
    // Renew until we cannot within the deadline.
    auto lastRenew = std::chrono::steady_clock::now();
    while (!stop_.load()) {
      sleepFor(cfg_.retry_period);
      if (stop_.load()) break;
      if (tryAcquireOrRenew()) {
        lastRenew = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - lastRenew > cfg_.renew_deadline) {
        LOG_WARN("leader election: " << cfg_.identity << " lost " << cfg_.ns << "/" << cfg_.name);
        break;
      }
    }
    leading_ = false;
    if (stop_.load()) release();
    if (cfg_.on_stopped_leading) cfg_.on_stopped_leading();
  }
}

void defineLeaderElectionFlags(Flags& flags, const std::string& default_lease_name) {
  flags.define("leader-elect", "true", "Run only while holding the leader lease (several replicas may run).");
  flags.define("leader-elect-lease-duration", "15", "Seconds a lease is valid without renewal.");
  flags.define("leader-elect-renew-deadline", "10",
               "Seconds the leader keeps trying to renew before stepping down.");
  flags.define("leader-elect-retry-period", "2", "Seconds between acquire and renew attempts.");
  flags.define("leader-elect-resource-name", default_lease_name, "Lease name.");
  flags.define("leader-elect-resource-namespace", "kube-system", "Namespace of the lease.");
}

LeaderElectionConfig leaderElectionConfigFromFlags(const Flags& flags) {
  LeaderElectionConfig lc;
  lc.ns = flags.get("leader-elect-resource-namespace");
  lc.name = flags.get("leader-elect-resource-name");
  lc.lease_duration = std::chrono::seconds(flags.getInt("leader-elect-lease-duration"));
  lc.renew_deadline = std::chrono::seconds(flags.getInt("leader-elect-renew-deadline"));
  lc.retry_period = std::chrono::seconds(flags.getInt("leader-elect-retry-period"));
  return lc;
}

}  // namespace shepherd::client
