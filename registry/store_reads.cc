// Store: reads, all from the watch cache (get, consistent-read waits, paged lists at one
// revision, watches).
#include "meta/selectors.h"
#include "registry/continue_token.h"
#include "registry/registry.h"
#include "registry/store.h"

namespace shepherd::registry {

namespace {

// The watch cache's filter for a list or watch; empty selectors match everything.
storage::Predicate makePredicate(meta::LabelSelector labels, meta::FieldSelector fields) {
  if (labels.empty() && fields.empty()) return nullptr;
  return [labels = std::move(labels), fields = std::move(fields)](const storage::CachedObject& o) {
    return labels.matches(o.labels) && fields.matches(o.name, o.ns, o.fields);
  };
}

}  // namespace

Result<ObjectPtr> Store::get(const std::string& ns, const std::string& name) const {
  ObjectPtr obj = cache_.get(resource_->key(ns, name));
  if (!obj) return notFound(name);
  return obj;
}

Status Store::awaitFresh(const std::string& resource_version) const {
  constexpr auto kWait = std::chrono::seconds(3);
  int64_t want = 0;
  if (resource_version.empty()) {
    auto rev = storage_.consistentRevision();
    if (!rev.ok()) return ApiError::unavailable("cannot read the current resource version: " + rev.message);
    want = rev.value;
  } else {
    char* end = nullptr;
    want = std::strtoll(resource_version.c_str(), &end, 10);
    if (*end != '\0' || want <= 0) return okStatus();  // "0", or invalid (reported by the read itself)
  }
  if (cache_.waitForRevision(want, kWait)) return okStatus();
  ApiError e = ApiError::timeout("Too large resource version: " + std::to_string(want) +
                                 ", current: " + std::to_string(cache_.revision()));
  e.retry_after_seconds = 1;
  return e;
}

Result<ListPage> Store::list(const ListOptions& opts) const {
  auto labels = meta::LabelSelector::parse(opts.label_selector);
  if (!labels) return labels.error();
  auto fields = meta::FieldSelector::parse(opts.field_selector, resource_->strategy->selectableFieldNames(),
                                           resource_->namespaced);
  if (!fields) return fields.error();
  bool filtered = !labels->empty() || !fields->empty();

  storage::CacheListRequest req;
  req.prefix = resource_->prefixFor(opts.ns);
  req.limit = opts.limit > 0 ? opts.limit : 0;
  // A metadata.name term narrows the scan to one key.
  if (const std::string* name = fields->exactValue("metadata.name");
      name && resource_->namespaced && !opts.ns.empty())
    req.prefix = resource_->key(opts.ns, *name);
  else if (name && !resource_->namespaced)
    req.prefix = resource_->key("", *name);
  bool exactKey = req.prefix != resource_->prefixFor(opts.ns);
  for (const std::string& field : indexed_fields_)
    if (const std::string* value = fields->exactValue(field)) {
      req.index_field = field;
      req.index_value = *value;
      break;
    }
  req.predicate = makePredicate(std::move(*labels), std::move(*fields));

  if (!opts.resource_version_match.empty()) {
    if (opts.resource_version_match != "NotOlderThan" && opts.resource_version_match != "Exact")
      return ApiError::badRequest("resourceVersionMatch: Unsupported value: \"" +
                                  opts.resource_version_match +
                                  "\": supported values: \"Exact\", \"NotOlderThan\"");
    if (opts.resource_version.empty())
      return ApiError::badRequest("resourceVersionMatch is forbidden unless resourceVersion is provided");
    if (!opts.continue_token.empty())
      return ApiError::badRequest("resourceVersionMatch is forbidden when continue is provided");
    if (opts.resource_version_match == "Exact" && opts.resource_version == "0")
      return ApiError::badRequest("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
  }
  int64_t rv = 0;
  if (!opts.resource_version.empty()) {
    char* end = nullptr;
    rv = std::strtoll(opts.resource_version.c_str(), &end, 10);
    if (*end != '\0' || rv < 0)
      return ApiError::badRequest("invalid resource version \"" + opts.resource_version + "\"");
  }
  if (!opts.continue_token.empty()) {
    if (!opts.resource_version.empty() && opts.resource_version != "0")
      return ApiError::badRequest("specifying resource version is not allowed when using continue");
    auto tok = decodeContinue(opts.continue_token);
    if (!tok)
      return ApiError::badRequest(
          "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
    req.revision = tok->revision;
    req.start_after = resource_->storage_prefix + tok->start_after;
  } else if (opts.resource_version_match == "Exact") {
    req.revision = rv;
  } else if (rv > 0 && rv > cache_.revision()) {
    ApiError e = ApiError::timeout("Too large resource version: " + std::to_string(rv) +
                                   ", current: " + std::to_string(cache_.revision()));
    e.retry_after_seconds = 1;
    return e;
  }

  storage::CacheListResponse resp;
  switch (cache_.list(req, resp)) {
    case storage::CacheError::None:
      break;
    case storage::CacheError::Expired:
      if (!opts.continue_token.empty())
        return ApiError::gone(
            "The provided continue parameter is too old to display a consistent list result. You "
            "can start a new list without the continue parameter, or use the continue token in "
            "this response to retrieve the remainder of the results. Continuing with the "
            "provided token results in an inconsistent list - objects that were created, "
            "modified, or deleted between the time the first chunk was returned and now may "
            "show up in the list.");
      return ApiError::gone("too old resource version: " + std::to_string(req.revision) + " (" +
                            std::to_string(cache_.oldestRevision()) + ")");
    case storage::CacheError::TooLarge:
      return ApiError::timeout("Too large resource version: " + std::to_string(req.revision) +
                               ", current: " + std::to_string(cache_.revision()));
    case storage::CacheError::Unavailable:
      return ApiError::unavailable("the watch cache is not ready");
  }
  if (exactKey) {
    // The narrowed prefix may also match longer names ("a" is a prefix of "ab").
    resp.items.erase(std::remove_if(resp.items.begin(), resp.items.end(),
                                    [&](const ObjectPtr& o) { return o->key != req.prefix; }),
                     resp.items.end());
    resp.more = false;
    resp.remaining = 0;
  }
  ListPage page;
  page.items = std::move(resp.items);
  page.revision = resp.revision;
  if (resp.more) {
    ContinueToken tok;
    tok.revision = resp.revision;
    tok.start_after = resp.last_key.substr(resource_->storage_prefix.size());
    page.continue_token = encodeContinue(tok);
    if (!filtered) page.remaining_item_count = resp.remaining;
  }
  return page;
}

Result<std::unique_ptr<storage::CacheWatch>> Store::watch(const WatchOptions& opts,
                                                          std::shared_ptr<storage::WatchSink> sink) {
  auto labels = meta::LabelSelector::parse(opts.label_selector);
  if (!labels) return labels.error();
  auto fields = meta::FieldSelector::parse(opts.field_selector, resource_->strategy->selectableFieldNames(),
                                           resource_->namespaced);
  if (!fields) return fields.error();
  storage::CacheWatchRequest req;
  req.prefix = resource_->prefixFor(opts.ns);
  // A metadata.name term narrows the watch to one key, when the key is known (a watch of a
  // namespaced resource across all namespaces matches that name in every namespace).
  if (const std::string* name = fields->exactValue("metadata.name");
      name && (!resource_->namespaced || !opts.ns.empty()))
    req.prefix = resource_->key(opts.ns, *name);
  req.predicate = makePredicate(std::move(*labels), std::move(*fields));
  if (req.prefix != resource_->prefixFor(opts.ns)) {
    // Narrowed to one key: keep exact-name semantics.
    std::string key = req.prefix;
    auto inner = req.predicate;
    req.predicate = [key, inner](const storage::CachedObject& o) {
      return o.key == key && (!inner || inner(o));
    };
  }
  int64_t rv = 0;
  if (!opts.resource_version.empty()) {
    char* end = nullptr;
    rv = std::strtoll(opts.resource_version.c_str(), &end, 10);
    if (*end != '\0' || rv < 0)
      return ApiError::badRequest("invalid resource version \"" + opts.resource_version + "\"");
  }
  req.after_revision = rv;
  req.send_initial_state = opts.send_initial_events || rv == 0;
  std::unique_ptr<storage::CacheWatch> handle;
  switch (cache_.watch(req, std::move(sink), handle)) {
    case storage::CacheError::None:
      return handle;
    case storage::CacheError::Expired:
      return ApiError::gone("too old resource version: " + std::to_string(rv) + " (" +
                            std::to_string(cache_.oldestRevision()) + ")");
    case storage::CacheError::TooLarge: {
      ApiError e = ApiError::timeout("Too large resource version: " + std::to_string(rv) +
                                     ", current: " + std::to_string(cache_.revision()));
      e.retry_after_seconds = 1;
      return e;
    }
    case storage::CacheError::Unavailable:
      return ApiError::unavailable("the watch cache is not ready");
  }
  return ApiError::internal("unreachable");
}

}  // namespace shepherd::registry
