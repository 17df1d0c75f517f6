#include "handlers/rest_handler.h"

#include <algorithm>
#include <cerrno>
#include <random>

#include "apis/schema.h"
#include "common/log.h"
#include "common/yaml_json.h"
#include "handlers/negotiation.h"
#include "handlers/patch/patch.h"
#include "handlers/request_context.h"
#include "handlers/reviews.h"
#include "handlers/status.h"
#include "handlers/table.h"
#include "handlers/watch_stream.h"
#include "registry/managed_fields.h"

namespace shepherd::handlers {

namespace {

using registry::ObjectPtr;

enum class FieldValidation { Ignore, Warn, Strict };

struct WriteParams {
  registry::WriteOptions opts;
  FieldValidation validation = FieldValidation::Warn;
};

Result<WriteParams> writeParams(const http::Request& req) {
  WriteParams p;
  for (const auto& [k, v] : req.query) {
    if (k == "dryRun") {
      if (v == "All")
        p.opts.dry_run = true;
      else if (!v.empty())
        return ApiError::badRequest("Invalid dry run value: " + v + ": supported values: \"All\"");
    }
  }
  p.opts.field_manager = req.queryValue("fieldManager");
  if (p.opts.field_manager.empty()) p.opts.field_manager = registry::defaultManager(req.header("user-agent"));
  if (p.opts.field_manager.size() > 128)
    return ApiError::badRequest("fieldManager: Too long: must have at most 128 bytes");
  std::string_view fv = req.queryValue("fieldValidation");
  if (fv.empty() || fv == "Warn")
    p.validation = FieldValidation::Warn;
  else if (fv == "Strict")
    p.validation = FieldValidation::Strict;
  else if (fv == "Ignore")
    p.validation = FieldValidation::Ignore;
  else
    return ApiError::badRequest("fieldValidation: Invalid value: \"" + std::string(fv) +
                                "\": fieldValidation must be one of \"Ignore\", \"Warn\", or \"Strict\"");
  return p;
}

// Checks a decoded body against the kind's schema: type errors are always 400; unknown
// and duplicate fields are 400 (Strict), warnings (Warn) or silently dropped (Ignore).
Status checkAgainstSchema(json::Document& doc, const apis::Resource& r, FieldValidation fv,
                          std::vector<std::string>& warnings) {
  const auto& schemas = apis::SchemaRegistry::instance();
  const apis::SchemaNode* root = schemas.definition(r.schema_name);
  if (!root) return okStatus();
  std::vector<apis::SchemaFinding> findings;
  schemas.check(doc, root, findings);
  std::string prefix = r.kind + " in version \"" + r.version + "\" cannot be handled as a " + r.kind + ": ";
  std::string strict;
  // The first decode error, unless a later one stopped the decoder (as Go's does).
  const apis::SchemaFinding* decodeError = nullptr;
  for (const auto& f : findings) {
    if (f.kind != apis::SchemaFinding::Kind::TypeMismatch) continue;
    if (!decodeError || (f.stops_decoding && !decodeError->stops_decoding)) decodeError = &f;
  }
  if (decodeError) return ApiError::badRequest(prefix + decodeError->message);
  for (const auto& f : findings) {
    if (fv == FieldValidation::Strict)
      strict += (strict.empty() ? "" : ", ") + f.message;
    else if (fv == FieldValidation::Warn)
      warnings.push_back(f.message);
  }
  if (!strict.empty()) return ApiError::badRequest(prefix + "strict decoding error: " + strict);
  if (!findings.empty()) schemas.prune(doc, root);
  return okStatus();
}

http::Response objectResponse(int code, const std::string& body, const OutputFormat& f,
                              const std::vector<std::string>& warnings) {
  http::Response r;
  r.status = code;
  r.headers.emplace_back("Content-Type", contentTypeOf(f));
  for (const auto& w : warnings) r.headers.emplace_back("Warning", warningHeader(w));
  if (f.kind == OutputFormat::Kind::Json && !f.pretty) {
    r.body = body;
  } else {
    json::Document d;
    d.Parse(body.data(), body.size());
    r.body = encode(d, f);
  }
  return r;
}

IncludeObject includeObject(const http::Request& req) {
  std::string_view v = req.queryValue("includeObject");
  if (v == "None") return IncludeObject::None;
  if (v == "Object") return IncludeObject::Object;
  return IncludeObject::Metadata;
}

void sendObject(const std::shared_ptr<http::Responder>& resp, const http::Request& req, const RequestScope& s,
                int code, const ObjectPtr& obj, const std::vector<std::string>& warnings = {}) {
  auto fmt = negotiateOutput(req, true);
  if (!fmt) return resp->send(errorResponse(fmt.error()));
  if (fmt->kind == OutputFormat::Kind::Table) {
    TableOptions to;
    to.version = fmt->table_version;
    to.include = includeObject(req);
    std::string body = buildTable(*s.resource, {obj}, to,
                                  R"({"resourceVersion":")" + std::to_string(obj->mod_revision) + "\"}");
    OutputFormat jf;
    return resp->send(objectResponse(code, body, jf, warnings));
  }
  resp->send(objectResponse(code, obj->json, *fmt, warnings));
}

std::string listMeta(const registry::ListPage& page) {
  std::string m = R"({"resourceVersion":")" + std::to_string(page.revision) + "\"";
  if (!page.continue_token.empty()) m += R"(,"continue":")" + page.continue_token + "\"";
  if (page.remaining_item_count)
    m += R"(,"remainingItemCount":)" + std::to_string(*page.remaining_item_count);
  return m + "}";
}

// A list as JSON, its items not copied: `r.body` holds the list's head and `r.more_body`
// points at each cached object's JSON (the objects stay alive with the response).
void listJson(const apis::Resource& r, const registry::ListPage& page, http::Response& out) {
  out.body = R"({"kind":")" + r.listKind() + R"(","apiVersion":")" + r.apiVersion() + R"(","metadata":)" +
             listMeta(page) + R"(,"items":[)";
  out.more_body.reserve(page.items.size() + 1);
  bool first = true;
  for (const auto& o : page.items) {
    http::Chunk c;
    if (!first) c.head = ",";
    first = false;
    c.body = o->json;
    c.owner = o;
    out.more_body.push_back(std::move(c));
  }
  http::Chunk end;
  end.tail = "]}";
  out.more_body.push_back(std::move(end));
}

Result<int64_t> parseLimit(const http::Request& req) {
  std::string_view l = req.queryValue("limit");
  if (l.empty()) return int64_t{0};
  char* end = nullptr;
  std::string s(l);
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0') return ApiError::badRequest("limit: Invalid value: \"" + s + "\": must be an integer");
  return static_cast<int64_t>(v < 0 ? 0 : v);
}

// DeleteOptions from the body (JSON or YAML) and the query (gracePeriodSeconds,
// propagationPolicy, dryRun), as upstream merges them.
Result<registry::DeleteOptions> deleteOptions(const http::Request& req) {
  json::Document body;
  const json::Value* bodyPtr = nullptr;
  if (!req.body.empty()) {
    if (auto st = decodeBody(req, body); !st) return st.error();
    bodyPtr = &body;
  }
  auto opts = registry::parseDeleteOptions(bodyPtr);
  if (!opts) return opts.error();
  if (std::string_view g = req.queryValue("gracePeriodSeconds"); !g.empty()) {
    char* end = nullptr;
    std::string text(g);
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (*end != '\0')
      return ApiError::badRequest("gracePeriodSeconds: Invalid value: \"" + text + "\": must be an integer");
    opts->grace_period_seconds = v;
  }
  if (std::string_view p = req.queryValue("propagationPolicy"); !p.empty()) opts->propagation_policy = p;
  auto params = writeParams(req);
  if (!params) return params.error();
  if (params->opts.dry_run) opts->dry_run = true;
  return opts;
}

registry::Subresource subresourceOf(const RequestScope& s) {
  if (s.subresource == "status") return registry::Subresource::Status;
  if (s.subresource == "finalize") return registry::Subresource::Finalize;
  return registry::Subresource::Main;
}

}  // namespace

RestHandler::RestHandler(WatchRegistry& watches, registry::Registry& registry)
    : watches_(watches), registry_(registry) {
  // The subresources with handlers of their own, and the create-only resources.
  auto verb = [this](void (RestHandler::*fn)(http::Request&, const std::shared_ptr<http::Responder>&,
                                             const RequestScope&)) {
    return [this, fn](http::Request& req, const std::shared_ptr<http::Responder>& resp,
                      const RequestScope& s) { (this->*fn)(req, resp, s); };
  };
  auto postOnly = [this](void (RestHandler::*fn)(http::Request&, const std::shared_ptr<http::Responder>&,
                                                 const RequestScope&)) {
    return [this, fn](http::Request& req, const std::shared_ptr<http::Responder>& resp,
                      const RequestScope& s) {
      if (req.method != "POST" || (s.subresource.empty() && !s.name.empty())) {
        std::string what = s.resource->plural + (s.subresource.empty() ? "" : "/" + s.subresource);
        return resp->send(errorResponse(ApiError::methodNotSupported(s.resource->group, what, req.method)));
      }
      (this->*fn)(req, resp, s);
    };
  };
  addSubresource("", "pods", "binding", postOnly(&RestHandler::bind));
  addSubresource("", "pods", "eviction", postOnly(&RestHandler::evict));
  addSubresource("", "bindings", "", postOnly(&RestHandler::bind));
  addSubresource("", "pods", "log", verb(&RestHandler::podLog));
  for (const char* sub : {"exec", "attach", "portforward"})
    addSubresource("", "pods", sub, verb(&RestHandler::podStream));
  addSubresource("", "serviceaccounts", "token", verb(&RestHandler::createToken));
  addSubresource("", "replicationcontrollers", "scale", verb(&RestHandler::scale));
  addSubresource("apps", "deployments", "scale", verb(&RestHandler::scale));
  addSubresource("apps", "replicasets", "scale", verb(&RestHandler::scale));
  addSubresource("apps", "statefulsets", "scale", verb(&RestHandler::scale));
  for (const char* review : {"selfsubjectaccessreviews", "subjectaccessreviews", "selfsubjectrulesreviews"})
    addSubresource("authorization.k8s.io", review, "", postOnly(&RestHandler::createEphemeral));
  addSubresource("authentication.k8s.io", "selfsubjectreviews", "", postOnly(&RestHandler::createEphemeral));
}

void RestHandler::addSubresource(const std::string& group, const std::string& plural, const std::string& sub,
                                 SubresourceHandler fn) {
  subresources_[group + "/" + plural + "/" + sub] = std::move(fn);
}

const RestHandler::SubresourceHandler* RestHandler::subresourceHandler(const apis::Resource& r,
                                                                       const std::string& sub) const {
  auto it = subresources_.find(r.group + "/" + r.plural + "/" + sub);
  return it == subresources_.end() ? nullptr : &it->second;
}

void RestHandler::handle(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                         const RequestScope& s) {
  const std::string& m = req.method;
  bool item = !s.name.empty();
  if (!s.subresource.empty() && !s.resource->hasSubresource(s.subresource))
    return resp->send(
        errorResponse(ApiError::make(404, "NotFound", "the server could not find the requested resource")));
  // A subresource with a handler of its own, or a create-only resource.
  if (const SubresourceHandler* h = subresourceHandler(*s.resource, s.subresource); h && !s.force_watch)
    return (*h)(req, resp, s);
  if (!s.resource->stored)
    return resp->send(errorResponse(ApiError::methodNotSupported(s.resource->group, s.resource->plural, m)));
  // The rest are the generic verbs on the object, or on its status or finalize parts.
  if (s.subresource == "finalize" && m != "PUT")
    return resp->send(
        errorResponse(ApiError::methodNotSupported(s.resource->group, s.resource->plural + "/finalize", m)));
  if (m == "GET" || m == "HEAD") {
    if (s.force_watch || (!item && req.queryBool("watch"))) return watch(req, resp, s);
    if (item) return get(req, resp, s);
    return list(req, resp, s);
  }
  if (m == "POST" && !item) return create(req, resp, s);
  if (m == "PUT" && item) return update(req, resp, s);
  if (m == "PATCH" && item) return patch(req, resp, s);
  if (m == "DELETE" && item && s.subresource.empty()) return remove(req, resp, s);
  if (m == "DELETE" && !item) return removeCollection(req, resp, s);
  resp->send(errorResponse(ApiError::methodNotSupported(s.resource->group, s.resource->plural, m)));
}

admission::Request RestHandler::admissionFor(const http::Request& req, const RequestScope& s,
                                             bool dry_run) const {
  admission::Request r;
  r.chain = admission_;
  r.attributes.resource = s.resource.get();
  r.attributes.subresource = s.subresource;
  r.attributes.ns = s.ns;
  r.attributes.name = s.name;
  r.attributes.user = requestUser(req);
  r.attributes.dry_run = dry_run;
  return r;
}

void RestHandler::get(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                      const RequestScope& s) {
  if (auto fresh = s.store->awaitFresh(std::string(req.queryValue("resourceVersion"))); !fresh)
    return resp->send(errorResponse(fresh.error()));
  auto obj = s.store->get(s.ns, s.name);
  if (!obj) return resp->send(errorResponse(obj.error()));
  sendObject(resp, req, s, 200, obj.value());
}

void RestHandler::list(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                       const RequestScope& s) {
  auto fmt = negotiateOutput(req, true);
  if (!fmt) return resp->send(errorResponse(fmt.error()));
  auto limit = parseLimit(req);
  if (!limit) return resp->send(errorResponse(limit.error()));
  registry::ListOptions o;
  o.ns = s.ns;
  o.label_selector = req.queryValue("labelSelector");
  o.field_selector = req.queryValue("fieldSelector");
  o.limit = limit.value();
  o.continue_token = req.queryValue("continue");
  o.resource_version = req.queryValue("resourceVersion");
  o.resource_version_match = req.queryValue("resourceVersionMatch");
  // A continued list reads its first page's revision; an Exact one reads that revision.
  if (o.continue_token.empty() && o.resource_version_match != "Exact")
    if (auto fresh = s.store->awaitFresh(o.resource_version); !fresh)
      return resp->send(errorResponse(fresh.error()));
  auto page = s.store->list(o);
  if (!page) return resp->send(errorResponse(page.error()));
  http::Response r;
  r.headers.emplace_back("Content-Type", contentTypeOf(*fmt));
  if (fmt->kind == OutputFormat::Kind::Table) {
    TableOptions to;
    to.version = fmt->table_version;
    to.include = includeObject(req);
    r.body = buildTable(*s.resource, page->items, to, listMeta(page.value()));
    r.headers[0].second = "application/json";
  } else if (fmt->kind == OutputFormat::Kind::Json && !fmt->pretty) {
    listJson(*s.resource, page.value(), r);
  } else {
    http::Response whole;
    listJson(*s.resource, page.value(), whole);
    whole.flattenBody();
    json::Document d;
    d.Parse(whole.body.data(), whole.body.size());
    r.body = encode(d, *fmt);
  }
  resp->send(std::move(r));
}

void RestHandler::watch(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                        const RequestScope& s) {
  auto fmt = negotiateOutput(req, true);
  if (!fmt) return resp->send(errorResponse(fmt.error()));
  registry::WatchOptions o;
  o.ns = s.ns;
  o.label_selector = req.queryValue("labelSelector");
  o.field_selector = req.queryValue("fieldSelector");
  o.resource_version = req.queryValue("resourceVersion");
  o.send_initial_events = req.queryBool("sendInitialEvents");
  WatchStreamOptions wo;
  wo.table = fmt->kind == OutputFormat::Kind::Table;
  wo.table_options.version = fmt->table_version;
  wo.table_options.include = includeObject(req);
  wo.bookmarks = req.queryBool("allowWatchBookmarks");
  std::string_view ts = req.queryValue("timeoutSeconds");
  long timeout = 0;
  if (!ts.empty()) {
    char* end = nullptr;
    std::string t(ts);
    errno = 0;
    timeout = std::strtol(t.c_str(), &end, 10);
    if (*end != '\0' || timeout < 0 || errno == ERANGE)
      return resp->send(errorResponse(ApiError::badRequest("timeoutSeconds: Invalid value: \"" + t + "\"")));
  }
  if (timeout == 0) {
    // Upstream spreads watch lifetimes over [30, 60) minutes so reconnects do not align.
    thread_local std::mt19937 rng{std::random_device{}()};
    timeout = 1800 + static_cast<long>(rng() % 1800);
  }
  // At most a year, so the deadline cannot overflow the clock.
  timeout = std::min<long>(timeout, 365L * 24 * 3600);
  wo.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);

  // Validate selectors before committing to a 200 stream.
  if (auto probe = s.store->list({s.ns, o.label_selector, o.field_selector, 1, "", "", ""});
      !probe && probe.error().code == 400)
    return resp->send(errorResponse(probe.error()));

  // A watch from a revision this server has not seen yet waits for it, as a list does; one
  // without a revision starts at what the cache holds (upstream's "most recent").
  if (!o.resource_version.empty())
    if (auto fresh = s.store->awaitFresh(o.resource_version); !fresh)
      return resp->send(errorResponse(fresh.error()));

  auto slot = watches_.reserve(requestUser(req).name);
  if (!slot) {
    ApiError e = ApiError::make(429, "TooManyRequests",
                                "too many watches: user \"" + requestUser(req).name + "\" already has " +
                                    std::to_string(watches_.maxPerUser()) + " open");
    e.retry_after_seconds = 1;
    return resp->send(errorResponse(e));
  }
  http::Headers headers{{"Content-Type", "application/json"}, {"Cache-Control", "no-cache, private"}};
  auto writer = resp->startStream(200, std::move(headers));
  if (!writer) return;
  auto ws = std::make_shared<WatchStream>(s.resource, writer, wo);
  ws->holdSlot(std::move(slot));
  std::weak_ptr<WatchStream> weak = ws;
  writer->onClose([weak] {
    if (auto w = weak.lock()) w->finish();
  });
  auto handle = s.store->watch(o, ws);
  if (!handle) {
    ws->fail(statusJson(handle.error()));
    return;
  }
  ws->attach(std::move(handle.value()));
  watches_.add(ws);
}

void RestHandler::create(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                         const RequestScope& s) {
  auto params = writeParams(req);
  if (!params) return resp->send(errorResponse(params.error()));
  json::Document doc;
  if (auto st = decodeBody(req, doc); !st) return resp->send(errorResponse(st.error()));
  if (!doc.IsObject())
    return resp->send(errorResponse(ApiError::badRequest("the request body must be a JSON object")));
  std::vector<std::string> warnings;
  if (auto st = checkAgainstSchema(doc, *s.resource, params->validation, warnings); !st)
    return resp->send(errorResponse(st.error()));
  params->opts.admission = admissionFor(req, s, params->opts.dry_run);
  auto obj = s.store->create(s.ns, doc, params->opts);
  if (!obj) return resp->send(errorResponse(obj.error()));
  sendObject(resp, req, s, 201, obj.value(), warnings);
}

void RestHandler::createEphemeral(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                                  const RequestScope& s) {
  // Reviews have no metadata to print: a Table is not acceptable (upstream: 406).
  auto fmt = negotiateOutput(req, false);
  if (!fmt) return resp->send(errorResponse(fmt.error()));
  auto params = writeParams(req);
  if (!params) return resp->send(errorResponse(params.error()));
  json::Document doc;
  if (auto st = decodeBody(req, doc); !st) return resp->send(errorResponse(st.error()));
  if (!doc.IsObject())
    return resp->send(errorResponse(ApiError::badRequest("the request body must be a JSON object")));
  std::vector<std::string> warnings;
  if (auto st = checkAgainstSchema(doc, *s.resource, params->validation, warnings); !st)
    return resp->send(errorResponse(st.error()));
  auto out = answerReview(*s.resource, doc, ReviewContext{requestUser(req), authorizer_, rbac_policy_.get()});
  if (!out) return resp->send(errorResponse(out.error()));
  resp->send(objectResponse(201, out.value(), *fmt, warnings));
}

void RestHandler::update(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                         const RequestScope& s) {
  auto params = writeParams(req);
  if (!params) return resp->send(errorResponse(params.error()));
  json::Document doc;
  if (auto st = decodeBody(req, doc); !st) return resp->send(errorResponse(st.error()));
  if (!doc.IsObject())
    return resp->send(errorResponse(ApiError::badRequest("the request body must be a JSON object")));
  std::vector<std::string> warnings;
  if (auto st = checkAgainstSchema(doc, *s.resource, params->validation, warnings); !st)
    return resp->send(errorResponse(st.error()));
  params->opts.admission = admissionFor(req, s, params->opts.dry_run);
  auto out = s.store->update(s.ns, s.name, doc, params->opts, subresourceOf(s));
  if (!out) return resp->send(errorResponse(out.error()));
  sendObject(resp, req, s, out->created ? 201 : 200, out->object, warnings);
}

void RestHandler::patch(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                        const RequestScope& s) {
  auto params = writeParams(req);
  if (!params) return resp->send(errorResponse(params.error()));
  auto type = patch::patchTypeOf(mediaType(req.header("content-type")));
  if (!type) return resp->send(errorResponse(type.error()));
  if (type.value() == patch::PatchType::Apply) return apply(req, resp, s);
  json::Document patchDoc;
  if (auto st = decodeBody(req, patchDoc); !st) return resp->send(errorResponse(st.error()));
  const apis::SchemaNode* schema = apis::SchemaRegistry::instance().definition(s.resource->schema_name);
  std::vector<std::string> warnings;
  FieldValidation fv = params->validation;
  const apis::Resource& r = *s.resource;
  auto mutate = [&](json::Document& obj) -> Status {
    warnings.clear();
    std::string rvBefore(json::getStringPath(obj, {"metadata", "resourceVersion"}));
    if (auto st = patch::applyPatch(type.value(), obj, patchDoc, schema); !st) return st;
    if (!obj.IsObject()) return ApiError::badRequest("the patched object is not a JSON object");
    // A patch that does not name a resourceVersion applies to the latest one.
    if (json::getStringPath(obj, {"metadata", "resourceVersion"}) == rvBefore) {
      if (json::Value* m = json::find(obj, "metadata")) json::remove(*m, "resourceVersion");
    }
    return checkAgainstSchema(obj, r, fv, warnings);
  };
  params->opts.admission = admissionFor(req, s, params->opts.dry_run);
  auto out = s.store->modify(s.ns, s.name, mutate, params->opts, subresourceOf(s));
  if (!out) return resp->send(errorResponse(out.error()));
  sendObject(resp, req, s, 200, out->object, warnings);
}

void RestHandler::remove(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                         const RequestScope& s) {
  auto opts = deleteOptions(req);
  if (!opts) return resp->send(errorResponse(opts.error()));
  opts->admission = admissionFor(req, s, opts->dry_run);
  auto out = s.store->remove(s.ns, s.name, opts.value());
  if (!out) return resp->send(errorResponse(out.error()));
  // Upstream answers 202 only for a pending deletion that asked for cascading with the
  // deprecated orphanDependents=false; graceful and finalized deletions answer 200.
  int code = !out->deleted_now && opts->orphan_dependents == false ? 202 : 200;
  if (s.resource->return_deleted_object || !out->deleted_now)
    return sendObject(resp, req, s, code, out->object);
  json::Document d;
  d.Parse(out->object->json.data(), out->object->json.size());
  http::Response r;
  r.status = code;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = successStatusJson(s.resource->group, s.resource->plural, s.name,
                             std::string(json::getStringPath(d, {"metadata", "uid"})));
  resp->send(std::move(r));
}

void RestHandler::removeCollection(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                                   const RequestScope& s) {
  auto opts = deleteOptions(req);
  if (!opts) return resp->send(errorResponse(opts.error()));
  registry::ListOptions lo;
  lo.ns = s.ns;
  lo.label_selector = req.queryValue("labelSelector");
  lo.field_selector = req.queryValue("fieldSelector");
  auto page = s.store->list(lo);
  if (!page) return resp->send(errorResponse(page.error()));
  registry::ListPage deleted;
  deleted.revision = page->revision;
  for (const auto& o : page->items) {
    opts->admission = admissionFor(req, s, opts->dry_run);
    opts->admission.attributes.name = o->name;
    opts->admission.attributes.ns = o->ns;
    auto out = s.store->remove(o->ns, o->name, opts.value());
    if (!out) {
      if (out.error().code == 404) continue;  // gone meanwhile
      return resp->send(errorResponse(out.error()));
    }
    deleted.items.push_back(out->object);
  }
  http::Response r;
  r.headers.emplace_back("Content-Type", "application/json");
  listJson(*s.resource, deleted, r);
  resp->send(std::move(r));
}

}  // namespace shepherd::handlers
