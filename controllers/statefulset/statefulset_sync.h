// One sync of one StatefulSet (internal to the controller; one worker uses it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controllers/statefulset/statefulset_controller.h"

namespace shepherd::controllers::statefulset {

struct StatefulSetController::Sync {
  std::string key;
  json::Document set;
  std::vector<client::Object> pods;       // claimed
  std::vector<client::Object> revisions;  // claimed, by revision number
  // The revisions' names and templates (the update one is the live template unless a
  // rollback made an older revision current again).
  std::string current_revision, update_revision;
  json::Document current_template, update_template;
  int64_t collision_count = 0;
  // replicas[i] holds ordinal start+i (null: not created yet); condemned, highest first.
  std::vector<client::Object> replicas;
  std::vector<client::Object> condemned;
  json::Document status;      // being computed
  int64_t current_delta = 0;  // a pod deleted for the update still shows as current
  std::optional<std::chrono::milliseconds> requeue;

  const json::Value& spec() const { return *json::find(set, "spec"); }
  bool monotonic() const { return json::getString(spec(), "podManagementPolicy") != "Parallel"; }
};

}  // namespace shepherd::controllers::statefulset
