#include "handlers/openapi.h"

#include <functional>
#include <set>

#include "common/json.h"

namespace shepherd::handlers {

namespace {

enum class Flavor { V2, V3 };

std::string refPrefix(Flavor f) {
  return f == Flavor::V2 ? "#/definitions/" : "#/components/schemas/";
}

// Rewrites short `$ref: Name` references (and v3 specifics) in a copy of a schema.
void convertSchema(json::Value& s, Flavor f, json::Allocator& a) {
  if (s.IsArray()) {
    for (auto& v : s.GetArray()) convertSchema(v, f, a);
    return;
  }
  if (!s.IsObject()) return;
  if (json::Value* ref = json::find(s, "$ref"); ref && ref->IsString()) {
    std::string full = refPrefix(f) + std::string(json::view(*ref));
    if (f == Flavor::V3 && s.MemberCount() > 1) {
      // OpenAPI 3 ignores siblings of $ref; upstream wraps the reference in allOf.
      json::remove(s, "$ref");
      json::Value one(rapidjson::kObjectType);
      one.AddMember("$ref", json::str(full, a), a);
      json::Value all(rapidjson::kArrayType);
      all.PushBack(one, a);
      s.AddMember("allOf", all, a);
      if (!json::find(s, "default")) s.AddMember("default", json::Value(rapidjson::kObjectType), a);
    } else {
      *ref = json::str(full, a);
    }
  }
  if (f == Flavor::V3 && json::getString(s, "format") == "int-or-string") {
    json::remove(s, "type");
    json::remove(s, "format");
    s.AddMember("x-kubernetes-int-or-string", true, a);
  }
  for (auto& m : s.GetObject()) {
    std::string_view k = json::view(m.name);
    if (k == "properties" && m.value.IsObject()) {
      for (auto& p : m.value.GetObject()) convertSchema(p.value, f, a);
    } else if (k == "items" || k == "additionalProperties") {
      convertSchema(m.value, f, a);
    }
  }
}

void collectRefs(const json::Value& s, std::set<std::string>& out) {
  if (s.IsObject()) {
    for (auto& m : s.GetObject()) {
      if (json::view(m.name) == "$ref" && m.value.IsString())
        out.insert(std::string(json::view(m.value)));
      else
        collectRefs(m.value, out);
    }
  } else if (s.IsArray()) {
    for (auto& v : s.GetArray()) collectRefs(v, out);
  }
}

std::set<std::string> reachable(const json::Document& defs, const std::vector<std::string>& roots) {
  std::set<std::string> seen;
  std::vector<std::string> todo(roots.begin(), roots.end());
  while (!todo.empty()) {
    std::string n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    const json::Value* d = json::find(defs, n);
    if (!d) continue;
    std::set<std::string> refs;
    collectRefs(*d, refs);
    for (auto& r : refs)
      if (!seen.count(r)) todo.push_back(r);
  }
  return seen;
}

const char* kMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.";

struct Param {
  const char* name;
  const char* in;
  const char* type;
  const char* description;
  bool required;
};

const Param kNamespaceParam{"namespace", "path", "string",
                            "object name and auth scope, such as for teams and projects", true};
const Param kNameParam{"name", "path", "string", "name of the resource", true};
const Param kPretty{"pretty", "query", "string", "If 'true', then the output is pretty printed.", false};
const Param kDryRun{
    "dryRun", "query", "string",
    "When present, indicates that modifications should not be persisted. The only valid value is All.",
    false};
const Param kFieldManager{"fieldManager", "query", "string",
                          "A name associated with the actor or entity making these changes.", false};
const Param kFieldValidation{
    "fieldValidation", "query", "string",
    "How the server treats unknown or duplicate fields in the request: Ignore, Warn (default) or Strict.",
    false};
const Param kForce{"force", "query", "boolean",
                   "Force is going to force Apply requests; it must be unset for other patches.", false};
const std::vector<Param> kListParams = {
    {"allowWatchBookmarks", "query", "boolean", "Ask for BOOKMARK watch events.", false},
    {"continue", "query", "string", "The continue token of the previous page of a paged list.", false},
    {"fieldSelector", "query", "string", "A selector restricting the returned objects by their fields.",
     false},
    {"labelSelector", "query", "string", "A selector restricting the returned objects by their labels.",
     false},
    {"limit", "query", "integer", "The maximum number of objects to return in one page.", false},
    {"resourceVersion", "query", "string", "Which resource version the list or watch may be served from.",
     false},
    {"resourceVersionMatch", "query", "string",
     "How resourceVersion applies to a list: Exact or NotOlderThan.", false},
    {"sendInitialEvents", "query", "boolean", "Start a watch with synthetic events for the current state.",
     false},
    {"timeoutSeconds", "query", "integer", "Timeout for the list or watch call.", false},
    {"watch", "query", "boolean", "Watch for changes to the described resources.", false}};

class Builder {
 public:
  Builder(Flavor f, json::Allocator& a) : f_(f), a_(a) {}

  json::Value param(const Param& p) {
    json::Value v(rapidjson::kObjectType);
    v.AddMember("name", json::str(p.name, a_), a_);
    v.AddMember("in", json::str(p.in, a_), a_);
    v.AddMember("description", json::str(p.description, a_), a_);
    if (p.required) v.AddMember("required", true, a_);
    if (f_ == Flavor::V2) {
      v.AddMember("type", json::str(p.type, a_), a_);
      if (std::string_view(p.in) == "query") v.AddMember("uniqueItems", true, a_);
    } else {
      json::Value s(rapidjson::kObjectType);
      s.AddMember("type", json::str(p.type, a_), a_);
      if (std::string_view(p.in) == "query") s.AddMember("uniqueItems", true, a_);
      v.AddMember("schema", s, a_);
    }
    return v;
  }

  json::Value ref(const std::string& def) {
    json::Value r(rapidjson::kObjectType);
    r.AddMember("$ref", json::str(refPrefix(f_) + def, a_), a_);
    return r;
  }

  json::Value operation(const std::string& id, const std::string& desc, const std::string& action,
                        const apis::Resource& r, const std::string& bodyDef, const std::string& respDef,
                        const std::vector<Param>& params, const std::vector<std::string>& consumes,
                        int code) {
    json::Value op(rapidjson::kObjectType);
    op.AddMember("description", json::str(desc, a_), a_);
    op.AddMember("operationId", json::str(id, a_), a_);
    json::Value tags(rapidjson::kArrayType);
    tags.PushBack(json::str(r.group.empty() ? "core_" + r.version : r.group + "_" + r.version, a_), a_);
    op.AddMember("tags", tags, a_);
    json::Value ps(rapidjson::kArrayType);
    for (const auto& p : params) ps.PushBack(param(p), a_);
    if (!bodyDef.empty() && f_ == Flavor::V2) {
      json::Value b(rapidjson::kObjectType);
      b.AddMember("name", "body", a_);
      b.AddMember("in", "body", a_);
      b.AddMember("required", true, a_);
      b.AddMember("schema", ref(bodyDef), a_);
      ps.PushBack(b, a_);
    }
    op.AddMember("parameters", ps, a_);
    if (!bodyDef.empty() && f_ == Flavor::V3) {
      json::Value content(rapidjson::kObjectType);
      for (const auto& c : consumes) {
        json::Value m(rapidjson::kObjectType);
        m.AddMember("schema", ref(bodyDef), a_);
        content.AddMember(json::str(c, a_), m, a_);
      }
      json::Value rb(rapidjson::kObjectType);
      rb.AddMember("content", content, a_);
      rb.AddMember("required", true, a_);
      op.AddMember("requestBody", rb, a_);
    }
    if (f_ == Flavor::V2) {
      json::Value cons(rapidjson::kArrayType);
      for (const auto& c : consumes) cons.PushBack(json::str(c, a_), a_);
      if (consumes.empty()) cons.PushBack("*/*", a_);
      op.AddMember("consumes", cons, a_);
      json::Value prod(rapidjson::kArrayType);
      for (const char* p : {"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"})
        prod.PushBack(json::str(p, a_), a_);
      op.AddMember("produces", prod, a_);
      json::Value schemes(rapidjson::kArrayType);
      schemes.PushBack("https", a_);
      op.AddMember("schemes", schemes, a_);
    }
    json::Value responses(rapidjson::kObjectType);
    for (int c : {code, 401}) {
      json::Value resp(rapidjson::kObjectType);
      resp.AddMember("description", json::str(c == 401 ? "Unauthorized" : (c == 201 ? "Created" : "OK"), a_),
                     a_);
      if (c != 401) {
        if (f_ == Flavor::V2) {
          resp.AddMember("schema", ref(respDef), a_);
        } else {
          json::Value content(rapidjson::kObjectType);
          for (const char* p :
               {"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}) {
            json::Value m(rapidjson::kObjectType);
            m.AddMember("schema", ref(respDef), a_);
            content.AddMember(json::str(p, a_), m, a_);
          }
          resp.AddMember("content", content, a_);
        }
      }
      responses.AddMember(json::str(std::to_string(c), a_), resp, a_);
    }
    op.AddMember("responses", responses, a_);
    op.AddMember("x-kubernetes-action", json::str(action, a_), a_);
    json::Value gvk(rapidjson::kObjectType);
    gvk.AddMember("group", json::str(r.group, a_), a_);
    gvk.AddMember("kind", json::str(r.kind, a_), a_);
    gvk.AddMember("version", json::str(r.version, a_), a_);
    op.AddMember("x-kubernetes-group-version-kind", gvk, a_);
    return op;
  }

  // Adds the paths of one resource to `paths`.
  void addResource(json::Value& paths, const apis::Resource& r, const std::string& listDef) {
    std::string base = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
    if (!r.stored) {  // create-only reviews
      json::Value p(rapidjson::kObjectType);
      std::vector<Param> cp;
      if (r.namespaced) cp.push_back(kNamespaceParam);
      for (const auto& x : {kPretty, kDryRun, kFieldManager, kFieldValidation}) cp.push_back(x);
      std::string gv = r.group.empty() ? "Core" + cap(r.version) : camel(r.group) + cap(r.version);
      p.AddMember(
          "post",
          operation("create" + gv + (r.namespaced ? "Namespaced" : "") + r.kind, "create a " + r.kind, "post",
                    r, r.schema_name, r.schema_name, cp, {"application/json", "application/yaml"}, 201),
          a_);
      std::string path = r.namespaced ? base + "/namespaces/{namespace}/" + r.plural : base + "/" + r.plural;
      paths.AddMember(json::str(path, a_), p, a_);
      return;
    }
    std::string coll = r.namespaced ? base + "/namespaces/{namespace}/" + r.plural : base + "/" + r.plural;
    std::string item = coll + "/{name}";
    std::string kindId = r.kind;
    std::string gvId = r.group.empty() ? "Core" + cap(r.version) : camel(r.group) + cap(r.version);
    std::string ns = r.namespaced ? "Namespaced" : "";
    std::vector<Param> scope;
    if (r.namespaced) scope.push_back(kNamespaceParam);
    const std::string& def = r.schema_name;
    std::vector<std::string> json = {"application/json", "application/yaml",
                                     "application/vnd.kubernetes.protobuf"};
    std::vector<std::string> patchTypes = {"application/json-patch+json", "application/merge-patch+json",
                                           "application/strategic-merge-patch+json",
                                           "application/apply-patch+yaml"};
    {
      json::Value p(rapidjson::kObjectType);
      std::vector<Param> lp = scope;
      lp.insert(lp.end(), kListParams.begin(), kListParams.end());
      lp.push_back(kPretty);
      p.AddMember("get",
                  operation("list" + gvId + ns + kindId, "list or watch objects of kind " + r.kind, "list", r,
                            "", listDef, lp, {}, 200),
                  a_);
      std::vector<Param> cp = scope;
      for (const auto& x : {kPretty, kDryRun, kFieldManager, kFieldValidation}) cp.push_back(x);
      p.AddMember(
          "post",
          operation("create" + gvId + ns + kindId, "create a " + r.kind, "post", r, def, def, cp, json, 201),
          a_);
      std::vector<Param> dp = scope;
      for (const auto& x : kListParams) dp.push_back(x);
      dp.push_back(kDryRun);
      p.AddMember("delete",
                  operation("deletecollection" + gvId + ns + kindId, "delete collection of " + r.kind,
                            "deletecollection", r, std::string(kMeta) + "DeleteOptions",
                            std::string(kMeta) + "Status", dp, json, 200),
                  a_);
      paths.AddMember(json::str(coll, a_), p, a_);
    }
    addItem(paths, r, item, "", gvId + ns + kindId, scope, def, json, patchTypes);
    for (const auto& sub : r.subresources) {
      if (sub == "status")
        addItem(paths, r, item + "/status", "Status", gvId + ns + kindId, scope, def, json, patchTypes);
    }
    if (r.namespaced) {
      json::Value p(rapidjson::kObjectType);
      std::vector<Param> lp(kListParams.begin(), kListParams.end());
      lp.push_back(kPretty);
      p.AddMember("get",
                  operation("list" + gvId + kindId + "ForAllNamespaces",
                            "list or watch objects of kind " + r.kind, "list", r, "", listDef, lp, {}, 200),
                  a_);
      paths.AddMember(json::str(base + "/" + r.plural, a_), p, a_);
    }
  }

 private:
  void addItem(json::Value& paths, const apis::Resource& r, const std::string& path,
               const std::string& suffix, const std::string& idBase, std::vector<Param> scope,
               const std::string& def, const std::vector<std::string>& json,
               const std::vector<std::string>& patchTypes) {
    json::Value p(rapidjson::kObjectType);
    scope.push_back(kNameParam);
    std::vector<Param> gp = scope;
    gp.push_back(kPretty);
    p.AddMember(
        "get",
        operation("read" + idBase + suffix, "read the specified " + r.kind, "get", r, "", def, gp, {}, 200),
        a_);
    std::vector<Param> up = scope;
    for (const auto& x : {kPretty, kDryRun, kFieldManager, kFieldValidation}) up.push_back(x);
    p.AddMember("put",
                operation("replace" + idBase + suffix, "replace the specified " + r.kind, "put", r, def, def,
                          up, json, 200),
                a_);
    std::vector<Param> pp = up;
    pp.push_back(kForce);
    p.AddMember("patch",
                operation("patch" + idBase + suffix, "partially update the specified " + r.kind, "patch", r,
                          std::string(kMeta) + "Patch", def, pp, patchTypes, 200),
                a_);
    if (suffix.empty()) {
      std::vector<Param> dp = scope;
      for (const auto& x : {kPretty, kDryRun}) dp.push_back(x);
      dp.push_back(
          {"gracePeriodSeconds", "query", "integer", "Seconds before the object is deleted.", false});
      dp.push_back({"propagationPolicy", "query", "string",
                    "Whether and how garbage collection is performed.", false});
      p.AddMember(
          "delete",
          operation("delete" + idBase, "delete a " + r.kind, "delete", r,
                    std::string(kMeta) + "DeleteOptions", std::string(kMeta) + "Status", dp, json, 200),
          a_);
    }
    paths.AddMember(json::str(path, a_), p, a_);
  }

  static std::string cap(std::string s) {
    if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return s;
  }
  static std::string camel(const std::string& group) {
    std::string out;
    bool up = true;
    for (char c : group) {
      if (c == '.' || c == '-') {
        up = true;
        continue;
      }
      out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      up = false;
    }
    return out;
  }

  Flavor f_;
  json::Allocator& a_;
};

std::string listDefinition(const apis::Resource& r) {
  return r.schema_name + "List";
}

void addDefinitions(json::Value& out, const json::Document& raw, const std::set<std::string>& names, Flavor f,
                    json::Allocator& a) {
  for (const auto& n : names) {
    const json::Value* d = json::find(raw, n);
    if (!d) continue;
    json::Value copy(*d, a);
    convertSchema(copy, f, a);
    out.AddMember(json::str(n, a), copy, a);
  }
}

std::string fnv(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llX", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

OpenApiDocuments::OpenApiDocuments(const apis::Catalog& catalog, const apis::SchemaRegistry& schemas,
                                   const std::string& version) {
  const json::Document& raw = schemas.rawDefinitions();
  std::vector<std::string> common = {std::string(kMeta) + "Status", std::string(kMeta) + "DeleteOptions",
                                     std::string(kMeta) + "Patch", std::string(kMeta) + "WatchEvent"};
  // v2: everything in one document.
  {
    json::Document d;
    d.SetObject();
    auto& a = d.GetAllocator();
    d.AddMember("swagger", "2.0", a);
    json::Value info(rapidjson::kObjectType);
    info.AddMember("title", "Kubernetes", a);
    info.AddMember("version", json::str(version, a), a);
    d.AddMember("info", info, a);
    json::Value paths(rapidjson::kObjectType);
    Builder b(Flavor::V2, a);
    std::vector<std::string> roots = common;
    for (const auto& r : catalog.resources()) {
      b.addResource(paths, *r, listDefinition(*r));
      roots.push_back(r->schema_name);
      if (r->stored) roots.push_back(listDefinition(*r));
    }
    d.AddMember("paths", paths, a);
    json::Value defs(rapidjson::kObjectType);
    addDefinitions(defs, raw, reachable(raw, roots), Flavor::V2, a);
    d.AddMember("definitions", defs, a);
    v2_ = json::serialize(d);
  }
  // v3: one document per group-version.
  for (const auto& gv : catalog.groupVersions()) {
    json::Document d;
    d.SetObject();
    auto& a = d.GetAllocator();
    d.AddMember("openapi", "3.0.0", a);
    json::Value info(rapidjson::kObjectType);
    info.AddMember("title", "Kubernetes", a);
    info.AddMember("version", json::str(version, a), a);
    d.AddMember("info", info, a);
    json::Value paths(rapidjson::kObjectType);
    Builder b(Flavor::V3, a);
    std::vector<std::string> roots = common;
    for (const auto& r : catalog.resourcesOf(gv.group, gv.version)) {
      b.addResource(paths, *r, listDefinition(*r));
      roots.push_back(r->schema_name);
      if (r->stored) roots.push_back(listDefinition(*r));
    }
    d.AddMember("paths", paths, a);
    json::Value components(rapidjson::kObjectType);
    json::Value schemasV(rapidjson::kObjectType);
    addDefinitions(schemasV, raw, reachable(raw, roots), Flavor::V3, a);
    components.AddMember("schemas", schemasV, a);
    d.AddMember("components", components, a);
    std::string path = gv.group.empty() ? "api/" + gv.version : "apis/" + gv.group + "/" + gv.version;
    v3_[path] = json::serialize(d);
    v3_hash_[path] = fnv(v3_[path]);
  }
  json::Document root;
  root.SetObject();
  auto& a = root.GetAllocator();
  json::Value paths(rapidjson::kObjectType);
  for (const auto& [path, doc] : v3_) {
    json::Value e(rapidjson::kObjectType);
    e.AddMember("serverRelativeURL", json::str("/openapi/v3/" + path + "?hash=" + v3_hash_[path], a), a);
    paths.AddMember(json::str(path, a), e, a);
  }
  root.AddMember("paths", paths, a);
  v3_root_ = json::serialize(root);
}

const std::string* OpenApiDocuments::v3(const std::string& path) const {
  auto it = v3_.find(path);
  return it == v3_.end() ? nullptr : &it->second;
}

std::string OpenApiDocuments::v3Hash(const std::string& path) const {
  auto it = v3_hash_.find(path);
  return it == v3_hash_.end() ? "" : it->second;
}

}  // namespace shepherd::handlers
