// The PersistentVolume binder's sync against the fake API server: static binding to the
// smallest fitting volume, pre-bound volumes, claims without a volume (no class, a
// provisioner's class, WaitForFirstConsumer), the default class given retroactively, and a
// volume's life after its claim goes (Released, kept by Retain, the provisioner's to
// delete, Failed when nothing can delete it).
#include "controllers/persistentvolume/pv_controller.h"

#include <gtest/gtest.h>

#include "controller_env.h"
#include "meta/persistent_volumes.h"

using namespace shepherd;
using namespace shepherd::controllers::persistentvolume;
using shepherd::testing::Env;
using namespace shepherd::meta;

namespace {

const char* kClaims = "/api/v1/namespaces/ns/persistentvolumeclaims";
const char* kVolumes = "/api/v1/persistentvolumes";
const char* kClasses = "/apis/storage.k8s.io/v1/storageclasses";

std::string volume(const std::string& name, const std::string& size, const std::string& extra = "") {
  return R"({"metadata":{"name":")" + name + R"("},"spec":{"capacity":{"storage":")" + size +
         R"("},"accessModes":["ReadWriteOnce"],"persistentVolumeReclaimPolicy":"Retain","hostPath":{"path":"/tmp/)" +
         name + R"("})" + extra + R"(},"status":{"phase":"Available"}})";
}

std::string claim(const std::string& name, const std::string& spec_extra,
                  const std::string& annotations = "{}") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","annotations":)" + annotations +
         R"(},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}})" +
         spec_extra + R"(},"status":{"phase":"Pending"}})";
}

std::string str(const json::Document& d, std::initializer_list<std::string_view> path) {
  return std::string(json::getStringPath(d, path));
}

struct Fixture {
  Env e;
  PersistentVolumeController pc{e.fake, e.informers, e.events};
  Env::StopGuard stop = e.stopBeforeController();
  Fixture() { e.start(); }
  std::chrono::milliseconds sync(const std::string& key) {
    e.settle();
    auto r = pc.syncNow(key);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    e.settle();
    return r.ok() ? r.value().requeue_after : std::chrono::milliseconds(-1);
  }
  json::Document claimNow(const std::string& name) { return e.get(std::string(kClaims) + "/" + name); }
  json::Document volumeNow(const std::string& name) { return e.get(std::string(kVolumes) + "/" + name); }
  // The reasons of the events posted so far (stops the recorder, which posts its queue).
  std::vector<std::string> eventReasons() {
    e.events.stop();
    std::vector<std::string> out;
    for (const auto& a : e.fake.actions("create")) {
      if (a.path.find("/events") == std::string::npos) continue;
      json::Document ev = shepherd::testing::doc(a.body);
      out.push_back(std::string(json::getString(ev, "reason")) + ": " +
                    std::string(json::getString(ev, json::find(ev, "note") ? "note" : "message")));
    }
    return out;
  }
};

}  // namespace

TEST(PersistentVolumeBinder, BindsAClaimToTheSmallestVolumeThatFits) {
  Fixture f;
  f.e.create(kVolumes, volume("big", "5Gi", R"(,"storageClassName":"")"));
  f.e.create(kVolumes, volume("small", "1Gi", R"(,"storageClassName":"")"));
  f.e.create(kVolumes, volume("tiny", "500Mi", R"(,"storageClassName":"")"));
  auto c = f.e.create(kClaims, claim("data", R"(,"storageClassName":"")"));
  f.sync("claim/ns/data");
  auto pv = f.volumeNow("small");
  EXPECT_EQ(str(pv, {"spec", "claimRef", "name"}), "data");
  EXPECT_EQ(str(pv, {"spec", "claimRef", "namespace"}), "ns");
  EXPECT_EQ(str(pv, {"spec", "claimRef", "uid"}), str(c, {"metadata", "uid"}));
  EXPECT_EQ(str(pv, {"spec", "claimRef", "kind"}), "PersistentVolumeClaim");
  EXPECT_EQ(str(pv, {"metadata", "annotations", kBoundByController}), "yes");
  EXPECT_EQ(str(pv, {"status", "phase"}), "Bound");
  auto pvc = f.claimNow("data");
  EXPECT_EQ(str(pvc, {"spec", "volumeName"}), "small");
  EXPECT_EQ(str(pvc, {"metadata", "annotations", kBindCompleted}), "yes");
  EXPECT_EQ(str(pvc, {"metadata", "annotations", kBoundByController}), "yes");
  EXPECT_EQ(str(pvc, {"status", "phase"}), "Bound");
  EXPECT_EQ(str(pvc, {"status", "capacity", "storage"}), "1Gi");
  EXPECT_EQ(json::serialize(*json::findPath(pvc, {"status", "accessModes"})), R"(["ReadWriteOnce"])");
  EXPECT_EQ(str(f.volumeNow("big"), {"status", "phase"}), "Available");
  // Bound: another sync writes nothing.
  size_t writes = f.e.fake.actions("update").size();
  f.sync("claim/ns/data");
  f.sync("volume/small");
  EXPECT_EQ(f.e.fake.actions("update").size(), writes);
}

TEST(PersistentVolumeBinder, APreBoundVolumeBindsWithoutTheControllerAnnotation) {
  Fixture f;
  f.e.create(kVolumes, volume("mine", "2Gi", R"(,"claimRef":{"namespace":"ns","name":"data"})"));
  f.e.create(kClaims, claim("data", R"(,"storageClassName":"")"));
  f.sync("claim/ns/data");
  auto pv = f.volumeNow("mine");
  EXPECT_FALSE(hasAnnotation(pv, kBoundByController));
  EXPECT_EQ(str(pv, {"status", "phase"}), "Bound");
  EXPECT_EQ(str(f.claimNow("data"), {"spec", "volumeName"}), "mine");
}

TEST(PersistentVolumeBinder, AClaimWithoutAVolumeWaitsWithUpstreamsEvents) {
  Fixture f;
  f.e.create(kClasses, R"({"metadata":{"name":"fast"},"provisioner":"example.com/disk",
                          "volumeBindingMode":"Immediate","reclaimPolicy":"Delete"})");
  f.e.create(kClasses, R"({"metadata":{"name":"later"},"provisioner":"example.com/disk",
                          "volumeBindingMode":"WaitForFirstConsumer","reclaimPolicy":"Delete"})");
  f.e.create(kClaims, claim("none", R"(,"storageClassName":"")"));
  f.e.create(kClaims, claim("fast", R"(,"storageClassName":"fast")"));
  f.e.create(kClaims, claim("later", R"(,"storageClassName":"later")"));
  EXPECT_EQ(f.sync("claim/ns/none"), PersistentVolumeController::kResync);
  f.sync("claim/ns/fast");
  f.sync("claim/ns/later");
  EXPECT_EQ(str(f.claimNow("fast"), {"metadata", "annotations", kStorageProvisioner}), "example.com/disk");
  EXPECT_EQ(str(f.claimNow("fast"), {"metadata", "annotations", kBetaStorageProvisioner}),
            "example.com/disk");
  EXPECT_FALSE(hasAnnotation(f.claimNow("later"), kStorageProvisioner));
  // The scheduler picked a node: now the provisioner is asked.
  f.e.patch(std::string(kClaims) + "/later",
            R"({"metadata":{"annotations":{"volume.kubernetes.io/selected-node":"n1"}}})");
  f.sync("claim/ns/later");
  EXPECT_EQ(str(f.claimNow("later"), {"metadata", "annotations", kStorageProvisioner}), "example.com/disk");
  EXPECT_EQ(str(f.claimNow("none"), {"status", "phase"}), "Pending");
  std::string waiting =
      "ExternalProvisioning: Waiting for a volume to be created either by the external provisioner "
      "'example.com/disk' or manually by the system administrator. If volume creation is delayed, please "
      "verify that the provisioner is running and correctly registered.";
  EXPECT_EQ(f.eventReasons(),
            (std::vector<std::string>{
                "FailedBinding: no persistent volumes available for this claim and no storage class is set",
                waiting, "WaitForFirstConsumer: waiting for first consumer to be created before binding",
                waiting}));
}

TEST(PersistentVolumeBinder, AClaimWithoutAClassGetsTheNewestDefault) {
  Fixture f;
  f.e.create(kClasses, R"({"metadata":{"name":"old","creationTimestamp":"2026-01-01T00:00:00Z",
      "annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"a","volumeBindingMode":"Immediate"})");
  f.e.create(kClasses, R"({"metadata":{"name":"new","creationTimestamp":"2026-02-01T00:00:00Z",
      "annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"b","volumeBindingMode":"Immediate"})");
  f.e.create(kClaims, claim("data", ""));
  f.sync("claim/ns/data");
  EXPECT_EQ(str(f.claimNow("data"), {"spec", "storageClassName"}), "new");
}

TEST(PersistentVolumeBinder, AVolumeWhoseClaimIsGoneIsReleasedAndReclaimed) {
  Fixture f;
  for (auto [name, policy, provisioner] :
       {std::tuple{"kept", "Retain", ""}, std::tuple{"theirs", "Delete", "x.io/p"},
        std::tuple{"orphan", "Delete", ""}}) {
    std::string ann = *provisioner ? R"(,"annotations":{"pv.kubernetes.io/provisioned-by":")" +
                                         std::string(provisioner) + R"("})"
                                   : "";
    f.e.create(kVolumes,
               R"({"metadata":{"name":")" + std::string(name) + "\"" + ann +
                   R"(},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],
        "persistentVolumeReclaimPolicy":")" +
                   policy +
                   R"(","hostPath":{"path":"/tmp/x"},"claimRef":{"namespace":"ns","name":"gone","uid":"u-1"}},
        "status":{"phase":"Bound"}})");
  }
  f.sync("volume/kept");
  f.sync("volume/theirs");
  f.sync("volume/orphan");
  EXPECT_EQ(str(f.volumeNow("kept"), {"status", "phase"}), "Released");
  EXPECT_EQ(str(f.volumeNow("kept"), {"spec", "claimRef", "uid"}), "u-1");
  EXPECT_EQ(str(f.volumeNow("theirs"), {"status", "phase"}), "Released");
  EXPECT_EQ(str(f.volumeNow("orphan"), {"status", "phase"}), "Failed");
  EXPECT_EQ(f.eventReasons(),
            std::vector<std::string>{"VolumeFailedDelete: error getting deleter volume plugin for volume "
                                     "\"orphan\": no deletable volume plugin matched"});
}

TEST(PersistentVolumeBinder, AVolumeMismatchIsReported) {
  Fixture f;
  f.e.create(kVolumes, volume("small", "100Mi", R"(,"storageClassName":"")"));
  f.e.create(kClaims, claim("data", R"(,"storageClassName":"","volumeName":"small")"));
  f.sync("claim/ns/data");
  EXPECT_FALSE(json::findPath(f.volumeNow("small"), {"spec", "claimRef"}));
  EXPECT_EQ(f.eventReasons(), std::vector<std::string>{"VolumeMismatch: Cannot bind to requested volume "
                                                       "\"small\": requested PV is too small"});
}
