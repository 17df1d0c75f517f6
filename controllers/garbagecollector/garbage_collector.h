// Garbage collector: deletes objects whose owners are gone, as upstream's. Every
// listable, watchable, deletable resource is watched (the informers, indexed by uid and by
// owner uid, are the ownership graph):
//  - an object all of whose owners are gone (or are deleting their dependents in the
//    foreground) is deleted; owners that are gone are dropped from an object that still
//    has a live owner;
//  - an owner deleted with propagationPolicy=Orphan (finalizer `orphan`) has its
//    dependents' ownerReferences to it removed, then the finalizer;
//  - an owner deleted with propagationPolicy=Foreground (finalizer `foregroundDeletion`)
//    has its dependents deleted and keeps the finalizer until no dependent with
//    blockOwnerDeletion is left. Ownership cycles never block: a dependent that is itself
//    waiting, directly or through others, for this owner does not hold it.
// Owners are looked up in the caches first and confirmed with a live GET before anything
// is called dangling, so a cache that is behind never causes a deletion.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "client/discovery.h"
#include "client/shared_informers.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers {

// Thread-safety: as Controller; handlers only read caches and add keys.
class GarbageCollector : public Controller {
 public:
  GarbageCollector(client::Client& c, client::SharedInformers& informers,
                   const std::vector<client::ApiResource>& resources);
  size_t monitored() const { return monitors_.size(); }

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  struct Monitor {
    client::ApiResource resource;
    client::Informer* informer = nullptr;
  };
  struct Found {
    const Monitor* monitor = nullptr;
    client::Object object;
  };
  void enqueue(size_t monitor, const json::Value& obj);
  void enqueueDependents(const std::string& uid);
  void enqueueOwners(const json::Value& obj);
  Found findByUid(const std::string& uid) const;
  std::vector<Found> dependentsOf(const std::string& uid) const;
  const client::ApiResource* mapping(const std::string& api_version, const std::string& kind) const;
  // Whether `dependent` (deleting in the foreground) waits, through blocking dependents,
  // for the object with `owner_uid`.
  bool waitsFor(const json::Value& dependent, const std::string& owner_uid,
                std::set<std::string>& seen) const;

  Status orphanDependents(const Monitor& m, const json::Value& obj);
  Result<SyncResult> deleteDependentsInForeground(const Monitor& m, const json::Value& obj);
  Status checkOwners(const Monitor& m, const json::Value& obj);
  Status removeFinalizer(const Monitor& m, const json::Value& obj, std::string_view finalizer);
  Status removeOwnerReferences(const Monitor& m, const json::Value& obj, const std::set<std::string>& uids);

  client::Client& client_;
  std::vector<Monitor> monitors_;
};

}  // namespace shepherd::controllers
