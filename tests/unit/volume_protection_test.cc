// The pvc-protection, pv-protection and ephemeral volume controllers' syncs against the
// fake API server: finalizers added, kept while a scheduled pod names the claim or the
// volume is Bound, removed after; an ephemeral volume's claim made from its template and
// owned by the pod.
#include <gtest/gtest.h>

#include "controller_env.h"
#include "controllers/ephemeral/ephemeral_controller.h"
#include "controllers/volumeprotection/protection_controllers.h"

using namespace shepherd;
using namespace shepherd::controllers;
using shepherd::testing::Env;

namespace {

const char* kClaims = "/api/v1/namespaces/ns/persistentvolumeclaims";
const char* kPods = "/api/v1/namespaces/ns/pods";

std::string finalizers(const json::Document& d) {
  const json::Value* f = json::findPath(d, {"metadata", "finalizers"});
  return f ? json::serialize(*f) : "none";
}

}  // namespace

TEST(ClaimProtection, AClaimGoesOnlyWhenNoScheduledPodNamesIt) {
  Env e;
  volumeprotection::ClaimProtectionController pc(e.fake, e.informers);
  auto stop = e.stopBeforeController();
  e.start();
  e.create(kClaims, R"({"metadata":{"name":"data","namespace":"ns"},"spec":{}})");
  e.settle();
  ASSERT_TRUE(pc.syncNow("ns/data").ok());
  EXPECT_EQ(finalizers(e.get(std::string(kClaims) + "/data")), R"(["kubernetes.io/pvc-protection"])");
  e.create(kPods, R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"nodeName":"n1",
      "volumes":[{"name":"v","persistentVolumeClaim":{"claimName":"data"}}],"containers":[]}})");
  ASSERT_TRUE(e.fake.del(std::string(kClaims) + "/data").ok());
  e.settle();
  ASSERT_TRUE(pc.syncNow("ns/data").ok());
  EXPECT_EQ(finalizers(e.get(std::string(kClaims) + "/data")), R"(["kubernetes.io/pvc-protection"])");
  // A pod being deleted still holds it; one gone does not.
  ASSERT_TRUE(e.fake.del(std::string(kPods) + "/p", R"({"gracePeriodSeconds":0})").ok());
  e.settle();
  ASSERT_TRUE(pc.syncNow("ns/data").ok());
  EXPECT_FALSE(e.fake.get(std::string(kClaims) + "/data").ok());  // the last finalizer went: gone
}

TEST(VolumeProtection, AVolumeGoesOnlyWhenNotBound) {
  Env e;
  volumeprotection::VolumeProtectionController vc(e.fake, e.informers);
  auto stop = e.stopBeforeController();
  e.start();
  e.create("/api/v1/persistentvolumes",
           R"({"metadata":{"name":"pv","finalizers":["kubernetes.io/pv-protection"]},
      "spec":{},"status":{"phase":"Bound"}})");
  ASSERT_TRUE(e.fake.del("/api/v1/persistentvolumes/pv").ok());
  e.settle();
  ASSERT_TRUE(vc.syncNow("pv").ok());
  EXPECT_TRUE(e.fake.get("/api/v1/persistentvolumes/pv").ok());
  e.patch("/api/v1/persistentvolumes/pv/status", R"({"status":{"phase":"Released"}})");
  e.settle();
  ASSERT_TRUE(vc.syncNow("pv").ok());
  EXPECT_FALSE(e.fake.get("/api/v1/persistentvolumes/pv").ok());
}

TEST(EphemeralVolumes, APodsEphemeralVolumeGetsItsOwnClaim) {
  Env e;
  ephemeral::EphemeralVolumeController ec(e.fake, e.informers, e.events);
  auto stop = e.stopBeforeController();
  e.start();
  auto pod = e.create(kPods, R"({"metadata":{"name":"web","namespace":"ns"},"spec":{"containers":[],
      "volumes":[{"name":"scratch","ephemeral":{"volumeClaimTemplate":{"metadata":{"labels":{"a":"b"}},
      "spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}}]}})");
  e.settle();
  ASSERT_TRUE(ec.syncNow("ns/web").ok());
  auto claim = e.get(std::string(kClaims) + "/web-scratch");
  EXPECT_EQ(json::getStringPath(claim, {"metadata", "labels", "a"}), "b");
  EXPECT_EQ(json::getStringPath(claim, {"spec", "resources", "requests", "storage"}), "1Gi");
  const json::Value& ref = (*json::findPath(claim, {"metadata", "ownerReferences"}))[0];
  EXPECT_EQ(json::getString(ref, "uid"), json::getStringPath(pod, {"metadata", "uid"}));
  EXPECT_TRUE(json::getBool(ref, "controller"));
  EXPECT_TRUE(json::getBool(ref, "blockOwnerDeletion"));
}
