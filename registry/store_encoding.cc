// Store: the stored and cached forms of objects (encode for storage, park the cached form
// for the watch cache's decoder, decode what the storage delivers).
#include "apis/schema.h"
#include "common/log.h"
#include "registry/registry.h"
#include "registry/store.h"

namespace shepherd::registry {

ObjectPtr Store::decode(const std::string& key, const std::string& value, int64_t revision,
                        int64_t create_revision) const {
  return decodeObject(*resource_, key, value, revision, create_revision);
}

namespace {

// Fills what the cache indexes (name, namespace, labels, selectable fields) from `d`.
void indexObject(const apis::Resource& resource, const json::Value& d, storage::CachedObject& obj) {
  const json::Value* m = json::find(d, "metadata");
  if (!m) return;
  obj.ns = json::getString(*m, "namespace");
  obj.name = json::getString(*m, "name");
  if (const json::Value* labels = json::find(*m, "labels"); labels && labels->IsObject()) {
    for (auto& l : labels->GetObject())
      if (l.value.IsString()) obj.labels.emplace_back(json::view(l.name), json::view(l.value));
    std::sort(obj.labels.begin(), obj.labels.end());
  }
  resource.strategy->selectableFields(d, obj.fields);
}

// Parses a stored value into its served form (without a resourceVersion).
bool parseStored(const apis::Resource& resource, const std::string& value, json::Document& d) {
  // Full precision: the stored bytes were written by our serializer (shortest round-trip
  // form), so numbers decode to exactly what was written, as the write path caches them.
  d.Parse<rapidjson::kParseFullPrecisionFlag>(value.data(), value.size());
  if (d.HasParseError() || !d.IsObject()) return false;
  resource.strategy->fromStorage(d, d.GetAllocator());
  json::ensureObject(d, "metadata", d.GetAllocator());
  return true;
}

// The cached form of `served` (the serialization of `doc`, whose metadata object closes at
// meta_end) with an empty resourceVersion slot appended to metadata, where setting
// metadata.resourceVersion on the document would put it.
std::optional<ObjectTemplate> templateOf(const apis::Resource& resource, const std::string& key,
                                         const json::Value& doc, const std::string& served, size_t meta_end) {
  if (meta_end == std::string::npos || meta_end == 0) return std::nullopt;
  auto cached = std::make_shared<storage::CachedObject>();
  cached->key = key;
  indexObject(resource, doc, *cached);
  std::string_view open = served[meta_end - 1] == '{' ? "\"resourceVersion\":\"" : ",\"resourceVersion\":\"";
  cached->json.reserve(served.size() + open.size() + 1);
  cached->json.append(served, 0, meta_end).append(open);
  size_t slot = cached->json.size();
  cached->json.append("\"").append(served, meta_end);
  return ObjectTemplate{std::move(cached), slot};
}

}  // namespace

ObjectPtr decodeObject(const apis::Resource& resource, const std::string& key, const std::string& value,
                       int64_t revision, int64_t create_revision) {
  json::Document d;
  if (!parseStored(resource, value, d)) return nullptr;
  json::setString(*json::find(d, "metadata"), "resourceVersion", std::to_string(revision), d.GetAllocator());
  auto obj = std::make_shared<storage::CachedObject>();
  obj->key = key;
  obj->mod_revision = revision;
  obj->create_revision = create_revision;
  indexObject(resource, d, *obj);
  obj->json = json::serialize(d);
  return obj;
}

std::optional<ObjectTemplate> decodeTemplate(const apis::Resource& resource, const std::string& key,
                                             const std::string& value) {
  json::Document d;
  if (!parseStored(resource, value, d)) return std::nullopt;
  json::remove(*json::find(d, "metadata"), "resourceVersion");
  size_t metaEnd = std::string::npos;
  std::string served = json::serializeFindingEnd(d, "metadata", metaEnd);
  return templateOf(resource, key, d, served, metaEnd);
}

PreparedObjects::Ticket Store::encodeAndPrepare(const std::string& key, json::Document& obj,
                                                std::string& stored) {
  std::optional<ObjectTemplate> t;
  if (!resource_->strategy->convertsForStorage()) {
    // Stored and served shapes are the same: one serialization gives both.
    normalizeTypeAndVersion(obj);
    size_t metaEnd = std::string::npos;
    stored = json::serializeFindingEnd(obj, "metadata", metaEnd);
    t = templateOf(*resource_, key, obj, stored, metaEnd);
  } else {
    stored = encodeForStorage(obj);
  }
  if (!t) t = decodeTemplate(*resource_, key, stored);
  if (!t) return {};
  return prepared_.add(key, &stored, std::move(*t));
}

void Store::normalizeTypeAndVersion(json::Document& obj) const {
  auto& a = obj.GetAllocator();
  if (json::Value* m = json::find(obj, "metadata")) json::remove(*m, "resourceVersion");
  json::setString(obj, "apiVersion", resource_->apiVersion(), a);
  json::setString(obj, "kind", resource_->kind, a);
}

std::string Store::encodeForStorage(json::Document& obj) const {
  normalizeTypeAndVersion(obj);
  // Kinds served in two shapes store one of them.
  json::Document stored;
  stored.CopyFrom(obj, stored.GetAllocator());
  resource_->strategy->toStorage(stored, stored.GetAllocator());
  return json::serialize(stored);
}

ObjectPtr Store::readBack(const std::string& key, const std::string& stored, int64_t revision,
                          int64_t create_revision) const {
  // The SQLite backend updates the cache before acknowledging, so this is a map lookup;
  // a newer write to the same key could have landed since, so check the revision.
  ObjectPtr cur = cache_.get(key);
  if (cur && cur->mod_revision == revision) return cur;
  return decode(key, stored, revision, create_revision);
}

}  // namespace shepherd::registry
