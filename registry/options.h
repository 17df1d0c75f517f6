// Request options the registry acts on, already parsed from the query and body.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "admission/admission.h"
#include "common/api_error.h"
#include "common/json.h"

namespace shepherd::registry {

struct WriteOptions {
  bool dry_run = false;
  std::string field_manager;  // who makes the change (managedFields); never empty from handlers
  bool apply = false;         // a server-side apply: managedFields come from the apply merge
  bool force = false;         // apply: take contested fields from other managers
  // The write's admission: the mutating phase before the strategy defaults and validates
  // the object, the validating phase on the final object. No chain: none.
  admission::Request admission;
};

struct DeleteOptions {
  bool dry_run = false;
  std::optional<int64_t> grace_period_seconds;
  std::string precondition_uid;
  std::string precondition_resource_version;
  std::string propagation_policy;         // Orphan, Background, Foreground, or empty
  std::optional<bool> orphan_dependents;  // the deprecated field, as sent
  admission::Request admission;           // both phases see the stored object
};

struct ListOptions {
  std::string ns;  // empty: all namespaces
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;
  std::string continue_token;
  std::string resource_version;
  std::string resource_version_match;  // NotOlderThan, Exact, or empty
};

struct WatchOptions {
  std::string ns;
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;
  bool send_initial_events = false;
};

// Binding: the scheduler's pods/binding write (sets spec.nodeName and PodScheduled).
enum class Subresource { Main, Status, Finalize, Binding };

}  // namespace shepherd::registry
