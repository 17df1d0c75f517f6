#include "registry/prepared_objects.h"

namespace shepherd::registry {

PreparedObjects::Ticket PreparedObjects::add(const std::string& key, const std::string* value,
                                             ObjectTemplate prepared) {
  MutexLock g(mu_);
  uint64_t id = next_id_++;
  pending_.emplace(key, Entry{id, value, std::move(prepared)});
  keys_.emplace(id, key);
  return Ticket(this, id);
}

storage::ObjectPtr PreparedObjects::take(const std::string& key, const std::string& value, int64_t revision,
                                         int64_t create_revision) {
  ObjectTemplate found;
  {
    MutexLock g(mu_);
    auto [begin, end] = pending_.equal_range(key);
    for (auto it = begin; it != end; ++it) {
      if (*it->second.value != value) continue;
      found = std::move(it->second.prepared);
      keys_.erase(it->second.id);
      pending_.erase(it);
      break;
    }
  }
  if (!found.object) return nullptr;
  return stampTemplate(found, revision, create_revision);
}

void PreparedObjects::withdraw(uint64_t id) {
  MutexLock g(mu_);
  auto k = keys_.find(id);
  if (k == keys_.end()) return;  // taken by the decoder
  auto [begin, end] = pending_.equal_range(k->second);
  for (auto it = begin; it != end; ++it)
    if (it->second.id == id) {
      pending_.erase(it);
      break;
    }
  keys_.erase(k);
}

storage::ObjectPtr stampTemplate(const ObjectTemplate& t, int64_t revision, int64_t create_revision) {
  const storage::CachedObject& from = *t.object;
  auto obj = std::make_shared<storage::CachedObject>();
  obj->key = from.key;
  obj->ns = from.ns;
  obj->name = from.name;
  obj->labels = from.labels;
  obj->fields = from.fields;
  obj->mod_revision = revision;
  obj->create_revision = create_revision;
  // Sized exactly: cached objects live as long as they are current, and growing a copy
  // in place would double its capacity.
  std::string digits = std::to_string(revision);
  obj->json.reserve(from.json.size() + digits.size());
  obj->json.append(from.json, 0, t.rv_offset).append(digits).append(from.json, t.rv_offset);
  return obj;
}

}  // namespace shepherd::registry
