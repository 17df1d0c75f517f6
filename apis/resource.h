// Descriptors of the resources Shepherd serves, and the per-kind Strategy interface.
//
// A Resource says what the API looks like (group/version/kind, names, scope, verbs,
// subresources, where its objects live in storage); its Strategy says how its objects
// behave (defaults, validation, what a status write may change, field-selector
// attributes, table columns). Strategies are pure functions of their inputs: no I/O.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/api_error.h"
#include "common/json.h"
#include "meta/selectors.h"

namespace shepherd::apis {

struct TableColumn {
  std::string name;
  std::string type;    // string, integer, number, boolean, date
  std::string format;  // "name" for the Name column, or ""
  std::string description;
  int priority = 0;  // 1 = only with -o wide
};

// Collects validation failures with field paths, as upstream's field.ErrorList.
class FieldErrors {
 public:
  void required(const std::string& field, const std::string& detail = "");
  void invalid(const std::string& field, const std::string& value_repr, const std::string& detail);
  // `Invalid value: <detail>` without the value (field.OmitValueType).
  void invalidOmitValue(const std::string& field, const std::string& detail);
  void notSupported(const std::string& field, const std::string& value,
                    const std::vector<std::string>& supported);
  void duplicate(const std::string& field, const std::string& value_repr);
  // `Not found: <value_repr>`: a reference to something the object does not define.
  void notFound(const std::string& field, const std::string& value_repr);
  void forbidden(const std::string& field, const std::string& detail);
  void tooLong(const std::string& field, size_t max);
  // `Too many: <actual>: must have at most <max> items` (field.TooMany).
  void tooMany(const std::string& field, size_t actual, size_t max);
  void add(StatusCause c) { causes_.push_back(std::move(c)); }
  bool empty() const { return causes_.empty(); }
  std::vector<StatusCause>& causes() { return causes_; }

 private:
  std::vector<StatusCause> causes_;
};

// Context a strategy may need beyond the object itself.
struct StrategyContext {
  std::string now;        // RFC 3339 timestamp of this request
  std::string now_micro;  // same, with microseconds
};

class Strategy {
 public:
  virtual ~Strategy() = default;

  // Create: defaults and status initialization (after generic metadata handling).
  virtual void prepareForCreate(json::Document& obj, const StrategyContext& ctx) const;
  // Update of the main resource: by default keeps the stored status when the resource
  // has a status subresource (set by the catalog).
  virtual void prepareForUpdate(json::Document& obj, const json::Value& old,
                                const StrategyContext& ctx) const;
  // Update through /status: keeps everything but status (and metadata changes allowed
  // by upstream: labels/annotations are NOT taken from a status write).
  virtual void prepareForStatusUpdate(json::Document& obj, const json::Value& old) const;
  // Defaults applied to every write (create and update).
  virtual void applyDefaults(json::Value& obj, json::Allocator& a) const;
  virtual void validate(const json::Value& obj, FieldErrors& errs) const;
  virtual void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const;
  // Field-selector attributes beyond metadata.name and metadata.namespace.
  virtual void selectableFields(const json::Value& obj, meta::StringPairs& out) const;
  // Field names a field selector may use (beyond metadata.name/namespace).
  virtual std::vector<std::string> selectableFieldNames() const { return {}; }
  // Selectable fields the watch cache indexes, so an equality selector on one reads an
  // index instead of scanning (upstream's IndexerFuncs: pods by spec.nodeName).
  virtual std::vector<std::string> indexedFieldNames() const { return {}; }

  // Conversion between this version and the storage version of the kind (for kinds
  // served in two shapes, such as core/v1 and events.k8s.io/v1 Events). Default: none.
  // A strategy that overrides these must also return true from convertsForStorage().
  virtual void toStorage(json::Value&, json::Allocator&) const {}
  virtual void fromStorage(json::Value&, json::Allocator&) const {}
  virtual bool convertsForStorage() const { return false; }

  virtual std::vector<TableColumn> tableColumns() const;
  // Cells for one row, in tableColumns() order. `now` is used for AGE columns.
  virtual void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const;

  // Seconds a DELETE should wait before the object goes (0 = at once), given the
  // request's gracePeriodSeconds if any. Pods bound to a node wait for their kubelet.
  virtual int64_t gracePeriod(const json::Value& obj, std::optional<int64_t> requested) const;
  // Whether something must still happen before a deleting object may go
  // (metadata.finalizers; namespaces also have spec.finalizers).
  virtual bool hasPendingFinalizers(const json::Value& obj) const;
  // Changes made when deletion starts but the object stays (e.g. namespace Terminating).
  virtual void prepareForDelete(json::Value&, json::Allocator&) const {}

  // Whether a DELETE without a propagation policy orphans the dependents (upstream's
  // DefaultGarbageCollectionPolicy: batch/v1 Jobs), rather than deleting them.
  virtual bool orphansDependentsByDefault() const { return false; }

  // Whether PUT may create a missing object (upstream's AllowCreateOnUpdate: events,
  // leases, endpoints).
  virtual bool allowCreateOnUpdate() const { return false; }

  // Which DNS rule names must follow: subdomain (default), label, or 1035 label.
  enum class NameRule { Subdomain, Label, Label1035, PathSegment };
  virtual NameRule nameRule() const { return NameRule::Subdomain; }
};

// The verbs of a resource stored and served with every REST verb.
inline const std::vector<std::string> kAllVerbs = {"create", "delete", "deletecollection", "get",
                                                   "list",   "patch",  "update",           "watch"};

// One served resource. The catalog lists them with designated initializers, so the
// fields keep this order.
struct Resource {
  std::string group;     // "" for core
  std::string version;   // v1
  std::string kind;      // Pod
  std::string plural;    // pods
  std::string singular;  // pod
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  bool namespaced = true;
  std::vector<std::string> verbs = kAllVerbs;  // discovery verbs
  std::vector<std::string> subresources;       // status, binding, finalize, ...
  bool tracks_generation = false;              // metadata.generation bumped on spec changes
  bool return_deleted_object = false;          // DELETE answers the object, not a Status
  // False for create-only resources with nothing stored (reviews, bindings): the API
  // server answers their creates itself.
  bool stored = true;
  std::string storage_prefix;  // /registry/pods/ (shared by aliased kinds)
  std::string schema_name;     // io.k8s.api.core.v1.Pod
  std::shared_ptr<const Strategy> strategy;

  std::string apiVersion() const { return group.empty() ? version : group + "/" + version; }
  std::string listKind() const { return kind + "List"; }
  bool hasSubresource(const std::string& s) const;
  std::string key(const std::string& ns, const std::string& name) const;
  std::string prefixFor(const std::string& ns) const;
};

// Helpers strategies share.
std::string ageCell(const json::Value& obj);  // AGE column from creationTimestamp
std::string humanAgeSince(std::string_view rfc3339);
const json::Value* metadata(const json::Value& obj);

}  // namespace shepherd::apis
