// metadata.managedFields: which manager owns which fields, kept on every write, and
// server-side apply (merge of an applied configuration, conflicts, removal of fields the
// applier no longer sets).
#pragma once

#include <string>
#include <vector>

#include "apis/fieldset.h"
#include "apis/schema.h"
#include "common/api_error.h"
#include "common/json.h"
#include "registry/options.h"

namespace shepherd::registry {

struct ManagedEntry {
  std::string manager;
  std::string operation;  // Apply or Update
  std::string api_version;
  std::string time;
  std::string subresource;  // "" or "status"
  apis::FieldSet fields;
};

std::vector<ManagedEntry> readManagedFields(const json::Value& obj);
void writeManagedFields(json::Value& obj, const std::vector<ManagedEntry>& entries, json::Allocator& a);

// The fields an operation on `sub` is about: everything but identity metadata and status
// for the main resource; only status for /status.
apis::FieldSet trackedFields(const json::Value& obj, const apis::SchemaNode* schema, Subresource sub);

// Records an Update by `manager`: it gains the fields it set or changed; others lose
// them; fields that disappeared are dropped from every entry. `old` is null on create.
void recordUpdate(const json::Value* old, json::Document& obj, const std::string& manager,
                  const std::string& api_version, Subresource sub, const apis::SchemaNode* schema,
                  const std::string& now);

// Server-side apply of `config` onto `live` (replaced by the result). Conflicts with
// fields other managers own at different values are 409 unless `force`.
Status applyConfiguration(json::Document& live, const json::Value& config, const std::string& manager, bool force,
                          const std::string& api_version, const apis::SchemaNode* schema, const std::string& now);

// The manager of a request without fieldManager: the User-Agent up to its first '/'.
std::string defaultManager(std::string_view user_agent);

}  // namespace shepherd::registry
