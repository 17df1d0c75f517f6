// One sync of one DaemonSet: its copy, the nodes, the current revision's hash and the old
// revisions. Internal to the DaemonSet controller; used by one worker.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controllers/daemonset/daemonset_controller.h"

namespace shepherd::controllers::daemon {

struct DaemonSetController::Sync {
  std::string key;
  json::Document ds;
  std::vector<client::Object> nodes;
  std::string hash;                 // of the current ControllerRevision
  std::vector<client::Object> old;  // the other revisions
  std::optional<std::chrono::milliseconds> requeue;

  std::string name() const;
  std::string ns() const;
  int64_t templateGeneration() const;
  void requeueAfter(std::chrono::milliseconds d) {
    if (!requeue || d < *requeue) requeue = d;
  }
};

// A daemon pod is up to date when it carries the current revision's hash or the
// current template generation.
bool podUpdated(const json::Value& pod, const std::string& hash, int64_t generation);
// Scheduled pods first, then older first (then by name).
void sortByCreation(std::vector<client::Object>& pods);

}  // namespace shepherd::controllers::daemon
