// The admission chain and its plugins, on objects as the store hands them over.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "apis/catalog.h"
#include "plugins/admission/chain.h"
#include "plugins/admission/default_storage_class.h"
#include "plugins/admission/limit_ranger.h"
#include "plugins/admission/node_restriction.h"
#include "plugins/admission/pod_defaults.h"
#include "plugins/admission/priority.h"
#include "plugins/admission/resource_quota.h"
#include "registry/registry.h"
#include "storage/sqlite_storage.h"
#include "test_util.h"

using namespace shepherd;
using admission::Attributes;
using admission::Operation;

namespace {

json::Document doc(const std::string& s) {
  json::Document d;
  EXPECT_TRUE(json::parse(s, d).ok()) << s;
  return d;
}

Attributes attrs(Operation op, const char* plural, const std::string& user, const std::string& sub = "",
                 const std::string& name = "") {
  Attributes a;
  a.operation = op;
  a.resource = apis::Catalog::instance()
                   .find(plural == std::string("leases") ? "coordination.k8s.io" : "", "v1", plural)
                   .get();
  a.subresource = sub;
  a.ns = plural == std::string("leases") ? "kube-node-lease" : "default";
  a.name = name;
  a.user.name = user;
  if (user.rfind("system:node:", 0) == 0) a.user.groups = {"system:nodes"};
  return a;
}

struct Env {
  testutil::TempDir dir;
  std::unique_ptr<storage::SqliteStorage> storage;
  std::unique_ptr<registry::Registry> reg;
  Env() {
    storage::SqliteOptions o;
    o.path = dir.path() + "/db";
    storage = std::move(storage::SqliteStorage::open(o).value);
    reg = std::move(registry::Registry::start(*storage, registry::RegistryOptions{}).value());
  }
};

}  // namespace

TEST(Admission, ChainRunsEveryPluginInOrder) {
  plugins::admission::ChainOptions o;
  auto chain = plugins::admission::buildChain(o);
  EXPECT_EQ(chain->names(), (std::vector<std::string>{"LimitRanger", "ServiceAccount", "Priority",
                                                      "DefaultTolerationSeconds", "DefaultStorageClass",
                                                      "StorageObjectInUseProtection", "ResourceQuota"}));
  Env e;
  o.registry = e.reg.get();
  auth::AlwaysAllowAuthorizer allow;
  o.authorizer = &allow;
  EXPECT_EQ(plugins::admission::buildChain(o)->names(),
            (std::vector<std::string>{"LimitRanger", "ServiceAccount", "NodeRestriction", "Priority",
                                      "DefaultTolerationSeconds", "DefaultStorageClass",
                                      "StorageObjectInUseProtection", "ResourceQuota"}));
}

TEST(Admission, NewPodsGetServiceAccountPriorityAndTolerations) {
  plugins::admission::ChainOptions o;
  o.default_not_ready_toleration_seconds = 30;
  o.default_unreachable_toleration_seconds = 40;
  auto chain = plugins::admission::buildChain(o);
  auto pod = doc(R"({"spec":{"containers":[{"name":"c","image":"x"}],
                  "tolerations":[{"key":"node.kubernetes.io/unreachable","operator":"Exists"}]}})");
  ASSERT_TRUE(chain->admit(attrs(Operation::Create, "pods", "alice"), pod, nullptr).ok());
  EXPECT_EQ(json::getStringPath(pod, {"spec", "serviceAccountName"}), "default");
  EXPECT_EQ(json::getStringPath(pod, {"spec", "serviceAccount"}), "default");
  EXPECT_EQ(json::findPath(pod, {"spec", "priority"})->GetInt(), 0);
  EXPECT_EQ(json::getStringPath(pod, {"spec", "preemptionPolicy"}), "PreemptLowerPriority");
  // The unreachable taint was tolerated already (for ever): only not-ready is added.
  const json::Value& ts = *json::findPath(pod, {"spec", "tolerations"});
  ASSERT_EQ(ts.Size(), 2u);
  EXPECT_EQ(json::getString(ts[1], "key"), "node.kubernetes.io/not-ready");
  EXPECT_EQ(json::getInt(ts[1], "tolerationSeconds").value(), 30);
  // A named account is kept; a priority class that does not exist is refused;
  // subresources are left alone.
  auto named = doc(R"({"spec":{"serviceAccountName":"builder","containers":[]}})");
  ASSERT_TRUE(chain->admit(attrs(Operation::Create, "pods", "alice"), named, nullptr).ok());
  EXPECT_EQ(json::getStringPath(named, {"spec", "serviceAccount"}), "builder");
  auto classed = doc(R"({"metadata":{"name":"p"},"spec":{"priorityClassName":"high","containers":[]}})");
  auto refused = chain->admit(attrs(Operation::Create, "pods", "alice"), classed, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "pods \"p\" is forbidden: no PriorityClass with name high was found");
  auto status = doc(R"({"spec":{"containers":[]}})");
  ASSERT_TRUE(chain->admit(attrs(Operation::Update, "pods", "alice", "status"), status, nullptr).ok());
  EXPECT_FALSE(json::findPath(status, {"spec", "tolerations"}));
}

TEST(Admission, PriorityComesFromThePodsPriorityClass) {
  Env e;
  registry::Store& classes = *e.reg->store("scheduling.k8s.io", "v1", "priorityclasses");
  auto high = doc(R"({"metadata":{"name":"high"},"value":1000,"preemptionPolicy":"Never"})");
  ASSERT_TRUE(classes.create("", high, registry::WriteOptions{}).ok());
  plugins::admission::Priority pr(e.reg.get());
  Attributes a = attrs(Operation::Create, "pods", "alice");
  auto pod = doc(R"({"metadata":{"name":"p"},"spec":{"priorityClassName":"high","containers":[]}})");
  ASSERT_TRUE(pr.admit(a, pod, nullptr).ok());
  EXPECT_EQ(json::findPath(pod, {"spec", "priority"})->GetInt(), 1000);
  EXPECT_EQ(json::getStringPath(pod, {"spec", "preemptionPolicy"}), "Never");
  auto own =
      doc(R"({"metadata":{"name":"p"},"spec":{"priorityClassName":"high","priority":5,"containers":[]}})");
  auto r = pr.admit(a, own, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 403);
  EXPECT_EQ(
      r.error().message,
      "pods \"p\" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority "
      "admission controller computed 1000 from the given PriorityClass name");
  // A global default class names itself on pods that name none; a second default is refused.
  auto low = doc(R"({"metadata":{"name":"low"},"value":10,"globalDefault":true})");
  ASSERT_TRUE(classes.create("", low, registry::WriteOptions{}).ok());
  auto plain = doc(R"({"spec":{"containers":[]}})");
  ASSERT_TRUE(pr.admit(a, plain, nullptr).ok());
  EXPECT_EQ(json::getStringPath(plain, {"spec", "priorityClassName"}), "low");
  EXPECT_EQ(json::findPath(plain, {"spec", "priority"})->GetInt(), 10);
  Attributes pc;
  pc.operation = Operation::Create;
  pc.resource = apis::Catalog::instance().find("scheduling.k8s.io", "v1", "priorityclasses").get();
  auto second =
      pr.validate(pc, doc(R"({"metadata":{"name":"other"},"value":1,"globalDefault":true})"), nullptr);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().message,
            "priorityclasses.scheduling.k8s.io \"other\" is forbidden: PriorityClass low is "
            "already marked as default. Only one default can exist");
  // An update keeps the priority the pod was created with.
  auto old = doc(R"({"spec":{"priority":10,"preemptionPolicy":"PreemptLowerPriority","containers":[]}})");
  auto put = doc(R"({"spec":{"containers":[]}})");
  ASSERT_TRUE(pr.admit(attrs(Operation::Update, "pods", "alice"), put, &old).ok());
  EXPECT_EQ(json::findPath(put, {"spec", "priority"})->GetInt(), 10);
}

TEST(Admission, AClaimWithoutAClassGetsTheNewestDefaultClass) {
  Env e;
  registry::Store& classes = *e.reg->store("storage.k8s.io", "v1", "storageclasses");
  plugins::admission::DefaultStorageClass dsc(e.reg.get());
  Attributes a = attrs(Operation::Create, "persistentvolumeclaims", "alice");
  auto claim = [] { return doc(R"({"metadata":{"name":"c"},"spec":{"accessModes":["ReadWriteOnce"]}})"); };
  // No default class: nothing changes.
  auto plain = doc(R"({"metadata":{"name":"plain"},"provisioner":"a"})");
  ASSERT_TRUE(classes.create("", plain, registry::WriteOptions{}).ok());
  auto none = claim();
  ASSERT_TRUE(dsc.admit(a, none, nullptr).ok());
  EXPECT_FALSE(json::findPath(none, {"spec", "storageClassName"}));
  for (const char* name : {"first", "second"}) {
    auto cls =
        doc(std::string(R"({"metadata":{"name":")") + name +
            R"(","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"a"})");
    ASSERT_TRUE(classes.create("", cls, registry::WriteOptions{}).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // creationTimestamps have seconds
  }
  auto c = claim();
  ASSERT_TRUE(dsc.admit(a, c, nullptr).ok());
  EXPECT_EQ(json::getStringPath(c, {"spec", "storageClassName"}), "second");
  // "" is a class: left alone; so is an update.
  auto empty = doc(R"({"metadata":{"name":"c"},"spec":{"storageClassName":""}})");
  ASSERT_TRUE(dsc.admit(a, empty, nullptr).ok());
  EXPECT_EQ(json::getStringPath(empty, {"spec", "storageClassName"}), "");
  auto upd = claim();
  ASSERT_TRUE(dsc.admit(attrs(Operation::Update, "persistentvolumeclaims", "alice"), upd, nullptr).ok());
  EXPECT_FALSE(json::findPath(upd, {"spec", "storageClassName"}));
}

TEST(Admission, LimitRangerFillsInDefaultsAndRefusesPodsOutOfBounds) {
  Env e;
  ASSERT_TRUE(e.reg->bootstrap(6443).ok());  // the default namespace
  registry::Store& ranges = *e.reg->store("", "v1", "limitranges");
  auto lr = doc(R"({"metadata":{"name":"lr","namespace":"default"},"spec":{"limits":[{"type":"Container",
      "min":{"cpu":"100m"},"max":{"cpu":"2","memory":"1Gi"},"defaultRequest":{"cpu":"200m"},
      "maxLimitRequestRatio":{"cpu":"10"}}]}})");
  ASSERT_TRUE(ranges.create("default", lr, registry::WriteOptions{}).ok());
  // Stored with upstream's defaults: default from max, defaultRequest from default.
  auto stored = doc(ranges.get("default", "lr").value()->json);
  const json::Value& item = *json::findPath(stored, {"spec", "limits"})->Begin();
  EXPECT_EQ(json::serialize(*json::find(item, "default")), R"({"cpu":"2","memory":"1Gi"})");
  EXPECT_EQ(json::getStringPath(item, {"defaultRequest", "memory"}), "1Gi");
  plugins::admission::LimitRanger lrp(e.reg.get());
  Attributes a = attrs(Operation::Create, "pods", "alice");
  auto pod = doc(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x"}]}})");
  ASSERT_TRUE(lrp.admit(a, pod, nullptr).ok());
  const json::Value& res = *json::find(*json::findPath(pod, {"spec", "containers"})->Begin(), "resources");
  EXPECT_EQ(json::serialize(res),
            R"({"requests":{"cpu":"200m","memory":"1Gi"},"limits":{"cpu":"2","memory":"1Gi"}})");
  EXPECT_EQ(json::getStringPath(pod, {"metadata", "annotations", "kubernetes.io/limit-ranger"}),
            "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c");
  EXPECT_TRUE(lrp.validate(a, pod, nullptr).ok());
  auto small = doc(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x",
      "resources":{"requests":{"cpu":"50m","memory":"1Gi"},"limits":{"cpu":"1","memory":"1Gi"}}}]}})");
  auto r = lrp.validate(a, small, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 403);
  EXPECT_EQ(
      r.error().message,
      "pods \"p\" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, cpu max limit "
      "to request ratio per Container is 10, but provided ratio is 20.000000]");
  // Pod updates are not looked at.
  EXPECT_TRUE(lrp.validate(attrs(Operation::Update, "pods", "alice"), small, &small).ok());
  // A Pod item bounds the containers' sum.
  auto podLimit = doc(R"({"metadata":{"name":"per-pod","namespace":"default"},"spec":{"limits":[{"type":"Pod",
      "max":{"memory":"1Gi"}}]}})");
  ASSERT_TRUE(ranges.create("default", podLimit, registry::WriteOptions{}).ok());
  auto two = doc(R"({"metadata":{"name":"p"},"spec":{"containers":[
      {"name":"a","image":"x","resources":{"requests":{"cpu":"1"},"limits":{"cpu":"1","memory":"768Mi"}}},
      {"name":"b","image":"x","resources":{"requests":{"cpu":"1"},"limits":{"cpu":"1","memory":"768Mi"}}}]}})");
  auto sum = lrp.validate(a, two, nullptr);
  ASSERT_FALSE(sum.ok());
  EXPECT_EQ(sum.error().message, "pods \"p\" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1536Mi");
}

TEST(Admission, ResourceQuotaRefusesWhatExceedsItAndChargesWhatPasses) {
  Env e;
  ASSERT_TRUE(e.reg->bootstrap(6443).ok());  // the default namespace
  registry::Store& quotas = *e.reg->store("", "v1", "resourcequotas");
  auto q =
      doc(R"({"metadata":{"name":"q","namespace":"default"},"spec":{"hard":{"pods":"1","limits.cpu":"1"}}})");
  ASSERT_TRUE(quotas.create("default", q, registry::WriteOptions{}).ok());
  plugins::admission::ResourceQuota rq(e.reg.get());
  Attributes a = attrs(Operation::Create, "pods", "alice");
  auto pod = doc(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x",
      "resources":{"limits":{"cpu":"500m"},"requests":{"cpu":"500m"}}}]}})");
  // Not observed by the controller yet (no status.hard): not enforced.
  ASSERT_TRUE(rq.validate(a, pod, nullptr).ok());
  auto setStatus = [&](const std::string& status) {
    auto out = quotas.modify(
        "default", "q",
        [&](json::Document& d) {
          json::Document st = doc(status);
          json::set(d, "status", json::Value(st, d.GetAllocator()), d.GetAllocator());
          return okStatus();
        },
        registry::WriteOptions{}, registry::Subresource::Status);
    ASSERT_TRUE(out.ok());
  };
  setStatus(R"({"hard":{"pods":"1","limits.cpu":"1"}})");
  auto unknown = rq.validate(a, pod, nullptr);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message,
            "pods \"p\" is forbidden: status unknown for quota: q, resources: limits.cpu,pods");
  setStatus(R"({"hard":{"pods":"1","limits.cpu":"1"},"used":{"pods":"0","limits.cpu":"0"}})");
  auto noLimit = doc(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x"}]}})");
  auto failed = rq.validate(a, noLimit, nullptr);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message,
            "pods \"p\" is forbidden: failed quota: q: must specify limits.cpu for: c");
  ASSERT_TRUE(rq.validate(a, pod, nullptr).ok());
  auto charged = doc(quotas.get("default", "q").value()->json);
  EXPECT_EQ(json::serialize(*json::findPath(charged, {"status", "used"})),
            R"({"limits.cpu":"500m","pods":"1"})");
  auto second = rq.validate(a, pod, nullptr);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, 403);
  EXPECT_EQ(second.error().message,
            "pods \"p\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1");
  // A dry run is checked, not charged.
  setStatus(R"({"hard":{"pods":"1","limits.cpu":"1"},"used":{"pods":"0","limits.cpu":"0"}})");
  Attributes dry = a;
  dry.dry_run = true;
  ASSERT_TRUE(rq.validate(dry, pod, nullptr).ok());
  EXPECT_EQ(json::getStringPath(doc(quotas.get("default", "q").value()->json), {"status", "used", "pods"}),
            "0");
}

TEST(Admission, NodeRestrictionKeepsNodesToTheirOwnObjects) {
  Env e;
  plugins::admission::NodeRestriction nr(*e.reg);
  auto ok = [&](const Attributes& a, const std::string& obj, const std::string& old = "") -> std::string {
    auto o = doc(obj);
    json::Document od;
    if (!old.empty()) od = doc(old);
    auto st = nr.admit(a, o, old.empty() ? nullptr : &od);
    return st.ok() ? "" : st.error().message;
  };
  const std::string n1 = "system:node:n1";
  EXPECT_EQ(
      ok(attrs(Operation::Create, "pods", n1),
         R"({"metadata":{"name":"p","annotations":{"kubernetes.io/config.mirror":"x"}},"spec":{"nodeName":"n1"}})"),
      "");
  EXPECT_EQ(
      ok(attrs(Operation::Create, "pods", n1), R"({"metadata":{"name":"p"},"spec":{"nodeName":"n1"}})"),
      "pods \"p\" is forbidden: pod does not have \"kubernetes.io/config.mirror\" annotation, node \"n1\" "
      "can only create mirror pods");
  EXPECT_EQ(
      ok(attrs(Operation::Update, "pods", n1, "status", "p"), "{}", R"({"spec":{"nodeName":"n2"}})"),
      "pods \"p\" is forbidden: node \"n1\" can only update pod status for pods with spec.nodeName set to "
      "itself");
  EXPECT_EQ(
      ok(attrs(Operation::Update, "pods", n1, "", "p"), "{}", R"({"spec":{"nodeName":"n1"}})"),
      "pods \"p\" is forbidden: unexpected operation \"UPDATE\", node \"n1\" can only create and delete "
      "mirror pods");
  EXPECT_EQ(ok(attrs(Operation::Delete, "pods", n1, "", "p"), "{}", R"({"spec":{"nodeName":"n1"}})"), "");
  EXPECT_EQ(ok(attrs(Operation::Update, "nodes", n1, "", "n1"), R"({"spec":{"taints":[{"key":"k"}]}})",
               R"({"spec":{}})"),
            "nodes \"n1\" is forbidden: node \"n1\" is not allowed to modify taints");
  EXPECT_EQ(ok(attrs(Operation::Update, "nodes", n1, "status", "n1"), R"({"spec":{"taints":[{"key":"k"}]}})",
               R"({"spec":{}})"),
            "");
  EXPECT_EQ(ok(attrs(Operation::Create, "nodes", n1), R"({"metadata":{"name":"n2"}})"),
            "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\"");
  EXPECT_EQ(
      ok(attrs(Operation::Create, "leases", n1), R"({"metadata":{"name":"n2"}})"),
      "leases.coordination.k8s.io \"n2\" is forbidden: can only access node lease with the same name as the "
      "requesting node");
  // Not a node: untouched.
  EXPECT_EQ(ok(attrs(Operation::Update, "pods", "alice", "", "p"), "{}", R"({"spec":{"nodeName":"n1"}})"),
            "");
}

namespace {

// Records what the store asks of it; refuses what `refuse` names.
struct Recorder final : admission::Plugin {
  mutable std::vector<std::string> seen;
  std::string refuse;
  const char* name() const override { return "Recorder"; }
  Status admit(const Attributes& a, json::Document& obj, const json::Value* old) const override {
    seen.push_back(std::string("admit ") + admission::operationName(a.operation) + (old ? " old" : ""));
    if (a.operation == Operation::Create)
      json::setString(json::ensureObject(obj, "metadata", obj.GetAllocator()), "generateName", "",
                      obj.GetAllocator());
    return refuse == seen.back() ? Status(ApiError::forbidden("", "configmaps", a.name, "no")) : okStatus();
  }
  Status validate(const Attributes& a, const json::Value&, const json::Value* old) const override {
    seen.push_back(std::string("validate ") + admission::operationName(a.operation) + (old ? " old" : ""));
    return refuse == seen.back() ? Status(ApiError::forbidden("", "configmaps", a.name, "no")) : okStatus();
  }
};

}  // namespace

TEST(Admission, TheStoreRunsBothPhasesOnEveryWrite) {
  Env e;
  ASSERT_TRUE(e.reg->bootstrap(6443).ok());
  admission::Chain chain;
  auto rec = std::make_unique<Recorder>();
  Recorder* r = rec.get();
  chain.add(std::move(rec));
  registry::Store& cms = *e.reg->store("", "v1", "configmaps");
  registry::WriteOptions wo;
  wo.admission.chain = &chain;
  wo.admission.attributes.resource = &cms.resource();
  auto cm = doc(R"({"metadata":{"name":"a"},"data":{"k":"v"}})");
  ASSERT_TRUE(cms.create("default", cm, wo).ok());
  auto upd = doc(R"({"metadata":{"name":"a"},"data":{"k":"w"}})");
  ASSERT_TRUE(cms.update("default", "a", upd, wo, registry::Subresource::Main).ok());
  registry::DeleteOptions d;
  d.admission = wo.admission;
  r->refuse = "validate DELETE old";
  auto del = cms.remove("default", "a", d);
  ASSERT_FALSE(del.ok());
  EXPECT_EQ(del.error().code, 403);
  EXPECT_TRUE(cms.get("default", "a").ok());  // refused: still there
  EXPECT_EQ(r->seen,
            (std::vector<std::string>{"admit CREATE", "validate CREATE", "admit UPDATE old",
                                      "validate UPDATE old", "admit DELETE old", "validate DELETE old"}));
}
