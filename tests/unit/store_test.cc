#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "registry/apiserver_leases.h"
#include "registry/registry.h"
#include "storage/sqlite_storage.h"
#include "test_util.h"

using namespace shepherd;
using namespace shepherd::registry;

namespace {

struct Env {
  testutil::TempDir dir;
  std::unique_ptr<storage::SqliteStorage> storage;
  std::unique_ptr<Registry> reg;
  Env() {
    storage::SqliteOptions o;
    o.path = dir.path() + "/db";
    storage = std::move(storage::SqliteStorage::open(o).value);
    auto r = Registry::start(*storage, RegistryOptions{});
    EXPECT_TRUE(r.ok());
    reg = std::move(r.value());
    EXPECT_TRUE(reg->bootstrap(6443).ok());
  }
  Store& pods() { return *reg->store("", "v1", "pods"); }
  Store& store(const char* g, const char* plural) { return *reg->store(g, "v1", plural); }
};

json::Document doc(const std::string& s) {
  json::Document d;
  EXPECT_TRUE(json::parse(s, d).ok()) << s;
  return d;
}

json::Document obj(const ObjectPtr& o) {
  return doc(o->json);
}

const char* kPod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x"}]}})";

}  // namespace

TEST(Store, CreateSetsServerMetadataAndDefaults) {
  Env e;
  auto d = doc(kPod);
  auto r = e.pods().create("default", d, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto o = obj(r.value());
  EXPECT_EQ(json::getStringPath(o, {"metadata", "namespace"}), "default");
  EXPECT_EQ(json::getStringPath(o, {"metadata", "uid"}).size(), 36u);
  EXPECT_FALSE(json::getStringPath(o, {"metadata", "creationTimestamp"}).empty());
  EXPECT_EQ(json::getStringPath(o, {"metadata", "resourceVersion"}), std::to_string(r.value()->mod_revision));
  EXPECT_EQ(json::getInt(*json::find(o, "metadata"), "generation").value(), 1);
  EXPECT_EQ(json::getStringPath(o, {"status", "phase"}), "Pending");

  auto dup = doc(kPod);
  auto again = e.pods().create("default", dup, {});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, 409);
  EXPECT_EQ(again.error().reason, "AlreadyExists");
  EXPECT_EQ(again.error().message, "pods \"p\" already exists");
}

TEST(Store, NamespaceChecksAndGenerateName) {
  Env e;
  auto wrongNs = doc(
      R"({"metadata":{"name":"p","namespace":"other"},"spec":{"containers":[{"name":"c","image":"x"}]}})");
  auto r = e.pods().create("default", wrongNs, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 400);
  auto missingNs = doc(kPod);
  auto m = e.pods().create("nope", missingNs, {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, 404);
  EXPECT_EQ(m.error().message, "namespaces \"nope\" not found");
  auto gen = doc(R"({"metadata":{"generateName":"web-"},"spec":{"containers":[{"name":"c","image":"x"}]}})");
  auto g = e.pods().create("default", gen, {});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g.value()->name.rfind("web-", 0), 0u);
  EXPECT_EQ(g.value()->name.size(), 9u);
  auto noName = doc(R"({"spec":{"containers":[{"name":"c","image":"x"}]}})");
  auto n = e.pods().create("default", noName, {});
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().code, 422);
  EXPECT_EQ(n.error().causes[0].field, "metadata.name");
}

TEST(Store, OptimisticConcurrencyAndGeneration) {
  Env e;
  auto d = doc(kPod);
  auto created = e.pods().create("default", d, {});
  ASSERT_TRUE(created.ok());
  std::string rv = std::to_string(created.value()->mod_revision);

  // A status-only change through the main endpoint is ignored: nothing is written.
  auto sameSpec = obj(created.value());
  json::setString(*json::find(sameSpec, "status"), "phase", "Running", sameSpec.GetAllocator());
  auto u0 = e.pods().update("default", "p", sameSpec, {}, Subresource::Main);
  ASSERT_TRUE(u0.ok());
  EXPECT_EQ(json::getStringPath(obj(u0->object), {"status", "phase"}), "Pending");
  EXPECT_EQ(u0->object->mod_revision, created.value()->mod_revision);

  auto newImage = obj(created.value());
  json::setString(newImage["spec"]["containers"][0], "image", "y", newImage.GetAllocator());
  auto u1 = e.pods().update("default", "p", newImage, {}, Subresource::Main);
  ASSERT_TRUE(u1.ok()) << u1.error().message;
  EXPECT_GT(u1->object->mod_revision, created.value()->mod_revision);
  EXPECT_EQ(json::getInt(*json::find(obj(u1->object), "metadata"), "generation").value(), 2);

  // The stale resourceVersion is refused.
  auto stale = obj(created.value());
  json::setString(stale["spec"]["containers"][0], "image", "z", stale.GetAllocator());
  auto u2 = e.pods().update("default", "p", stale, {}, Subresource::Main);
  ASSERT_FALSE(u2.ok());
  EXPECT_EQ(u2.error().code, 409);
  EXPECT_EQ(u2.error().reason, "Conflict");

  // Without a resourceVersion the update is unconditional.
  json::remove(*json::find(stale, "metadata"), "resourceVersion");
  auto u3 = e.pods().update("default", "p", stale, {}, Subresource::Main);
  ASSERT_TRUE(u3.ok());
  EXPECT_EQ(json::getString(obj(u3->object)["spec"]["containers"][0], "image"), "z");

  // Status writes change only status, and do not bump generation.
  auto st = obj(u3->object);
  json::setString(*json::find(st, "status"), "phase", "Running", st.GetAllocator());
  json::setString(st["spec"]["containers"][0], "image", "ignored", st.GetAllocator());
  auto u4 = e.pods().update("default", "p", st, {}, Subresource::Status);
  ASSERT_TRUE(u4.ok());
  auto after = obj(u4->object);
  EXPECT_EQ(json::getStringPath(after, {"status", "phase"}), "Running");
  EXPECT_EQ(json::getString(after["spec"]["containers"][0], "image"), "z");
  EXPECT_EQ(json::getInt(*json::find(after, "metadata"), "generation").value(), 3);
}

TEST(Store, DeletionUnboundBoundAndFinalizers) {
  Env e;
  auto d = doc(kPod);
  ASSERT_TRUE(e.pods().create("default", d, {}).ok());
  auto del = e.pods().remove("default", "p", {});
  ASSERT_TRUE(del.ok());
  EXPECT_TRUE(del->deleted_now);
  EXPECT_FALSE(e.pods().get("default", "p").ok());

  auto bound =
      doc(R"({"metadata":{"name":"b"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"x"}]}})");
  ASSERT_TRUE(e.pods().create("default", bound, {}).ok());
  auto g = e.pods().remove("default", "b", {});
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(g->deleted_now);
  auto kept = obj(e.pods().get("default", "b").value());
  EXPECT_FALSE(json::getStringPath(kept, {"metadata", "deletionTimestamp"}).empty());
  EXPECT_EQ(json::getInt(*json::find(kept, "metadata"), "deletionGracePeriodSeconds").value(), 30);
  // The node confirms with grace 0 and the pod's uid.
  DeleteOptions final;
  final.grace_period_seconds = 0;
  final.precondition_uid = "wrong";
  auto bad = e.pods().remove("default", "b", final);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, 409);
  final.precondition_uid = std::string(json::getStringPath(kept, {"metadata", "uid"}));
  auto done = e.pods().remove("default", "b", final);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->deleted_now);

  auto cm = doc(R"({"metadata":{"name":"f","finalizers":["example.com/hold"]},"data":{"a":"b"}})");
  Store& cms = e.store("", "configmaps");
  ASSERT_TRUE(cms.create("default", cm, {}).ok());
  auto held = cms.remove("default", "f", {});
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(held->deleted_now);
  // Removing the last finalizer completes the deletion.
  auto out = cms.modify(
      "default", "f",
      [](json::Document& o) {
        json::remove(*json::find(o, "metadata"), "finalizers");
        return okStatus();
      },
      {}, Subresource::Main);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_FALSE(cms.get("default", "f").ok());
}

TEST(Store, NamespaceDeletionWaitsForFinalize) {
  Env e;
  Store& ns = e.store("", "namespaces");
  auto d = doc(R"({"metadata":{"name":"team"}})");
  ASSERT_TRUE(ns.create("", d, {}).ok());
  auto del = ns.remove("", "team", {});
  ASSERT_TRUE(del.ok());
  EXPECT_FALSE(del->deleted_now);
  EXPECT_EQ(json::getStringPath(obj(del->object), {"status", "phase"}), "Terminating");
  // No new content in a terminating namespace.
  auto p = doc(kPod);
  auto r = e.pods().create("team", p, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 403);
  auto fin = doc(R"({"metadata":{"name":"team"},"spec":{"finalizers":[]}})");
  auto f = ns.update("", "team", fin, {}, Subresource::Finalize);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_FALSE(ns.get("", "team").ok());
}

TEST(Store, ListsPageConsistentlyWithExactRemainingCount) {
  Env e;
  Store& cms = e.store("", "configmaps");
  for (int i = 0; i < 23; ++i) {
    auto d = doc(R"({"metadata":{"name":"c)" + std::to_string(100 + i) + R"(","labels":{"i":")" +
                 std::to_string(i % 2) + R"("}}})");
    ASSERT_TRUE(cms.create("default", d, {}).ok());
  }
  ListOptions o;
  o.ns = "default";
  o.limit = 10;
  auto p1 = cms.list(o);
  ASSERT_TRUE(p1.ok());
  EXPECT_EQ(p1->items.size(), 10u);
  ASSERT_TRUE(p1->remaining_item_count.has_value());
  EXPECT_EQ(*p1->remaining_item_count, 13);
  auto extra = doc(R"({"metadata":{"name":"c000"}})");
  ASSERT_TRUE(cms.create("default", extra, {}).ok());
  o.continue_token = p1->continue_token;
  auto p2 = cms.list(o);
  ASSERT_TRUE(p2.ok());
  EXPECT_EQ(p2->revision, p1->revision);
  EXPECT_EQ(*p2->remaining_item_count, 3);
  o.continue_token = "garbage";
  auto bad = cms.list(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, 400);

  ListOptions sel;
  sel.ns = "default";
  sel.label_selector = "i=1";
  auto odd = cms.list(sel);
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->items.size(), 11u);
  sel.label_selector = "";
  sel.field_selector = "metadata.name=c105";
  auto one = cms.list(sel);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->items.size(), 1u);
  EXPECT_EQ(one->items[0]->name, "c105");
  sel.field_selector = "spec.nodeName=x";
  auto unsupported = cms.list(sel);
  ASSERT_FALSE(unsupported.ok());
  EXPECT_EQ(unsupported.error().code, 400);
}

TEST(Store, ServicesGetDistinctClusterIPs) {
  Env e;
  Store& svcs = e.store("", "services");
  auto a = doc(R"({"metadata":{"name":"a"},"spec":{"ports":[{"port":80}]}})");
  auto b = doc(R"({"metadata":{"name":"b"},"spec":{"type":"NodePort","ports":[{"port":80}]}})");
  auto ra = svcs.create("default", a, {});
  auto rb = svcs.create("default", b, {});
  ASSERT_TRUE(ra.ok() && rb.ok());
  auto ipa = std::string(json::getStringPath(obj(ra.value()), {"spec", "clusterIP"}));
  auto ipb = std::string(json::getStringPath(obj(rb.value()), {"spec", "clusterIP"}));
  EXPECT_NE(ipa, ipb);
  EXPECT_NE(ipa, "10.96.0.1");  // the kubernetes service holds the first address
  auto np = json::getInt(obj(rb.value())["spec"]["ports"][0], "nodePort");
  ASSERT_TRUE(np.has_value());
  EXPECT_GE(*np, 30000);
  auto clash =
      doc(R"({"metadata":{"name":"c"},"spec":{"clusterIP":")" + ipa + R"(","ports":[{"port":80}]}})");
  auto rc = svcs.create("default", clash, {});
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.error().code, 422);
  // Deleting releases the address for reuse.
  ASSERT_TRUE(svcs.remove("default", "a", {}).ok());
  auto reuse =
      doc(R"({"metadata":{"name":"d"},"spec":{"clusterIP":")" + ipa + R"(","ports":[{"port":80}]}})");
  EXPECT_TRUE(svcs.create("default", reuse, {}).ok());
  // An update that omits the clusterIP keeps it.
  auto upd = doc(R"({"metadata":{"name":"d"},"spec":{"ports":[{"port":81}]}})");
  auto ru = svcs.update("default", "d", upd, {}, Subresource::Main);
  ASSERT_TRUE(ru.ok()) << ru.error().message;
  EXPECT_EQ(json::getStringPath(obj(ru->object), {"spec", "clusterIP"}), ipa);
}

TEST(Store, EventsAreOneStoreBehindTwoAPIs) {
  Env e;
  auto core = doc(
      R"({"metadata":{"name":"e1"},"involvedObject":{"kind":"Pod","name":"p"},"message":"hello","reason":"Test"})");
  ASSERT_TRUE(e.store("", "events").create("default", core, {}).ok());
  Store& v1 = *e.reg->store("events.k8s.io", "v1", "events");
  auto got = v1.get("default", "e1");
  ASSERT_TRUE(got.ok());
  auto o = obj(got.value());
  EXPECT_EQ(json::getString(o, "apiVersion"), "events.k8s.io/v1");
  EXPECT_EQ(json::getString(o, "note"), "hello");
  EXPECT_EQ(json::getStringPath(o, {"regarding", "name"}), "p");
  ListOptions lo;
  lo.ns = "default";
  lo.field_selector = "regarding.name=p";
  auto l = v1.list(lo);
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->items.size(), 1u);
}

TEST(Store, DryRunWritesNothing) {
  Env e;
  auto d = doc(kPod);
  WriteOptions dry;
  dry.dry_run = true;
  int64_t before = e.storage->currentRevision();
  auto r = e.pods().create("default", d, dry);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(json::getStringPath(obj(r.value()), {"metadata", "resourceVersion"}), "");
  EXPECT_EQ(e.storage->currentRevision(), before);
  EXPECT_FALSE(e.pods().get("default", "p").ok());
}

TEST(Store, StatePersistsAcrossRestart) {
  testutil::TempDir dir;
  std::string uid;
  int64_t rv;
  {
    storage::SqliteOptions o;
    o.path = dir.path() + "/db";
    auto s = std::move(storage::SqliteStorage::open(o).value);
    auto reg = std::move(Registry::start(*s, {}).value());
    ASSERT_TRUE(reg->bootstrap(1).ok());
    auto d = doc(kPod);
    auto r = reg->store("", "v1", "pods")->create("default", d, {});
    ASSERT_TRUE(r.ok());
    rv = r.value()->mod_revision;
    uid = std::string(json::getStringPath(obj(r.value()), {"metadata", "uid"}));
  }
  storage::SqliteOptions o;
  o.path = dir.path() + "/db";
  auto s = std::move(storage::SqliteStorage::open(o).value);
  auto reg = std::move(Registry::start(*s, {}).value());
  ASSERT_TRUE(reg->bootstrap(1).ok());  // idempotent
  auto p = reg->store("", "v1", "pods")->get("default", "p");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value()->mod_revision, rv);
  EXPECT_EQ(json::getStringPath(obj(p.value()), {"metadata", "uid"}), uid);
}

TEST(Store, OldEventsExpire) {
  Env e;
  Store& events = e.store("", "events");
  auto old = doc(R"({"metadata":{"name":"old"},"involvedObject":{"kind":"Pod","name":"p"},
      "lastTimestamp":"2020-01-01T00:00:00Z"})");
  auto fresh = doc(R"({"metadata":{"name":"fresh"},"involvedObject":{"kind":"Pod","name":"p"}})");
  ASSERT_TRUE(events.create("default", old, {}).ok());
  ASSERT_TRUE(events.create("default", fresh, {}).ok());
  // creationTimestamp is now for both; "old" is still young by its creation time.
  EXPECT_EQ(e.reg->expireEvents(std::chrono::hours(1)), 0u);
  auto o = obj(events.get("default", "old").value());
  // Pretend it was written long ago by rewriting its timestamps through the store.
  auto stale = events.modify(
      "default", "old",
      [](json::Document& d) {
        auto& a = d.GetAllocator();
        json::setString(*json::find(d, "metadata"), "creationTimestamp", "2020-01-01T00:00:00Z", a);
        return okStatus();
      },
      {}, Subresource::Main);
  ASSERT_TRUE(stale.ok());
  // creationTimestamp is server-set and cannot be rewritten by an update.
  EXPECT_NE(json::getStringPath(obj(stale->object), {"metadata", "creationTimestamp"}),
            "2020-01-01T00:00:00Z");
  EXPECT_EQ(e.reg->expireEvents(std::chrono::seconds(0)), 2u);
  EXPECT_FALSE(events.get("default", "old").ok());
  EXPECT_FALSE(events.get("default", "fresh").ok());
}

// Writers decode their value for the cache before the write (PreparedObjects); what the
// cache then serves must be byte for byte what decoding the stored value gives.
TEST(Store, PreparedObjectsMatchDecodingTheStoredValue) {
  Env e;
  auto d = doc(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"prep","labels":{"app":"x"},
      "annotations":{"note":"\"resourceVersion\":\"\""}},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"x"}]}})");
  auto r = e.pods().create("default", d, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ObjectPtr served = r.value();
  auto stored = e.storage->get(served->key);
  ASSERT_TRUE(stored.ok());
  ObjectPtr decoded = decodeObject(e.pods().resource(), served->key, stored.value.value, served->mod_revision,
                                   served->create_revision);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(served->json, decoded->json);
  EXPECT_EQ(served->labels, decoded->labels);
  EXPECT_EQ(served->fields, decoded->fields);
  EXPECT_EQ(served->mod_revision, decoded->mod_revision);

  // A prepared entry is used only for the very same bytes, and withdrawn with its ticket.
  PreparedObjects prepared;
  auto tmpl = decodeTemplate(e.pods().resource(), served->key, stored.value.value);
  ASSERT_TRUE(tmpl);
  std::string value = stored.value.value;
  {
    auto ticket = prepared.add(served->key, &value, *tmpl);
    EXPECT_EQ(prepared.take(served->key, value + " ", 7, 7), nullptr);
    EXPECT_EQ(prepared.take("/registry/pods/default/other", value, 7, 7), nullptr);
    ObjectPtr taken = prepared.take(served->key, value, 42, 40);
    ASSERT_TRUE(taken);
    EXPECT_EQ(taken->json, decodeObject(e.pods().resource(), served->key, value, 42, 40)->json);
    EXPECT_EQ(taken->create_revision, 40);
    EXPECT_EQ(prepared.take(served->key, value, 43, 40), nullptr);  // consumed
  }
  { auto ticket = prepared.add(served->key, &value, *tmpl); }
  EXPECT_EQ(prepared.take(served->key, value, 44, 40), nullptr);  // withdrawn
}

namespace {

// The Endpoints subsets of default/kubernetes as "address:port" strings, sorted.
std::vector<std::string> kubernetesEndpoints(Env& e) {
  std::vector<std::string> out;
  auto ep = e.store("", "endpoints").get("default", "kubernetes");
  if (!ep.ok()) return out;
  json::Document d = obj(ep.value());
  for (const auto& subset : json::find(d, "subsets")->GetArray()) {
    int64_t port = json::getInt(subset["ports"][0], "port").value_or(0);
    for (const auto& a : subset["addresses"].GetArray())
      out.push_back(std::string(json::getString(a, "ip")) + ":" + std::to_string(port));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(ApiServerLeases, EndpointsListEveryLiveServerAndDropExpiredOnes) {
  Env e;
  clock::FakeClock clk;
  ApiServerLeases a(*e.reg, {"127.0.0.1", 6443}, false, std::chrono::seconds(1), clk);
  ApiServerLeases b(*e.reg, {"127.0.0.2", 6443}, false, std::chrono::seconds(1), clk);
  ApiServerLeases c(*e.reg, {"127.0.0.1", 6444}, false, std::chrono::seconds(1), clk);
  ASSERT_TRUE(a.reconcile().ok());
  EXPECT_EQ(kubernetesEndpoints(e), (std::vector<std::string>{"127.0.0.1:6443"}));
  ASSERT_TRUE(b.reconcile().ok());
  auto live = c.reconcile();
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(live->size(), 3u);
  EXPECT_EQ(kubernetesEndpoints(e),
            (std::vector<std::string>{"127.0.0.1:6443", "127.0.0.1:6444", "127.0.0.2:6443"}));
  // One EndpointSlice per port.
  EXPECT_TRUE(e.store("discovery.k8s.io", "endpointslices").get("default", "kubernetes").ok());
  EXPECT_TRUE(e.store("discovery.k8s.io", "endpointslices").get("default", "kubernetes-6444").ok());

  // b and c stop renewing; a's next rounds drop them once their leases are older than the TTL.
  clk.advance(std::chrono::seconds(1));
  ASSERT_TRUE(a.reconcile().ok());
  EXPECT_EQ(kubernetesEndpoints(e).size(), 3u);  // renewed a TTL ago: still live
  clk.advance(std::chrono::seconds(1));
  ASSERT_TRUE(a.reconcile().ok());
  EXPECT_EQ(kubernetesEndpoints(e), (std::vector<std::string>{"127.0.0.1:6443"}));
  EXPECT_FALSE(e.store("discovery.k8s.io", "endpointslices").get("default", "kubernetes-6444").ok());

  // A server that stops cleanly takes itself out at once.
  ASSERT_TRUE(b.reconcile().ok());
  EXPECT_EQ(kubernetesEndpoints(e).size(), 2u);
  b.release();
  EXPECT_EQ(kubernetesEndpoints(e), (std::vector<std::string>{"127.0.0.1:6443"}));
  // An unchanged set writes nothing.
  int64_t rv = e.store("", "endpoints").get("default", "kubernetes").value()->mod_revision;
  ASSERT_TRUE(a.reconcile().ok());
  EXPECT_EQ(e.store("", "endpoints").get("default", "kubernetes").value()->mod_revision, rv);
}

TEST(ApiServerLeases, TheOnlyServerOfAnEmbeddedStoreDropsLeftoverLeasesAtOnce) {
  Env e;
  ApiServerLeases before(*e.reg, {"127.0.0.1", 40001}, false);
  ASSERT_TRUE(before.reconcile().ok());
  // Restarted on another port (SIGKILL: no release): the old lease is not waited for.
  ApiServerLeases after(*e.reg, {"127.0.0.1", 40002}, true);
  ASSERT_TRUE(after.reconcile().ok());
  EXPECT_EQ(kubernetesEndpoints(e), (std::vector<std::string>{"127.0.0.1:40002"}));
  // It writes nothing periodically: no lease of its own, and a second round is a no-op.
  storage::ListRequest leases;
  leases.prefix = "/registry/masterleases/";
  EXPECT_TRUE(e.storage->list(leases).value.kvs.empty());
  int64_t rev = e.storage->currentRevision();
  ASSERT_TRUE(after.reconcile().ok());
  EXPECT_EQ(e.storage->currentRevision(), rev);
}

// G3: the allocator's IP family checks on this single-stack IPv4 cluster.
TEST(Store, ServiceIPFamiliesOnAnIPv4Cluster) {
  Env e;
  Store& svcs = e.store("", "services");
  auto create = [&](const std::string& name, const std::string& spec) -> std::string {
    auto d = doc(R"({"metadata":{"name":")" + name + R"("},"spec":)" + spec + "}");
    auto r = svcs.create("default", d, {});
    return r.ok() ? "" : std::to_string(r.error().code) + " " + r.error().message;
  };
  EXPECT_EQ(
      create("a", R"({"ipFamilies":["IPv6"],"ports":[{"port":80}]})"),
      "422 Service \"a\" is invalid: spec.ipFamilies[0]: Invalid value: \"IPv6\": not configured on this "
      "cluster");
  EXPECT_EQ(create("b", R"({"ipFamilyPolicy":"RequireDualStack","ports":[{"port":80}]})"),
            "422 Service \"b\" is invalid: spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this "
            "cluster is "
            "not configured for dual-stack services");
  EXPECT_EQ(
      create("c", R"({"ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4","IPv6"],"ports":[{"port":80}]})"),
      "422 Service \"c\" is invalid: spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be "
      "'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified");
  EXPECT_EQ(
      create("d", R"({"clusterIP":"fd00::10","ports":[{"port":80}]})"),
      "422 Service \"d\" is invalid: spec.clusterIPs[0]: Invalid value: []string{\"fd00::10\"}: IPv6 is not "
      "configured on this cluster");
  EXPECT_EQ(
      create("e", R"({"ipFamilies":["IPv5","IPv5"],"ports":[{"port":80}]})"),
      "422 Service \"e\" is invalid: [spec.ipFamilies[0]: Unsupported value: \"IPv5\": supported values: "
      "\"IPv4\", \"IPv6\", spec.ipFamilies[1]: Unsupported value: \"IPv5\": supported values: \"IPv4\", "
      "\"IPv6\", spec.ipFamilies[1]: Duplicate value: \"IPv5\"]");
  // PreferDualStack stays single-family; a headless service without selector asks for both.
  EXPECT_EQ(create("f", R"({"ipFamilyPolicy":"PreferDualStack","ports":[{"port":80}]})"), "");
  EXPECT_EQ(create("g", R"({"clusterIP":"None"})"), "");
  auto g = svcs.get("default", "g");
  ASSERT_TRUE(g.ok());
  auto go = obj(g.value());
  EXPECT_EQ(json::getStringPath(go, {"spec", "ipFamilyPolicy"}), "RequireDualStack");
  EXPECT_EQ(json::serialize(*json::findPath(go, {"spec", "ipFamilies"})), R"(["IPv4","IPv6"])");
}

// M1-M4, M6: metadata rules and paths.
TEST(Store, MetadataFinalizersOwnersAndGenerateName) {
  Env e;
  Store& cms = e.store("", "configmaps");
  auto create = [&](const std::string& meta) -> std::string {
    auto d = doc(R"({"metadata":)" + meta + "}");
    auto r = cms.create("default", d, {});
    return r.ok() ? "" : r.error().message;
  };
  EXPECT_EQ(
      create(R"({"name":"a","finalizers":["cleanup","a b/c"]})"),
      "ConfigMap \"a\" is invalid: [metadata.finalizers: Invalid value: \"a b/c\": prefix part a lowercase "
      "RFC "
      "1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
      "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), metadata.finalizers[0]: Invalid "
      "value: \"cleanup\": name is neither a standard finalizer name nor is it fully qualified]");
  EXPECT_EQ(create(R"({"name":"b","finalizers":["orphan","foregroundDeletion"]})"),
            "ConfigMap \"b\" is invalid: metadata.finalizers: Invalid value: []string{\"orphan\", "
            "\"foregroundDeletion\"}: finalizer orphan and foregroundDeletion cannot be both set");
  EXPECT_EQ(
      create(R"({"name":"c","ownerReferences":[{"apiVersion":"v1","kind":"Event","name":"e","uid":"u"},
      {"apiVersion":"","kind":"ReplicaSet","name":"r","uid":"u2"}]})"),
      "ConfigMap \"c\" is invalid: [metadata.ownerReferences: Invalid value: "
      "&OwnerReference{Kind:Event,Name:e,"
      "UID:u,APIVersion:v1,Controller:nil,BlockOwnerDeletion:nil,}: /v1, Kind=Event is disallowed from being "
      "an owner, metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty]");
  std::string generated = create(R"({"generateName":"Foo-"})");
  EXPECT_NE(generated.find("[metadata.generateName: Invalid value: \"Foo-\": a lowercase RFC 1123 subdomain"),
            std::string::npos)
      << generated;
  EXPECT_NE(generated.find(", metadata.name: Invalid value: \"Foo-"), std::string::npos) << generated;
  // Annotation keys are checked lowercased.
  EXPECT_EQ(create(R"({"name":"d","annotations":{"Example.com/Foo":"x"}})"), "");
}
