// Store: the generic REST storage of one resource (upstream's registry "Store").
//
// It turns API operations into storage operations with Kubernetes object semantics:
// server-set metadata (uid, creationTimestamp, resourceVersion, generation), the
// kind's strategy (defaults, validation, status/spec separation), optimistic
// concurrency, graceful deletion and finalizers, and consistent paged lists and
// watches served by the resource's WatchCache.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apis/resource.h"
#include "common/api_error.h"
#include "common/json.h"
#include "registry/options.h"
#include "registry/prepared_objects.h"
#include "storage/storage.h"
#include "storage/watch_cache.h"

namespace shepherd::registry {

class Registry;
using storage::ObjectPtr;

struct ListPage {
  std::vector<ObjectPtr> items;
  int64_t revision = 0;
  std::string continue_token;
  std::optional<int64_t> remaining_item_count;
};

struct WriteOutcome {
  ObjectPtr object;
  bool created = false;  // PUT that created (201)
};

struct DeleteOutcome {
  ObjectPtr object;  // the object as deleted, or as it now waits for deletion
  bool deleted_now = false;
};

// Extra steps for resources with side effects outside the object (service IPs).
struct StoreHooks {
  // Before the create is written; may change the object. Errors abort the create.
  std::function<Status(json::Document& obj, bool dry_run)> before_create;
  // After a create failed to be written: undo what before_create took.
  std::function<void(const json::Value& obj)> create_failed;
  // Before an update is written (old is the stored object).
  std::function<Status(json::Document& obj, const json::Value& old, bool dry_run)> before_update;
  // After the object is gone from storage.
  std::function<void(const json::Value& obj)> after_delete;
};

// Thread-safety: all methods may be called concurrently; state lives in the storage and
// the watch cache.
class Store {
 public:
  // `prepared` is the one the cache's decoder consults (see PreparedObjects).
  Store(std::shared_ptr<const apis::Resource> resource, storage::Storage& storage, storage::WatchCache& cache,
        PreparedObjects& prepared, Registry& registry);

  const apis::Resource& resource() const { return *resource_; }
  storage::WatchCache& cache() { return cache_; }
  void setHooks(StoreHooks hooks) { hooks_ = std::move(hooks); }

  Result<ObjectPtr> get(const std::string& ns, const std::string& name) const;
  // A client read's freshness, before it is served from the cache. resourceVersion "":
  // waits until the cache holds every write acknowledged anywhere before the call (other
  // API servers write to etcd too); "N": waits for the cache to reach N; "0" or not a
  // number: nothing to wait for. Up to 3 s, as upstream; then 504 Too large resource version.
  Status awaitFresh(const std::string& resource_version) const;
  Result<ListPage> list(const ListOptions& opts) const;
  Result<std::unique_ptr<storage::CacheWatch>> watch(const WatchOptions& opts,
                                                     std::shared_ptr<storage::WatchSink> sink);

  // `obj` is the decoded request body (served shape); it is modified in place.
  Result<ObjectPtr> create(const std::string& ns, json::Document& obj, const WriteOptions& opts);
  Result<WriteOutcome> update(const std::string& ns, const std::string& name, json::Document& obj,
                              const WriteOptions& opts, Subresource sub);
  // Read-modify-write: `mutate` edits a fresh copy of the current object each attempt
  // (patches, finalize). `create_from` (optional) builds a new object when none exists.
  using Mutator = std::function<Status(json::Document& obj)>;
  Result<WriteOutcome> modify(const std::string& ns, const std::string& name, const Mutator& mutate,
                              const WriteOptions& opts, Subresource sub,
                              const Mutator& create_from = nullptr);
  Result<DeleteOutcome> remove(const std::string& ns, const std::string& name, const DeleteOptions& opts);

  // Server-side apply of `config` (creates the object when it does not exist).
  Result<WriteOutcome> apply(const std::string& ns, const std::string& name, const json::Value& config,
                             const WriteOptions& opts);

  // Decodes a stored value into the cached, served form (the watch cache's decoder).
  ObjectPtr decode(const std::string& key, const std::string& value, int64_t revision,
                   int64_t create_revision) const;

 private:
  // Unconditional writes retry on a conflict this often.
  static constexpr int kMaxUpdateAttempts = 16;
  Status checkTypeMeta(json::Document& obj) const;
  Status checkNamespaceForCreate(const std::string& ns, const std::string& name) const;
  void validateMetadata(const json::Value& obj, apis::FieldErrors& errs) const;
  Result<WriteOutcome> updateWith(const std::string& ns, const std::string& name, json::Document& obj,
                                  const ObjectPtr& current, const WriteOptions& opts, Subresource sub,
                                  bool& conflict);
  // Drops metadata.resourceVersion and sets apiVersion/kind to this resource's.
  void normalizeTypeAndVersion(json::Document& obj) const;
  std::string encodeForStorage(json::Document& obj) const;
  // Encodes `obj` into `stored` and parks its cached form for the watch cache's decoder;
  // keep the ticket until the write has returned.
  PreparedObjects::Ticket encodeAndPrepare(const std::string& key, json::Document& obj, std::string& stored);
  ObjectPtr readBack(const std::string& key, const std::string& stored, int64_t revision,
                     int64_t create_revision) const;
  Result<ObjectPtr> finishDeletion(const std::string& key, const ObjectPtr& current, bool dry_run);
  ApiError notFound(const std::string& name) const;
  ApiError conflict(const std::string& name) const;
  ApiError fromStorage(const storage::Outcome<int64_t>& o, const std::string& name) const;

  std::shared_ptr<const apis::Resource> resource_;
  const std::vector<std::string> indexed_fields_;  // the strategy's, asked once
  storage::Storage& storage_;
  storage::WatchCache& cache_;
  PreparedObjects& prepared_;
  Registry& registry_;
  StoreHooks hooks_;
};

// Decodes a stored value of `resource` into its cached, served form: the watch cache's
// decoder (parse, convert to the served version, stamp resourceVersion, index).
ObjectPtr decodeObject(const apis::Resource& resource, const std::string& key, const std::string& value,
                       int64_t revision, int64_t create_revision);
// The same without a revision: the resourceVersion's digits go at the template's slot.
std::optional<ObjectTemplate> decodeTemplate(const apis::Resource& resource, const std::string& key,
                                             const std::string& value);

// Parses a DeleteOptions body or query values into options (400 on bad input).
Result<DeleteOptions> parseDeleteOptions(const json::Value* body);
// Sets the `orphan`/`foregroundDeletion` finalizers of an object being deleted as the
// options (or, without a policy, the finalizers already there) ask; true if they changed.
// `orphan_by_default`: the kind's default policy is to orphan (batch/v1 Jobs, as upstream's
// DefaultGarbageCollectionPolicy).
bool applyGarbageCollectionFinalizers(json::Document& obj, const DeleteOptions& opts,
                                      bool orphan_by_default = false);

}  // namespace shepherd::registry
