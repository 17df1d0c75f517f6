#include "registry/store.h"

#include <algorithm>

#include "apis/kinds/podspec.h"
#include "apis/schema.h"
#include "common/clock.h"
#include "common/ids.h"
#include "common/log.h"
#include "meta/selectors.h"
#include "meta/validation.h"
#include "registry/continue_token.h"
#include "registry/managed_fields.h"
#include "registry/registry.h"

namespace shepherd::registry {

namespace {

std::string conflictMessage() {
  return "the object has been modified; please apply your changes to the latest version and try again";
}

const char* kServerMetadata[] = {
    "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "selfLink"};

json::Value& meta(json::Document& obj) {
  return json::ensureObject(obj, "metadata", obj.GetAllocator());
}

std::string strMeta(const json::Value& obj, std::string_view k) {
  return std::string(json::getStringPath(obj, {"metadata", k}));
}

}  // namespace

Store::Store(std::shared_ptr<const apis::Resource> resource, storage::Storage& storage,
             storage::WatchCache& cache, PreparedObjects& prepared, Registry& registry)
    : resource_(std::move(resource)),
      indexed_fields_(resource_->strategy->indexedFieldNames()),
      storage_(storage),
      cache_(cache),
      prepared_(prepared),
      registry_(registry) {}

ApiError Store::notFound(const std::string& name) const {
  return ApiError::notFound(resource_->group, resource_->plural, name);
}

ApiError Store::conflict(const std::string& name) const {
  return ApiError::conflict(resource_->group, resource_->plural, name, conflictMessage());
}

ApiError Store::fromStorage(const storage::Outcome<int64_t>& o, const std::string& name) const {
  switch (o.code) {
    case storage::Code::Exists:
      return ApiError::alreadyExists(resource_->group, resource_->plural, name);
    case storage::Code::NotFound:
      return notFound(name);
    case storage::Code::Conflict:
      return conflict(name);
    case storage::Code::Unavailable:
      return ApiError::unavailable("storage is unavailable: " + o.message);
    default:
      return ApiError::internal("storage error: " + o.message);
  }
}

Status Store::checkTypeMeta(json::Document& obj) const {
  if (!obj.IsObject()) return ApiError::badRequest("the request body must be a JSON object");
  std::string_view av = json::getString(obj, "apiVersion");
  std::string_view kind = json::getString(obj, "kind");
  if (!av.empty() && av != resource_->apiVersion())
    return ApiError::badRequest("the API version in the data (" + std::string(av) +
                                ") does not match the expected API version (" + resource_->apiVersion() +
                                ")");
  if (!kind.empty() && kind != resource_->kind)
    return ApiError::badRequest("the kind in the data (" + std::string(kind) +
                                ") does not match the expected kind (" + resource_->kind + ")");
  auto& a = obj.GetAllocator();
  json::setString(obj, "apiVersion", resource_->apiVersion(), a);
  json::setString(obj, "kind", resource_->kind, a);
  json::Value* m = json::find(obj, "metadata");
  if (m && !m->IsObject() && !m->IsNull()) return ApiError::badRequest("metadata must be an object");
  return okStatus();
}

Status Store::checkNamespaceForCreate(const std::string& ns, const std::string& name) const {
  if (!resource_->namespaced) return okStatus();
  Store* nsStore = registry_.store("", "v1", "namespaces");
  if (!nsStore) return okStatus();
  ObjectPtr nsObj = nsStore->cache().get(nsStore->resource().key("", ns));
  if (!nsObj) return ApiError::notFound("", "namespaces", ns);
  json::Document d;
  d.Parse(nsObj->json.data(), nsObj->json.size());
  if (json::getStringPath(d, {"status", "phase"}) == "Terminating" ||
      json::findPath(d, {"metadata", "deletionTimestamp"})) {
    ApiError e = ApiError::forbidden(
        resource_->group, resource_->plural, name,
        "unable to create new content in namespace " + ns + " because it is being terminated");
    e.causes.push_back(
        {"NamespaceTerminating", "namespace " + ns + " is being terminated", "metadata.namespace"});
    return e;
  }
  return okStatus();
}

void Store::validateMetadata(const json::Value& obj, apis::FieldErrors& errs) const {
  using namespace meta::validation;
  const json::Value* m = json::find(obj, "metadata");
  if (!m || !m->IsObject()) {
    errs.required("metadata.name", "name or generateName is required");
    return;
  }
  auto nameProblems = [this](std::string name, bool prefix) {
    // A generateName prefix may end in '-': upstream masks it before checking.
    if (prefix && !name.empty() && name.back() == '-') name.back() = 'a';
    switch (resource_->strategy->nameRule()) {
      case apis::Strategy::NameRule::Subdomain:
        return dns1123Subdomain(name);
      case apis::Strategy::NameRule::Label:
        return dns1123Label(name);
      case apis::Strategy::NameRule::Label1035:
        return dns1035Label(name);
      case apis::Strategy::NameRule::PathSegment:
        return prefix ? std::vector<std::string>{} : pathSegmentName(name);
    }
    return std::vector<std::string>{};
  };
  std::string generate(json::getString(*m, "generateName"));
  if (!generate.empty())
    for (auto& p : nameProblems(generate, true)) errs.invalid("metadata.generateName", quote(generate), p);
  std::string name(json::getString(*m, "name"));
  if (name.empty()) {
    errs.required("metadata.name", "name or generateName is required");
  } else {
    for (auto& p : nameProblems(name, false)) errs.invalid("metadata.name", quote(name), p);
  }
  if (resource_->namespaced) {
    std::string ns(json::getString(*m, "namespace"));
    if (ns.empty())
      errs.required("metadata.namespace");
    else
      for (auto& p : dns1123Label(ns)) errs.invalid("metadata.namespace", quote(ns), p);
  }
  apis::kinds::validateObjectLabels(*m, "metadata", errs);
  apis::kinds::validateAnnotations(json::find(*m, "annotations"), "metadata.annotations", errs);
  // Owner references: upstream's paths carry no index.
  if (const json::Value* refs = json::find(*m, "ownerReferences"); refs && refs->IsArray()) {
    std::string firstController;
    for (rapidjson::SizeType i = 0; i < refs->Size(); ++i) {
      const json::Value& r = (*refs)[i];
      const std::string p = "metadata.ownerReferences";
      std::string_view apiVersion = json::getString(r, "apiVersion"), kind = json::getString(r, "kind");
      // The version of "group/version", or of a bare "version".
      auto slash = apiVersion.find('/');
      std::string_view version = slash == std::string_view::npos ? apiVersion : apiVersion.substr(slash + 1);
      if (version.find('/') != std::string_view::npos) version = "";
      std::string_view group =
          slash == std::string_view::npos || version.empty() ? "" : apiVersion.substr(0, slash);
      if (version.empty()) errs.invalid(p + ".apiVersion", quote(apiVersion), "version must not be empty");
      if (kind.empty()) errs.invalid(p + ".kind", quote(kind), "kind must not be empty");
      if (json::getString(r, "name").empty()) errs.invalid(p + ".name", "\"\"", "name must not be empty");
      if (json::getString(r, "uid").empty()) errs.invalid(p + ".uid", "\"\"", "uid must not be empty");
      if (group.empty() && version == "v1" && kind == "Event") {
        // The reference prints through its String().
        auto ptr = [&r](const char* f) {
          const json::Value* v = json::find(r, f);
          return v && v->IsBool() ? std::string(v->GetBool() ? "*true" : "*false") : std::string("nil");
        };
        errs.invalid(p,
                     "&OwnerReference{Kind:" + std::string(kind) +
                         ",Name:" + std::string(json::getString(r, "name")) +
                         ",UID:" + std::string(json::getString(r, "uid")) +
                         ",APIVersion:" + std::string(apiVersion) + ",Controller:" + ptr("controller") +
                         ",BlockOwnerDeletion:" + ptr("blockOwnerDeletion") + ",}",
                     "/v1, Kind=Event is disallowed from being an owner");
      }
      if (json::getBool(r, "controller")) {
        std::string current = std::string(kind) + "/" + std::string(json::getString(r, "name"));
        if (firstController.empty()) {
          firstController = current;
          continue;
        }
        // Upstream prints the whole list with Go's %#v (pointer fields as addresses).
        std::string repr = "[]v1.OwnerReference{";
        for (rapidjson::SizeType k = 0; k < refs->Size(); ++k) {
          const json::Value& o = (*refs)[k];
          auto ptr = [&o](const char* f) {
            return json::find(o, f) ? std::string("(*bool)(0xc000000000)") : std::string("(*bool)(nil)");
          };
          repr += std::string(k ? ", " : "") +
                  "v1.OwnerReference{APIVersion:" + quote(json::getString(o, "apiVersion")) +
                  ", Kind:" + quote(json::getString(o, "kind")) +
                  ", Name:" + quote(json::getString(o, "name")) +
                  ", UID:" + quote(json::getString(o, "uid")) + ", Controller:" + ptr("controller") +
                  ", BlockOwnerDeletion:" + ptr("blockOwnerDeletion") + "}";
        }
        errs.invalid(p, repr + "}",
                     "Only one reference can have Controller set to true. Found \"true\" in references for " +
                         firstController + " and " + current);
      }
    }
  }
  if (const json::Value* fin = json::find(*m, "finalizers"); fin && fin->IsArray()) {
    std::vector<std::string> names;
    for (auto& f : fin->GetArray()) names.emplace_back(f.IsString() ? json::view(f) : "");
    for (auto& f : names)
      for (auto& p : qualifiedName(f)) errs.invalid("metadata.finalizers", quote(f), p);
    bool orphan = std::find(names.begin(), names.end(), "orphan") != names.end();
    bool foreground = std::find(names.begin(), names.end(), "foregroundDeletion") != names.end();
    if (orphan && foreground) {
      std::string repr = "[]string{";
      for (size_t i = 0; i < names.size(); ++i) repr += (i ? ", " : "") + quote(names[i]);
      errs.invalid("metadata.finalizers", repr + "}",
                   "finalizer orphan and foregroundDeletion cannot be both set");
    }
    // Core, apps and discovery kinds: a name without a domain must be a standard one.
    const std::string& g = resource_->group;
    if (g.empty() || g == "apps" || g == "discovery.k8s.io")
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i].find('/') == std::string::npos && names[i] != "kubernetes" && names[i] != "orphan" &&
            names[i] != "foregroundDeletion")
          errs.invalid("metadata.finalizers[" + std::to_string(i) + "]", quote(names[i]),
                       "name is neither a standard finalizer name nor is it fully qualified");
  }
}

Result<ObjectPtr> Store::create(const std::string& ns, json::Document& obj, const WriteOptions& opts) {
  if (auto st = checkTypeMeta(obj); !st) return st.error();
  auto& a = obj.GetAllocator();
  json::Value& m = meta(obj);
  std::string bodyNs(json::getString(m, "namespace"));
  if (resource_->namespaced) {
    if (!bodyNs.empty() && !ns.empty() && bodyNs != ns)
      return ApiError::badRequest(
          "the namespace of the provided object does not match the namespace sent on the request");
    json::setString(m, "namespace", ns.empty() ? bodyNs : ns, a);
  } else {
    json::remove(m, "namespace");
  }
  std::string name(json::getString(m, "name"));
  std::string_view generate = json::getString(m, "generateName");
  if (name.empty() && !generate.empty()) {
    std::string prefix(generate);
    // Upstream keeps names within 63 characters by truncating the prefix.
    if (prefix.size() > 58) prefix.resize(58);
    name = prefix + ids::randomSuffix(5);
    json::setString(m, "name", name, a);
  }
  for (const char* f : kServerMetadata) json::remove(m, f);
  json::remove(m, "resourceVersion");
  json::remove(m, "managedFields");
  apis::StrategyContext ctx{clock::rfc3339(clock::now()), clock::rfc3339Micro(clock::now())};
  const apis::SchemaNode* schema = apis::SchemaRegistry::instance().definition(resource_->schema_name);
  // An applied configuration owns exactly what it set, before defaults fill in the rest.
  std::optional<apis::FieldSet> applied;
  if (opts.apply) applied = trackedFields(obj, schema, Subresource::Main);
  json::setString(m, "uid", ids::uuid4(), a);
  json::setString(m, "creationTimestamp", ctx.now, a);
  if (resource_->tracks_generation) json::set(m, "generation", json::Value(1), a);

  if (auto st = opts.admission.admit(admission::Operation::Create, obj, nullptr); !st) return st.error();
  resource_->strategy->prepareForCreate(obj, ctx);
  resource_->strategy->applyDefaults(obj, a);
  if (applied) {
    writeManagedFields(
        obj, {ManagedEntry{opts.field_manager, "Apply", resource_->apiVersion(), ctx.now, "", *applied}},
        obj.GetAllocator());
  } else {
    recordUpdate(nullptr, obj, opts.field_manager, resource_->apiVersion(), Subresource::Main, schema,
                 ctx.now);
  }
  apis::FieldErrors errs;
  validateMetadata(obj, errs);
  resource_->strategy->validate(obj, errs);
  if (!errs.empty())
    return ApiError::invalid(resource_->group, resource_->kind, name, std::move(errs.causes()));
  if (auto st = opts.admission.validate(admission::Operation::Create, obj, nullptr); !st) return st.error();
  if (auto st = checkNamespaceForCreate(strMeta(obj, "namespace"), name); !st) return st.error();

  if (hooks_.before_create)
    if (auto st = hooks_.before_create(obj, opts.dry_run); !st) return st.error();

  std::string key = resource_->key(strMeta(obj, "namespace"), name);
  if (opts.dry_run) {
    if (cache_.get(key)) {
      if (hooks_.create_failed) hooks_.create_failed(obj);
      return ApiError::alreadyExists(resource_->group, resource_->plural, name);
    }
    std::string stored = encodeForStorage(obj);
    ObjectPtr out = decode(key, stored, 0, 0);
    if (hooks_.create_failed) hooks_.create_failed(obj);  // nothing was really allocated
    if (!out) return ApiError::internal("cannot encode object");
    // A dry run has no resourceVersion.
    auto copy = std::make_shared<storage::CachedObject>(*out);
    json::Document d;
    d.Parse(copy->json.data(), copy->json.size());
    json::remove(meta(d), "resourceVersion");
    copy->json = json::serialize(d);
    return ObjectPtr(copy);
  }
  std::string stored;
  auto ticket = encodeAndPrepare(key, obj, stored);
  auto res = storage_.create(key, stored);
  if (!res.ok()) {
    if (hooks_.create_failed) hooks_.create_failed(obj);
    return fromStorage(res, name);
  }
  return readBack(key, stored, res.value, res.value);
}

Result<WriteOutcome> Store::update(const std::string& ns, const std::string& name, json::Document& obj,
                                   const WriteOptions& opts, Subresource sub) {
  if (auto st = checkTypeMeta(obj); !st) return st.error();
  json::Value& m = meta(obj);
  std::string bodyName(json::getString(m, "name"));
  if (bodyName.empty())
    json::setString(m, "name", name, obj.GetAllocator());
  else if (bodyName != name)
    return ApiError::badRequest("the name of the object (" + bodyName +
                                ") does not match the name on the URL (" + name + ")");
  if (resource_->namespaced) {
    std::string bodyNs(json::getString(m, "namespace"));
    if (!bodyNs.empty() && bodyNs != ns)
      return ApiError::badRequest(
          "the namespace of the provided object does not match the namespace sent on the request");
  }
  std::string key = resource_->key(ns, name);
  for (int attempt = 0; attempt < kMaxUpdateAttempts; ++attempt) {
    ObjectPtr cur = cache_.get(key);
    if (!cur) {
      if (sub == Subresource::Main && resource_->strategy->allowCreateOnUpdate()) {
        auto created = create(ns, obj, opts);
        if (!created) return created.error();
        return WriteOutcome{created.value(), true};
      }
      return notFound(name);
    }
    json::Document attemptObj;
    attemptObj.CopyFrom(obj, attemptObj.GetAllocator());
    bool conflictRetry = false;
    auto r = updateWith(ns, name, attemptObj, cur, opts, sub, conflictRetry);
    if (!conflictRetry) return r;
  }
  return conflict(name);
}

Result<WriteOutcome> Store::modify(const std::string& ns, const std::string& name, const Mutator& mutate,
                                   const WriteOptions& opts, Subresource sub, const Mutator& create_from) {
  std::string key = resource_->key(ns, name);
  for (int attempt = 0; attempt < kMaxUpdateAttempts; ++attempt) {
    ObjectPtr cur = cache_.get(key);
    if (!cur) {
      if (!create_from) return notFound(name);
      json::Document fresh;
      fresh.SetObject();
      if (auto st = create_from(fresh); !st) return st.error();
      auto created = create(ns, fresh, opts);
      if (created) return WriteOutcome{created.value(), true};
      if (created.error().reason == "AlreadyExists") continue;  // raced with a create
      return created.error();
    }
    json::Document d;
    d.Parse(cur->json.data(), cur->json.size());
    std::string rvBefore(json::getStringPath(d, {"metadata", "resourceVersion"}));
    if (auto st = mutate(d); !st) return st.error();
    // A mutation that did not set a resourceVersion of its own applies to whatever is
    // current: on a concurrent write, re-read and mutate again instead of failing.
    if (json::getStringPath(d, {"metadata", "resourceVersion"}) == rvBefore)
      if (json::Value* m = json::find(d, "metadata")) json::remove(*m, "resourceVersion");
    bool conflictRetry = false;
    auto r = updateWith(ns, name, d, cur, opts, sub, conflictRetry);
    if (!conflictRetry) return r;
  }
  return conflict(name);
}

Result<WriteOutcome> Store::updateWith(const std::string& ns, const std::string& name, json::Document& obj,
                                       const ObjectPtr& current, const WriteOptions& opts, Subresource sub,
                                       bool& conflictRetry) {
  auto& a = obj.GetAllocator();
  json::Document old;
  old.Parse(current->json.data(), current->json.size());
  json::Value& m = meta(obj);
  const json::Value& om = *json::find(old, "metadata");

  std::string rv(json::getString(m, "resourceVersion"));
  bool conditional = !rv.empty();
  if (conditional && rv != std::to_string(current->mod_revision)) return conflict(name);
  std::string_view bodyUid = json::getString(m, "uid");
  if (!bodyUid.empty() && bodyUid != json::getString(om, "uid")) {
    return ApiError::conflict(resource_->group, resource_->plural, name,
                              "Precondition failed: UID in precondition: " + std::string(bodyUid) +
                                  ", UID in object meta: " + std::string(json::getString(om, "uid")));
  }
  // Server-managed metadata comes from the stored object.
  for (const char* f : kServerMetadata) {
    json::remove(m, f);
    if (const json::Value* v = json::find(om, f)) json::set(m, f, json::Value(*v, a), a);
  }
  json::setString(m, "name", name, a);
  if (resource_->namespaced)
    json::setString(m, "namespace", ns, a);
  else
    json::remove(m, "namespace");

  if (auto st = opts.admission.admit(admission::Operation::Update, obj, &old); !st) return st.error();
  apis::StrategyContext ctx{clock::rfc3339(clock::now()), clock::rfc3339Micro(clock::now())};
  const apis::Strategy& strategy = *resource_->strategy;
  if (sub == Subresource::Status) {
    // Only status (and metadata) may change through /status.
    if (const json::Value* spec = json::find(old, "spec"))
      json::set(obj, "spec", json::Value(*spec, a), a);
    else
      json::remove(obj, "spec");
    strategy.prepareForStatusUpdate(obj, old);
  } else if (sub == Subresource::Binding) {
    // The binding mutator changed spec.nodeName and status together; keep both.
  } else if (sub == Subresource::Finalize) {
    // /finalize changes spec.finalizers only.
    json::Document next;
    next.CopyFrom(old, next.GetAllocator());
    auto& na = next.GetAllocator();
    json::Value fin(rapidjson::kArrayType);
    if (const json::Value* f = json::findPath(obj, {"spec", "finalizers"}); f && f->IsArray())
      fin.CopyFrom(*f, na);
    json::set(json::ensureObject(next, "spec", na), "finalizers", std::move(fin), na);
    obj.Swap(next);
  } else {
    if (resource_->hasSubresource("status")) {
      if (const json::Value* st = json::find(old, "status"))
        json::set(obj, "status", json::Value(*st, a), a);
      else
        json::remove(obj, "status");
    }
    strategy.prepareForUpdate(obj, old, ctx);
  }
  strategy.applyDefaults(obj, obj.GetAllocator());
  if (!opts.apply && sub != Subresource::Binding) {
    const apis::SchemaNode* schema = apis::SchemaRegistry::instance().definition(resource_->schema_name);
    recordUpdate(&old, obj, opts.field_manager, resource_->apiVersion(),
                 sub == Subresource::Status ? Subresource::Status : Subresource::Main, schema, ctx.now);
  }
  if (resource_->tracks_generation && sub == Subresource::Main) {
    const json::Value* ns_ = json::find(obj, "spec");
    const json::Value* os = json::find(old, "spec");
    bool changed = (ns_ == nullptr) != (os == nullptr) || (ns_ && os && *ns_ != *os);
    if (changed) {
      int64_t g = json::getInt(om, "generation").value_or(0) + 1;
      json::set(meta(obj), "generation", json::Value(g), obj.GetAllocator());
    }
  }
  if (hooks_.before_update)
    if (auto st = hooks_.before_update(obj, old, opts.dry_run); !st) return st.error();
  apis::FieldErrors errs;
  validateMetadata(obj, errs);
  if (sub == Subresource::Binding)
    strategy.validate(obj, errs);  // nodeName may change only here
  else
    strategy.validateUpdate(obj, old, errs);
  if (!errs.empty())
    return ApiError::invalid(resource_->group, resource_->kind, name, std::move(errs.causes()));
  if (auto st = opts.admission.validate(admission::Operation::Update, obj, &old); !st) return st.error();

  std::string key = current->key;
  // Removing the last finalizer of a deleting object completes its deletion.
  bool deleting = json::findPath(obj, {"metadata", "deletionTimestamp"}) != nullptr;
  if (deleting && !strategy.hasPendingFinalizers(obj) &&
      json::getInt(meta(obj), "deletionGracePeriodSeconds").value_or(0) == 0) {
    if (opts.dry_run) {
      std::string stored = encodeForStorage(obj);
      return WriteOutcome{decode(key, stored, current->mod_revision, current->create_revision), false};
    }
    auto del = storage_.remove(key, current->mod_revision);
    if (!del.ok()) {
      if (del.code == storage::Code::Conflict || del.code == storage::Code::NotFound) {
        conflictRetry = !conditional && del.code == storage::Code::Conflict;
        return del.code == storage::Code::NotFound ? notFound(name) : conflict(name);
      }
      return ApiError::internal("storage error: " + del.message);
    }
    if (hooks_.after_delete) hooks_.after_delete(obj);
    std::string stored = encodeForStorage(obj);
    return WriteOutcome{decode(key, stored, del.value.mod_revision, current->create_revision), false};
  }

  // An update that changes nothing is not written (upstream: no new resourceVersion).
  // Compared as JSON values, so member order does not matter.
  normalizeTypeAndVersion(obj);
  {
    json::Document cmp;
    cmp.CopyFrom(old, cmp.GetAllocator());
    normalizeTypeAndVersion(cmp);
    if (cmp == obj) return WriteOutcome{current, false};
  }
  if (opts.dry_run) {
    std::string stored = encodeForStorage(obj);
    return WriteOutcome{decode(key, stored, current->mod_revision, current->create_revision), false};
  }
  std::string stored;
  auto ticket = encodeAndPrepare(key, obj, stored);
  auto res = storage_.update(key, stored, current->mod_revision);
  if (!res.ok()) {
    if (res.code == storage::Code::Conflict && !conditional) conflictRetry = true;
    return fromStorage(res, name);
  }
  return WriteOutcome{readBack(key, stored, res.value, current->create_revision), false};
}

Result<WriteOutcome> Store::apply(const std::string& ns, const std::string& name, const json::Value& config,
                                  const WriteOptions& opts) {
  if (!config.IsObject()) return ApiError::badRequest("the applied configuration must be an object");
  std::string_view av = json::getString(config, "apiVersion");
  std::string_view kind = json::getString(config, "kind");
  if (av.empty() || kind.empty())
    return ApiError::badRequest("apiVersion and kind are required in an applied configuration");
  if (av != resource_->apiVersion() || kind != resource_->kind)
    return ApiError::badRequest("the applied configuration's apiVersion/kind (" + std::string(av) + ", " +
                                std::string(kind) + ") does not match " + resource_->apiVersion() + ", " +
                                resource_->kind);
  std::string_view bodyName = json::getStringPath(config, {"metadata", "name"});
  if (!bodyName.empty() && bodyName != name)
    return ApiError::badRequest("the name of the object (" + std::string(bodyName) +
                                ") does not match the name on the URL (" + name + ")");
  WriteOptions o = opts;
  o.apply = true;
  const apis::SchemaNode* schema = apis::SchemaRegistry::instance().definition(resource_->schema_name);
  std::string apiVersion = resource_->apiVersion();
  auto mutate = [&](json::Document& live) -> Status {
    return applyConfiguration(live, config, o.field_manager, o.force, apiVersion, schema,
                              clock::rfc3339(clock::now()));
  };
  auto createFrom = [&](json::Document& fresh) -> Status {
    fresh.CopyFrom(config, fresh.GetAllocator());
    json::setString(json::ensureObject(fresh, "metadata", fresh.GetAllocator()), "name", name,
                    fresh.GetAllocator());
    return okStatus();
  };
  return modify(ns, name, mutate, o, Subresource::Main, createFrom);
}

}  // namespace shepherd::registry
