// ControllerRevisions, the history of DaemonSets and StatefulSets (upstream's
// pkg/controller/history): a revision's data is a strategic merge patch that restores
// the owner's pod template ({"spec":{"template":{..., "$patch":"replace"}}}, keys sorted
// as Go writes a map, so equal templates give equal bytes); revisions are claimed by
// selector and controllerRef like pods, and numbered from 1 upwards.
#pragma once

#include <string>
#include <vector>

#include "client/client.h"
#include "client/informer.h"
#include "controllers/manager/controller_ref.h"
#include "meta/selectors.h"

namespace shepherd::controllers {

inline constexpr const char* kRevisionHashLabel = "controller-revision-hash";

// JSON with every object's keys sorted (Go's encoding/json of a map).
std::string canonicalJson(const json::Value& v);
// The data of a revision of `owner` (a DaemonSet or StatefulSet).
std::string revisionData(const json::Value& owner);
// Whether `revision` holds `owner`'s current template.
bool revisionMatches(const json::Value& owner, const json::Value& revision);
int64_t revisionNumber(const json::Value& revision);
// Sorted by revision number (then name), oldest first.
void sortByRevision(std::vector<client::Object>& revisions);

// The owner's revisions among `candidates` (its namespace's ControllerRevisions), adopting
// orphans its selector matches and releasing the ones it no longer matches.
Result<std::vector<client::Object>> claimRevisions(client::Client& c, const Owner& owner,
                                                   const meta::LabelSelector& selector,
                                                   const std::vector<client::Object>& candidates);

// A new revision `<owner>-<hash>` with the owner's template labels plus `hash_label` =
// hash (DaemonSets: controller-revision-hash; StatefulSets: controller.kubernetes.io/hash).
// 409 (AlreadyExists) comes back unchanged: the caller decides whether it is a collision.
Result<json::Document> createRevision(client::Client& c, const Owner& owner, const std::string& hash,
                                      int64_t revision, const char* hash_label = kRevisionHashLabel);

}  // namespace shepherd::controllers
