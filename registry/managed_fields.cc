#include "registry/managed_fields.h"

#include <algorithm>
#include <map>

namespace shepherd::registry {

namespace {

std::string subresourceName(Subresource sub) { return sub == Subresource::Status ? "status" : ""; }

// Merges an applied configuration into the live object: keyed list items by key, sets
// by member, everything else replaced or recursed.
void mergeApplied(json::Value& live, const json::Value& config, const apis::SchemaNode* schema, json::Allocator& a,
                  int depth) {
  if (depth > 100) return;
  if (!config.IsObject() || !live.IsObject()) {
    if (config.IsArray() && live.IsArray() && schema) {
      auto kind = schema->listKind();
      const apis::SchemaNode* items = schema->resolved()->items;
      if (kind == apis::SchemaNode::ListKind::Set) {
        for (auto& v : config.GetArray()) {
          bool present = false;
          for (auto& l : live.GetArray())
            if (l == v) present = true;
          if (!present) live.PushBack(json::Value(v, a), a);
        }
        return;
      }
      if (kind == apis::SchemaNode::ListKind::Map) {
        auto keys = schema->listKeys();
        for (auto& v : config.GetArray()) {
          json::Value* match = nullptr;
          for (auto& l : live.GetArray()) {
            if (!l.IsObject() || !v.IsObject()) continue;
            bool all = true;
            for (const auto& k : keys) {
              const json::Value* lv = json::find(l, k);
              const json::Value* cv = json::find(v, k);
              if ((lv == nullptr) != (cv == nullptr) || (lv && *lv != *cv)) all = false;
            }
            if (all) {
              match = &l;
              break;
            }
          }
          if (match) mergeApplied(*match, v, items, a, depth + 1);
          else live.PushBack(json::Value(v, a), a);
        }
        return;
      }
    }
    live.CopyFrom(config, a);
    return;
  }
  bool atomic = schema && (schema->map_type == "atomic" || schema->resolved()->map_type == "atomic");
  if (atomic) {
    live.CopyFrom(config, a);
    return;
  }
  for (auto& m : config.GetObject()) {
    std::string_view key = json::view(m.name);
    const apis::SchemaNode* child = nullptr;
    if (schema) {
      const apis::SchemaNode* r = schema->resolved();
      child = r->additional ? r->additional : r->property(key);
    }
    json::Value* cur = json::find(live, key);
    if (cur && !m.value.IsNull()) mergeApplied(*cur, m.value, child, a, depth + 1);
    else json::set(live, key, json::Value(m.value, a), a);
  }
}

bool ownedBelow(const std::vector<ManagedEntry>& entries, size_t skip, const apis::FieldPath& prefix) {
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i == skip) continue;
    bool found = false;
    entries[i].fields.forEach([&](const apis::FieldPath& p) {
      if (p.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), p.begin())) found = true;
    });
    if (found) return true;
  }
  return false;
}

}  // namespace

std::vector<ManagedEntry> readManagedFields(const json::Value& obj) {
  std::vector<ManagedEntry> out;
  const json::Value* mf = json::findPath(obj, {"metadata", "managedFields"});
  if (!mf || !mf->IsArray()) return out;
  for (auto& e : mf->GetArray()) {
    if (!e.IsObject()) continue;
    ManagedEntry m;
    m.manager = json::getString(e, "manager");
    m.operation = json::getString(e, "operation");
    m.api_version = json::getString(e, "apiVersion");
    m.time = json::getString(e, "time");
    m.subresource = json::getString(e, "subresource");
    if (const json::Value* f = json::find(e, "fieldsV1")) {
      auto fs = apis::FieldSet::fromFieldsV1(*f);
      if (!fs) continue;
      m.fields = std::move(fs.value());
    }
    out.push_back(std::move(m));
  }
  return out;
}

void writeManagedFields(json::Value& obj, const std::vector<ManagedEntry>& entries, json::Allocator& a) {
  json::Value& meta = json::ensureObject(obj, "metadata", a);
  json::Value arr(rapidjson::kArrayType);
  for (const auto& e : entries) {
    if (e.fields.empty()) continue;
    json::Value v(rapidjson::kObjectType);
    v.AddMember("manager", json::str(e.manager, a), a);
    v.AddMember("operation", json::str(e.operation, a), a);
    v.AddMember("apiVersion", json::str(e.api_version, a), a);
    if (!e.time.empty()) v.AddMember("time", json::str(e.time, a), a);
    v.AddMember("fieldsType", "FieldsV1", a);
    v.AddMember("fieldsV1", e.fields.toFieldsV1(a), a);
    if (!e.subresource.empty()) v.AddMember("subresource", json::str(e.subresource, a), a);
    arr.PushBack(v, a);
  }
  if (arr.Empty()) json::remove(meta, "managedFields");
  else json::set(meta, "managedFields", std::move(arr), a);
}

apis::FieldSet trackedFields(const json::Value& obj, const apis::SchemaNode* schema, Subresource sub) {
  if (sub == Subresource::Status) {
    json::Document statusOnly;
    statusOnly.SetObject();
    if (const json::Value* st = json::find(obj, "status"))
      statusOnly.AddMember("status", json::Value(*st, statusOnly.GetAllocator()), statusOnly.GetAllocator());
    return apis::FieldSet::fromObject(statusOnly, schema);
  }
  return apis::FieldSet::fromObjectExcept(obj, schema, {"apiVersion", "kind", "status"},
                                          {"name", "namespace", "uid", "resourceVersion", "generation",
                                           "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                                           "managedFields", "selfLink"});
}

void recordUpdate(const json::Value* old, json::Document& obj, const std::string& manager,
                  const std::string& api_version, Subresource sub, const apis::SchemaNode* schema,
                  const std::string& now) {
  apis::FieldSet now_set = trackedFields(obj, schema, sub);
  std::string subName = subresourceName(sub);
  if (!old) {
    // A create: the writer owns everything it set.
    std::vector<ManagedEntry> entries;
    if (!now_set.empty()) entries.push_back(ManagedEntry{manager, "Update", api_version, now, subName, std::move(now_set)});
    writeManagedFields(obj, entries, obj.GetAllocator());
    return;
  }
  std::vector<ManagedEntry> entries = readManagedFields(*old);
  apis::FieldSet was_set = trackedFields(*old, schema, sub);
  apis::FieldSet changed;
  now_set.forEach([&](const apis::FieldPath& p) {
    if (!was_set.has(p)) {
      changed.insert(p);
      return;
    }
    if (!p.empty() && p.back() == ".") return;  // containers belong to who made them
    const json::Value* a = apis::valueAt(obj, p);
    const json::Value* b = apis::valueAt(*old, p);
    if (!a || !b || *a != *b) changed.insert(p);
  });
  apis::FieldSet removed = was_set.minus(now_set);
  ManagedEntry* mine = nullptr;
  for (auto& e : entries) {
    if (e.subresource == subName || (sub == Subresource::Main && e.subresource.empty())) {
      e.fields = e.fields.minus(changed).minus(removed);
    }
    if (e.manager == manager && e.operation == "Update" && e.subresource == subName) mine = &e;
  }
  if (!changed.empty()) {
    if (!mine) {
      entries.push_back(ManagedEntry{manager, "Update", api_version, now, subName, {}});
      mine = &entries.back();
    }
    mine->fields = mine->fields.unite(changed);
    mine->time = now;
    mine->api_version = api_version;
  }
  writeManagedFields(obj, entries, obj.GetAllocator());
}

Status applyConfiguration(json::Document& live, const json::Value& config, const std::string& manager, bool force,
                          const std::string& api_version, const apis::SchemaNode* schema, const std::string& now) {
  std::vector<ManagedEntry> entries = readManagedFields(live);
  apis::FieldSet applied = trackedFields(config, schema, Subresource::Main);
  size_t self = entries.size();
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].manager == manager && entries[i].operation == "Apply" && entries[i].subresource.empty()) self = i;

  // Conflicts: a field another manager owns, set here to a different value.
  std::vector<std::pair<std::string, apis::FieldPath>> conflicts;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i == self || !entries[i].subresource.empty()) continue;
    apis::FieldSet overlap = entries[i].fields.intersect(applied);
    overlap.forEach([&](const apis::FieldPath& p) {
      if (!p.empty() && p.back() == ".") return;
      const json::Value* have = apis::valueAt(live, p);
      const json::Value* want = apis::valueAt(config, p);
      if (!have || !want || *have != *want) conflicts.emplace_back(entries[i].manager, p);
    });
  }
  if (!conflicts.empty() && !force) {
    std::vector<StatusCause> causes;
    std::string msg = "Apply failed with " + std::to_string(conflicts.size()) +
                      (conflicts.size() == 1 ? " conflict: " : " conflicts: ");
    std::map<std::string, std::vector<std::string>> byManager;
    for (auto& [m, p] : conflicts) {
      std::string field = apis::FieldSet::describe(p);
      byManager[m].push_back(field);
      causes.push_back({"FieldManagerConflict", "conflict with \"" + m + "\" using " + api_version, field});
    }
    bool first = true;
    for (auto& [m, fields] : byManager) {
      if (!first) msg += "\n";
      first = false;
      if (fields.size() == 1 && conflicts.size() == 1) {
        msg += "conflict with \"" + m + "\" using " + api_version + ": " + fields[0];
      } else {
        msg += "conflicts with \"" + m + "\" using " + api_version + ":";
        for (auto& f : fields) msg += "\n- " + f;
      }
    }
    ApiError e = ApiError::make(409, "Conflict", msg);
    e.causes = std::move(causes);
    return e;
  }
  // Forced: the applier takes the contested fields.
  for (auto& [m, p] : conflicts)
    for (size_t i = 0; i < entries.size(); ++i)
      if (i != self && entries[i].manager == m) entries[i].fields.erase(p);

  apis::FieldSet previous = self < entries.size() ? entries[self].fields : apis::FieldSet{};
  json::Document merged;
  merged.CopyFrom(live, merged.GetAllocator());
  mergeApplied(merged, config, schema, merged.GetAllocator(), 0);

  // Fields this manager applied before and no longer does go, unless someone else owns them.
  // Parents come before children: a removed list item goes whole, while it can still be
  // found by its key.
  auto gone = previous.minus(applied).paths();
  for (const auto& p : gone) {
    apis::FieldPath node = p;
    if (!node.empty() && node.back() == ".") node.pop_back();
    if (ownedBelow(entries, self, node) || applied.has(p)) continue;
    bool appliedBelow = false;
    applied.forEach([&](const apis::FieldPath& q) {
      if (q.size() > node.size() && std::equal(node.begin(), node.end(), q.begin())) appliedBelow = true;
    });
    if (appliedBelow) continue;
    apis::removeAt(merged, p);
  }
  ManagedEntry mine{manager, "Apply", api_version, now, "", applied};
  if (self < entries.size()) entries[self] = mine;
  else entries.push_back(mine);
  writeManagedFields(merged, entries, merged.GetAllocator());
  live.Swap(merged);
  return okStatus();
}

std::string defaultManager(std::string_view user_agent) {
  auto slash = user_agent.find('/');
  std::string m(user_agent.substr(0, slash));
  if (m.empty()) return "unknown";
  if (m.size() > 128) m.resize(128);
  return m;
}

}  // namespace shepherd::registry
