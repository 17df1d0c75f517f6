#include "controllers/manager/revision_history.h"

#include <algorithm>

#include "controllers/manager/object_meta.h"

namespace shepherd::controllers {

namespace {

// A string as Go's encoding/json writes it (HTML-safe: <, > and & escaped too).
void writeGoString(std::string_view in, std::string& out) {
  static const char hex[] = "0123456789abcdef";
  out += '"';
  for (size_t i = 0; i < in.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(in[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else if (c == 0xe2 && i + 2 < in.size() && static_cast<unsigned char>(in[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(in[i + 2]) == 0xa8 ||
                static_cast<unsigned char>(in[i + 2]) == 0xa9)) {
      out += static_cast<unsigned char>(in[i + 2]) == 0xa8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

void writeCanonical(const json::Value& v, std::string& out) {
  if (v.IsObject()) {
    std::vector<const json::Value::Member*> members;
    for (auto& m : v.GetObject()) members.push_back(&m);
    std::sort(members.begin(), members.end(),
              [](auto* a, auto* b) { return json::view(a->name) < json::view(b->name); });
    out += '{';
    for (size_t i = 0; i < members.size(); ++i) {
      if (i) out += ',';
      writeGoString(json::view(members[i]->name), out);
      out += ':';
      writeCanonical(members[i]->value, out);
    }
    out += '}';
  } else if (v.IsArray()) {
    out += '[';
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      if (i) out += ',';
      writeCanonical(v[i], out);
    }
    out += ']';
  } else if (v.IsString()) {
    writeGoString(json::view(v), out);
  } else {
    json::serializeTo(v, out);
  }
}

// Nulls dropped (Go decodes them to nothing and omits them again), recursively.
void dropNulls(json::Value& v) {
  if (v.IsObject()) {
    for (auto it = v.MemberBegin(); it != v.MemberEnd();) {
      if (it->value.IsNull()) {
        it = v.EraseMember(it);
        continue;
      }
      dropNulls(it->value);
      ++it;
    }
  } else if (v.IsArray()) {
    for (auto& x : v.GetArray()) dropNulls(x);
  }
}

// The template as a Go client re-encodes it after reading it: the fields Go always writes
// (metadata.creationTimestamp as null, each container's resources) are there.
void asGoWritesIt(json::Value& tmpl, json::Allocator& a) {
  dropNulls(tmpl);
  json::Value& md = json::ensureObject(tmpl, "metadata", a);
  if (!json::find(md, "creationTimestamp"))
    json::set(md, "creationTimestamp", json::Value(rapidjson::kNullType), a);
  if (json::Value* spec = json::find(tmpl, "spec"); spec && spec->IsObject())
    for (const char* list : {"initContainers", "containers", "ephemeralContainers"})
      if (json::Value* cs = json::find(*spec, list); cs && cs->IsArray())
        for (auto& c : cs->GetArray())
          if (c.IsObject() && !json::find(c, "resources"))
            json::set(c, "resources", json::Value(rapidjson::kObjectType), a);
}

std::string revisionsPath(const std::string& ns) {
  return "/apis/apps/v1/namespaces/" + client::urlEncode(ns) + "/controllerrevisions";
}

}  // namespace

std::string canonicalJson(const json::Value& v) {
  std::string out;
  writeCanonical(v, out);
  return out;
}

std::string revisionData(const json::Value& owner) {
  json::Document patch;
  patch.SetObject();
  auto& a = patch.GetAllocator();
  json::Value tmpl(rapidjson::kObjectType);
  if (const json::Value* t = json::findPath(owner, {"spec", "template"}); t && t->IsObject())
    tmpl.CopyFrom(*t, a);
  asGoWritesIt(tmpl, a);
  json::setString(tmpl, "$patch", "replace", a);
  json::Value spec(rapidjson::kObjectType);
  json::set(spec, "template", std::move(tmpl), a);
  json::set(patch, "spec", std::move(spec), a);
  return canonicalJson(patch);
}

bool revisionMatches(const json::Value& owner, const json::Value& revision) {
  const json::Value* data = json::find(revision, "data");
  return data && canonicalJson(*data) == revisionData(owner);
}

int64_t revisionNumber(const json::Value& revision) {
  return json::getInt(revision, "revision").value_or(0);
}

void sortByRevision(std::vector<client::Object>& revisions) {
  std::sort(revisions.begin(), revisions.end(), [](const client::Object& a, const client::Object& b) {
    int64_t ra = revisionNumber(*a), rb = revisionNumber(*b);
    return ra != rb ? ra < rb : nameOf(*a) < nameOf(*b);
  });
}

Result<std::vector<client::Object>> claimRevisions(client::Client& c, const Owner& owner,
                                                   const meta::LabelSelector& selector,
                                                   const std::vector<client::Object>& candidates) {
  std::string ns = namespaceOf(*owner.object);
  return claimObjects(c, owner, selector, candidates, [&ns](const json::Value& r) {
    return revisionsPath(ns) + "/" + client::urlEncode(nameOf(r));
  });
}

Result<json::Document> createRevision(client::Client& c, const Owner& owner, const std::string& hash,
                                      int64_t revision, const char* hash_label) {
  const json::Value& obj = *owner.object;
  json::Document rev;
  rev.SetObject();
  auto& a = rev.GetAllocator();
  json::setString(rev, "apiVersion", "apps/v1", a);
  json::setString(rev, "kind", "ControllerRevision", a);
  json::Value& md = json::ensureObject(rev, "metadata", a);
  std::string owner_name = nameOf(obj);
  if (owner_name.size() > 223) owner_name.resize(223);  // names stay within 253 characters
  json::setString(md, "name", owner_name + "-" + hash, a);
  json::Value labels(rapidjson::kObjectType);
  if (const json::Value* l = json::findPath(obj, {"spec", "template", "metadata", "labels"});
      l && l->IsObject())
    labels.CopyFrom(*l, a);
  json::setString(labels, hash_label, hash, a);
  json::set(md, "labels", std::move(labels), a);
  if (const json::Value* ann = json::findPath(obj, {"metadata", "annotations"}); ann && ann->IsObject())
    json::set(md, "annotations", json::Value(*ann, a), a);
  json::Value refs(rapidjson::kArrayType);
  refs.PushBack(controllerReference(owner, a), a);
  json::set(md, "ownerReferences", std::move(refs), a);
  json::Document data;
  if (auto st = json::parse(revisionData(obj), data); !st) return st.error();
  json::set(rev, "data", json::Value(data, a), a);
  json::set(rev, "revision", json::Value(revision), a);
  return c.post(revisionsPath(namespaceOf(obj)), json::serialize(rev));
}

}  // namespace shepherd::controllers
