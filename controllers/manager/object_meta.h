// What every controller reads from an object's metadata, and the shared pieces built on
// it: the "namespace" informer index and the owner-reference patch.
#pragma once

#include <string>

#include "client/informer.h"
#include "common/json.h"

namespace shepherd::controllers {

std::string nameOf(const json::Value& obj);
std::string namespaceOf(const json::Value& obj);
std::string uidOf(const json::Value& obj);

// The index of objects by namespace (the same on every informer that has it).
inline constexpr const char* kNamespaceIndex = "namespace";
void indexByNamespace(client::Informer& informer);

// A merge patch setting metadata.ownerReferences to `refs` (null when empty), guarded by
// the object's resourceVersion so a concurrent edit conflicts instead of being lost;
// `add_finalizer`, when set and missing, is added to the object's finalizers.
std::string ownerRefsPatch(const json::Value& obj, json::Value refs, json::Document& doc,
                           const std::string& add_finalizer = "");

}  // namespace shepherd::controllers
