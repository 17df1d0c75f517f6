#include "client/fake_client.h"

#include "common/clock.h"
#include "common/ids.h"
#include "common/json_merge_patch.h"
#include "common/wait.h"
#include "meta/selectors.h"

namespace shepherd::client {

// A request path: /api/v1[/namespaces/NS]/PLURAL[/NAME[/SUB]] or the same under
// /apis/GROUP/VERSION.
struct FakeClient::Path {
  std::string group, version, plural, ns, name, sub;
  std::string collection() const { return group + "/" + plural; }
  std::string key(const std::string& n) const { return collection() + "/" + ns + "/" + n; }
  std::string key() const { return key(name); }
  std::string apiVersion() const { return group.empty() ? version : group + "/" + version; }
};

namespace {

using Query = std::vector<std::pair<std::string, std::string>>;

std::optional<FakeClient::Path> parsePath(std::string_view path, Query& query);

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    if (end > start) out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string queryValue(const Query& q, std::string_view key) {
  for (const auto& [k, v] : q)
    if (k == key) return v;
  return "";
}

ApiError notFound(const FakeClient::Path& p, const std::string& name) {
  return ApiError::notFound(p.group, p.plural, name);
}

json::Document parseOr(const std::string& text) {
  json::Document d;
  if (text.empty() || !json::parse(text, d).ok()) d.SetObject();
  return d;
}

// The object's labels and field-selector attributes as sorted pairs.
meta::StringPairs labelsOf(const json::Value& obj) {
  meta::StringPairs out;
  if (const json::Value* l = json::findPath(obj, {"metadata", "labels"}); l && l->IsObject())
    for (auto& m : l->GetObject())
      if (m.value.IsString()) out.emplace_back(json::view(m.name), json::view(m.value));
  std::sort(out.begin(), out.end());
  return out;
}

// Any string field a selector names (spec.nodeName, status.phase, ...).
meta::StringPairs fieldsOf(const json::Value& obj, const meta::FieldSelector&, const std::string& selector) {
  meta::StringPairs out;
  for (const auto& term : split(selector, ',')) {
    size_t op = term.find_first_of("!=");
    std::string field = term.substr(0, op);
    if (field.empty() || field.rfind("metadata.", 0) == 0) continue;
    const json::Value* v = &obj;
    for (const auto& part : split(field, '.')) {
      v = v && v->IsObject() ? json::find(*v, part) : nullptr;
    }
    out.emplace_back(field, v && v->IsString() ? std::string(json::view(*v)) : std::string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What a list or watch selects.
struct Selection {
  std::optional<meta::LabelSelector> labels;
  std::optional<meta::FieldSelector> fields;
  std::string field_text;
  bool matches(const json::Value& obj) const {
    if (labels && !labels->matches(labelsOf(obj))) return false;
    if (fields) {
      std::string name(json::getStringPath(obj, {"metadata", "name"}));
      std::string ns(json::getStringPath(obj, {"metadata", "namespace"}));
      if (!fields->matches(name, ns, fieldsOf(obj, *fields, field_text))) return false;
    }
    return true;
  }
};

Result<Selection> selection(const Query& q) {
  Selection s;
  if (std::string l = queryValue(q, "labelSelector"); !l.empty()) {
    auto sel = meta::LabelSelector::parse(l);
    if (!sel) return sel.error();
    s.labels = std::move(*sel);
  }
  if (std::string f = queryValue(q, "fieldSelector"); !f.empty()) {
    std::vector<std::string> allowed;
    for (const auto& term : split(f, ',')) allowed.push_back(term.substr(0, term.find_first_of("!=")));
    auto sel = meta::FieldSelector::parse(f, allowed, true);
    if (!sel) return sel.error();
    s.fields = std::move(*sel);
    s.field_text = f;
  }
  return s;
}

std::optional<FakeClient::Path> parsePath(std::string_view full, Query& query) {
  size_t qpos = full.find('?');
  std::string_view path = full.substr(0, qpos);
  if (qpos != std::string_view::npos)
    for (const auto& part : split(full.substr(qpos + 1), '&')) {
      size_t eq = part.find('=');
      query.emplace_back(percentDecode(part.substr(0, eq), true),
                         eq == std::string::npos ? "" : percentDecode(part.substr(eq + 1), true));
    }
  auto seg = split(path, '/');
  FakeClient::Path p;
  size_t i = 0;
  if (seg.size() >= 2 && seg[0] == "api") {
    p.version = seg[1];
    i = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    p.group = seg[1];
    p.version = seg[2];
    i = 3;
  } else {
    return std::nullopt;
  }
  std::vector<std::string> rest(seg.begin() + static_cast<long>(i), seg.end());
  if (rest.size() >= 3 && rest[0] == "namespaces" && rest[2] != "status" && rest[2] != "finalize") {
    p.ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  if (rest.empty() || rest.size() > 3) return std::nullopt;
  p.plural = rest[0];
  if (rest.size() > 1) p.name = rest[1];
  if (rest.size() > 2) p.sub = rest[2];
  for (auto* s : {&p.ns, &p.name}) *s = percentDecode(*s, false);
  return p;
}

bool isStrategic(const std::string& content_type) {
  return content_type.find("strategic-merge-patch") != std::string::npos;
}

// Lists of objects merge by `type` or `name` in a strategic merge patch (conditions,
// containers); everything else as a merge patch.
void applyStrategicPatch(json::Value& target, const json::Value& patch, json::Allocator& a) {
  if (!patch.IsObject() || !target.IsObject()) return json::applyMergePatch(target, patch, a);
  for (auto& m : patch.GetObject()) {
    std::string_view key = json::view(m.name);
    // "$deleteFromPrimitiveList/<list>": remove these values from a list of scalars.
    constexpr std::string_view kDelete = "$deleteFromPrimitiveList/";
    if (key.substr(0, kDelete.size()) == kDelete) {
      json::Value* list = json::find(target, key.substr(kDelete.size()));
      if (list && list->IsArray() && m.value.IsArray()) {
        json::Value kept(rapidjson::kArrayType);
        for (auto& x : list->GetArray()) {
          bool drop = false;
          for (auto& d : m.value.GetArray()) drop = drop || x == d;
          if (!drop) kept.PushBack(json::Value(x, a), a);
        }
        *list = std::move(kept);
      }
      continue;
    }
    json::Value* cur = json::find(target, key);
    if (m.value.IsArray() && cur && cur->IsArray() && !m.value.Empty() && m.value[0].IsObject()) {
      const char* mergeKey = json::find(m.value[0], "type")   ? "type"
                             : json::find(m.value[0], "name") ? "name"
                                                              : nullptr;
      if (mergeKey) {
        for (auto& item : m.value.GetArray()) {
          bool merged = false;
          for (auto& have : cur->GetArray())
            if (have.IsObject() && json::getString(have, mergeKey) == json::getString(item, mergeKey)) {
              json::applyMergePatch(have, item, a);
              merged = true;
            }
          if (!merged) cur->PushBack(json::Value(item, a), a);
        }
        continue;
      }
    }
    if (cur && cur->IsObject() && m.value.IsObject()) {
      applyStrategicPatch(*cur, m.value, a);
      continue;
    }
    json::Document one;
    one.SetObject();
    one.AddMember(json::Value(m.name, one.GetAllocator()), json::Value(m.value, one.GetAllocator()),
                  one.GetAllocator());
    json::applyMergePatch(target, one, a);
  }
}

}  // namespace

FakeClient::~FakeClient() {
  closeWatches();
}

void FakeClient::record(const std::string& verb, const std::string& path, const std::string& body) {
  actions_.push_back({verb, path.substr(0, path.find('?')), body});
}

std::optional<ApiError> FakeClient::takeFailure(const std::string& verb, const std::string& path) {
  for (auto it = failures_.begin(); it != failures_.end(); ++it)
    if (it->verb == verb && path.rfind(it->prefix, 0) == 0) {
      ApiError e = it->error;
      failures_.erase(it);
      return e;
    }
  return std::nullopt;
}

std::vector<FakeClient::Action> FakeClient::actions() const {
  MutexLock g(mu_);
  return actions_;
}

std::vector<FakeClient::Action> FakeClient::actions(const std::string& verb) const {
  MutexLock g(mu_);
  std::vector<Action> out;
  for (const auto& a : actions_)
    if (a.verb == verb) out.push_back(a);
  return out;
}

void FakeClient::clearActions() {
  MutexLock g(mu_);
  actions_.clear();
}

void FakeClient::failNext(const std::string& verb, const std::string& path_prefix, ApiError error) {
  MutexLock g(mu_);
  failures_.push_back({verb, path_prefix, std::move(error)});
}

int64_t FakeClient::revision() const {
  MutexLock g(mu_);
  return rv_;
}

bool FakeClient::waitForWatches(size_t watches, std::chrono::milliseconds timeout) {
  UniqueMutexLock lk(mu_);
  return lk.waitFor(changed_, timeout, [&]() REQUIRES(mu_) {
    if (watches_.size() < watches) return false;
    for (const auto& [w, seen] : watches_)
      if (seen < rv_) return false;
    return true;
  });
}

// waitForChange reads `rv_` only under mu_; the analysis cannot follow the reference.
bool FakeClient::waitFor(const std::function<bool()>& pred,
                         std::chrono::milliseconds timeout) NO_THREAD_SAFETY_ANALYSIS {
  return waitForChange(mu_, changed_, rv_, pred, timeout);
}

void FakeClient::closeWatches() {
  MutexLock g(mu_);
  ++watch_epoch_;
  changed_.notify_all();
}

Result<json::Document> FakeClient::get(const std::string& path, RequestOptions) {
  return dispatch("GET", path, "", "");
}
Result<json::Document> FakeClient::post(const std::string& path, const std::string& body, RequestOptions) {
  return dispatch("POST", path, body, "application/json");
}
Result<json::Document> FakeClient::put(const std::string& path, const std::string& body, RequestOptions) {
  return dispatch("PUT", path, body, "application/json");
}
Result<json::Document> FakeClient::patch(const std::string& path, const std::string& body,
                                         const std::string& content_type, RequestOptions) {
  return dispatch("PATCH", path, body, content_type);
}
Result<json::Document> FakeClient::del(const std::string& path, const std::string& body, RequestOptions) {
  return dispatch("DELETE", path, body, "application/json");
}

Result<HttpResult> FakeClient::request(const std::string& method, const std::string& path,
                                       const std::string& body, const std::string& content_type,
                                       RequestOptions) {
  auto r = dispatch(method, path, body, content_type);
  HttpResult out;
  out.content_type = "application/json";
  if (r) {
    out.status = method == "POST" ? 201 : 200;
    out.body = json::serialize(*r);
  } else {
    out.status = r.error().code;
    out.body = R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":")" + r.error().message +
               R"(","reason":")" + r.error().reason + R"(","code":)" + std::to_string(r.error().code) + "}";
  }
  return out;
}

Result<json::Document> FakeClient::dispatch(const std::string& method, const std::string& path,
                                            const std::string& body, const std::string& content_type) {
  Query q;
  auto p = parsePath(path, q);
  UniqueMutexLock lk(mu_);
  std::string verb = method == "GET"     ? (p && p->name.empty() ? "list" : "get")
                     : method == "POST"  ? "create"
                     : method == "PUT"   ? "update"
                     : method == "PATCH" ? "patch"
                                         : "delete";
  record(verb, path, body);
  if (auto e = takeFailure(verb, path)) return *e;
  if (!p) return ApiError::make(404, "NotFound", "the server could not find the requested resource");
  if (verb == "list") return list(*p, path);
  if (verb == "create") {
    if (p->plural == "pods" && p->sub == "binding") {  // pods/binding: assign the node
      auto it = objects_.find(p->key());
      if (it == objects_.end()) return notFound(*p, p->name);
      json::Document pod = parseOr(it->second.json);
      json::Document b = parseOr(body);
      auto& a = pod.GetAllocator();
      json::setString(json::ensureObject(pod, "spec", a), "nodeName",
                      json::getStringPath(b, {"target", "name"}), a);
      Path pp = *p;
      pp.sub.clear();
      store(pp, p->name, std::move(pod), "MODIFIED");
      return parseOr(R"({"kind":"Status","apiVersion":"v1","status":"Success","code":201})");
    }
    return create(*p, body);
  }
  auto it = objects_.find(p->key());
  if (verb == "get") {
    if (it == objects_.end()) return notFound(*p, p->name);
    return parseOr(it->second.json);
  }
  if (verb == "delete") return remove(*p, body);
  if (it == objects_.end()) return notFound(*p, p->name);
  json::Document current = parseOr(it->second.json);
  json::Document next;
  bool checkRv = false;
  if (verb == "update") {
    next = parseOr(body);
    checkRv = !json::getStringPath(next, {"metadata", "resourceVersion"}).empty();
  } else {
    next.CopyFrom(current, next.GetAllocator());
    json::Document patchDoc = parseOr(body);
    if (isStrategic(content_type))
      applyStrategicPatch(next, patchDoc, next.GetAllocator());
    else
      json::applyMergePatch(next, patchDoc, next.GetAllocator());
    checkRv = json::getStringPath(patchDoc, {"metadata", "resourceVersion"}).size() > 0;
  }
  auto& a = next.GetAllocator();
  // A subresource changes only its part; the object changes all but its status.
  if (p->sub == "status" || p->sub == "finalize") {
    json::Document merged;
    merged.CopyFrom(current, merged.GetAllocator());
    auto& ma = merged.GetAllocator();
    if (p->sub == "status") {
      if (const json::Value* st = json::find(next, "status"))
        json::set(merged, "status", json::Value(*st, ma), ma);
    } else if (const json::Value* f = json::findPath(next, {"spec", "finalizers"})) {
      json::set(json::ensureObject(merged, "spec", ma), "finalizers", json::Value(*f, ma), ma);
    }
    if (checkRv)
      json::setString(json::ensureObject(merged, "metadata", ma), "resourceVersion",
                      json::getStringPath(next, {"metadata", "resourceVersion"}), ma);
    next.Swap(merged);
  } else if (const json::Value* st = json::find(current, "status"); st && p->plural != "namespaces") {
    json::set(next, "status", json::Value(*st, a), a);
  }
  return write(*p, std::move(next), checkRv);
}

Result<json::Document> FakeClient::list(const Path& p, const std::string& path) {
  Query q;
  parsePath(path, q);
  auto sel = selection(q);
  if (!sel) return sel.error();
  json::Document out;
  out.SetObject();
  auto& a = out.GetAllocator();
  json::setString(out, "apiVersion", p.apiVersion(), a);
  json::Value meta(rapidjson::kObjectType);
  json::setString(meta, "resourceVersion", std::to_string(rv_), a);
  json::set(out, "metadata", std::move(meta), a);
  json::Value items(rapidjson::kArrayType);
  std::string prefix = p.collection() + "/" + (p.ns.empty() ? "" : p.ns + "/");
  for (auto it = objects_.lower_bound(prefix); it != objects_.end() && it->first.rfind(prefix, 0) == 0;
       ++it) {
    json::Document d = parseOr(it->second.json);
    if (!sel->matches(d)) continue;
    items.PushBack(json::Value(d, a), a);
  }
  json::set(out, "items", std::move(items), a);
  return out;
}

Result<json::Document> FakeClient::create(const Path& p, const std::string& body) {
  json::Document obj = parseOr(body);
  auto& a = obj.GetAllocator();
  json::Value& m = json::ensureObject(obj, "metadata", a);
  std::string name(json::getString(m, "name"));
  if (name.empty() && !json::getString(m, "generateName").empty()) {
    name = std::string(json::getString(m, "generateName")) + ids::randomSuffix(5);
    json::setString(m, "name", name, a);
  }
  if (name.empty())
    return ApiError::invalid(
        p.group, p.plural, "",
        {{"FieldValueRequired", "Required value: name or generateName is required", "metadata.name"}});
  if (objects_.count(p.key(name))) return ApiError::alreadyExists(p.group, p.plural, name);
  if (!p.ns.empty()) json::setString(m, "namespace", p.ns, a);
  json::setString(m, "uid", ids::uuid4(), a);
  json::setString(m, "creationTimestamp", clock::rfc3339(clock::now()), a);
  if (!json::find(obj, "apiVersion")) json::setString(obj, "apiVersion", p.apiVersion(), a);
  return store(p, name, std::move(obj), "ADDED");
}

namespace {

bool hasFinalizers(const json::Value& meta) {
  const json::Value* fin = json::find(meta, "finalizers");
  return fin && fin->IsArray() && !fin->Empty();
}

}  // namespace

Result<json::Document> FakeClient::write(const Path& p, json::Document obj, bool check_rv) {
  auto it = objects_.find(p.key());
  std::string want(json::getStringPath(obj, {"metadata", "resourceVersion"}));
  if (check_rv && want != std::to_string(it->second.rv))
    return ApiError::conflict(
        p.group, p.plural, p.name,
        "the object has been modified; please apply your changes to the latest version and "
        "try again");
  json::Document current = parseOr(it->second.json);
  auto& a = obj.GetAllocator();
  json::Value& m = json::ensureObject(obj, "metadata", a);
  for (const char* f : {"uid", "creationTimestamp", "namespace", "name", "deletionTimestamp"})
    if (const json::Value* v = json::findPath(current, {"metadata", f}))
      json::set(m, f, json::Value(*v, a), a);
  // The last finalizer gone from an object being deleted: it goes. (A pod in its grace
  // period, without finalizers, stays: its status is still written.)
  const json::Value* was = json::find(current, "metadata");
  if (json::find(m, "deletionTimestamp") && !hasFinalizers(m) && was && hasFinalizers(*was)) {
    std::string name = p.name;
    store(p, name, std::move(obj), "DELETED");
    objects_.erase(p.key());
    return parseOr(events_.back().json);
  }
  return store(p, p.name, std::move(obj), "MODIFIED");
}

Result<json::Document> FakeClient::remove(const Path& p, const std::string& body) {
  auto it = objects_.find(p.key());
  if (it == objects_.end()) return notFound(p, p.name);
  json::Document obj = parseOr(it->second.json);
  json::Document opts = parseOr(body);
  std::string uid(json::getStringPath(opts, {"preconditions", "uid"}));
  if (!uid.empty() && uid != json::getStringPath(obj, {"metadata", "uid"}))
    return ApiError::conflict(p.group, p.plural, p.name, "Precondition failed: UID in precondition: " + uid);
  auto& a = obj.GetAllocator();
  json::Value& m = json::ensureObject(obj, "metadata", a);
  bool finalizers = hasFinalizers(m);
  auto grace = json::getInt(opts, "gracePeriodSeconds");
  bool graceful =
      p.plural == "pods" && !json::getStringPath(obj, {"spec", "nodeName"}).empty() && (!grace || *grace > 0);
  if (finalizers || graceful) {
    if (!json::find(m, "deletionTimestamp")) {
      json::setString(m, "deletionTimestamp", clock::rfc3339(clock::now()), a);
      if (graceful) json::set(m, "deletionGracePeriodSeconds", json::Value(grace.value_or(30)), a);
      return store(p, p.name, std::move(obj), "MODIFIED");
    }
    if (finalizers) return parseOr(it->second.json);
  }
  json::Document gone = store(p, p.name, std::move(obj), "DELETED");
  objects_.erase(p.key());
  return gone;
}

json::Document FakeClient::store(const Path& p, const std::string& name, json::Document obj,
                                 const char* type) {
  auto& a = obj.GetAllocator();
  int64_t rv = ++rv_;
  json::setString(json::ensureObject(obj, "metadata", a), "resourceVersion", std::to_string(rv), a);
  std::string text = json::serialize(obj);
  objects_[p.key(name)] = Object{text, rv};
  events_.push_back({rv, type, p.collection(), p.ns, name, text});
  if (events_.size() > 100000) events_.pop_front();
  changed_.notify_all();
  return obj;
}

Status FakeClient::stream(const std::string& path, const std::function<bool(std::string_view line)>& on_line,
                          const std::atomic<bool>* stop, int idle_timeout_s) {
  Query q;
  auto p = parsePath(path, q);
  UniqueMutexLock lk(mu_);
  record("watch", path, "");
  if (auto e = takeFailure("watch", path)) return *e;
  if (!p) return ApiError::make(404, "NotFound", "the server could not find the requested resource");
  auto sel = selection(q);
  if (!sel) return sel.error();
  int64_t from = std::atoll(queryValue(q, "resourceVersion").c_str());
  if (from == 0) from = rv_;
  uint64_t epoch = watch_epoch_;
  // Registered while open; `seen` is what the client has been handed.
  struct Registration {
    FakeClient& c;
    // Destroyed before `lk`, so with mu_ held; the analysis cannot see that here.
    ~Registration() NO_THREAD_SAFETY_ANALYSIS {
      c.watches_.erase(this);
      c.changed_.notify_all();
    }
  } reg{*this};
  watches_[&reg] = 0;
  auto idleDeadline = std::chrono::steady_clock::now() + std::chrono::seconds(idle_timeout_s);
  for (;;) {
    if (epoch != watch_epoch_ || (stop && stop->load())) return okStatus();
    std::vector<std::string> lines;
    for (const auto& e : events_) {
      if (e.rv <= from || e.collection != p->collection() || (!p->ns.empty() && e.ns != p->ns)) continue;
      if (!sel->matches(parseOr(e.json))) continue;
      lines.push_back(R"({"type":")" + e.type + R"(","object":)" + e.json + "}");
    }
    int64_t upTo = std::max(from, rv_);
    if (!lines.empty()) {
      lk.unlock();
      for (const auto& l : lines)
        if (!on_line(l)) {
          lk.lock();
          return okStatus();
        }
      lk.lock();
      idleDeadline = std::chrono::steady_clock::now() + std::chrono::seconds(idle_timeout_s);
    }
    from = upTo;
    watches_[&reg] = from;
    changed_.notify_all();
    if (!lines.empty()) continue;
    // Wake now and then to notice `stop` (it is not ours to signal).
    lk.waitFor(changed_, std::chrono::milliseconds(50));
    if (std::chrono::steady_clock::now() > idleDeadline) return okStatus();
  }
}

}  // namespace shepherd::client
