// PodSpec rules shared by Pod and every kind that embeds a pod template (PodTemplate,
// ReplicationController, ReplicaSet, Deployment): upstream's defaults and validation.
#pragma once

#include <string>

#include "apis/resource.h"

namespace shepherd::apis::kinds {

void defaultPodSpec(json::Value& spec, json::Allocator& a);
// What admission adds to a Pod's (not a template's) spec: priority and service account.
void admitPodSpec(json::Value& spec, json::Allocator& a);
// DefaultTolerationSeconds admission: the seconds a pod stays bound to a not-ready or
// unreachable node (NoExecute) when it does not say; set once at start-up (apiserver
// flags), read on every pod write.
void setDefaultTolerationSeconds(int64_t not_ready, int64_t unreachable);
void validatePodSpec(const json::Value& spec, const std::string& path, FieldErrors& errs);
void validateObjectLabels(const json::Value& meta, const std::string& path, FieldErrors& errs);

// "Guaranteed", "Burstable" or "BestEffort" from the containers' requests and limits.
std::string qosClass(const json::Value& spec);

// Comma-joined container names and images of a pod spec (for table columns).
std::string containerNames(const json::Value& spec);
std::string containerImages(const json::Value& spec);
// "app=web,tier=db" from a label map or a LabelSelector's matchLabels/matchExpressions.
std::string formatLabels(const json::Value* labels);
std::string formatLabelSelector(const json::Value* selector);
// Table pieces shared by the workload kinds: the wide Containers/Images/Selector columns
// of a pod template, and the whole Desired/Current/Ready table of ReplicaSets and
// ReplicationControllers (they differ only in how the selector prints).
std::vector<TableColumn> templateWideColumns();
void templateWideCells(const json::Value& obj, const std::string& selector, json::Value& cells,
                       json::Allocator& a);
std::vector<TableColumn> replicaTableColumns();
void replicaTableRow(const json::Value& obj, const std::string& selector, json::Value& cells,
                     json::Allocator& a);

// Validates a metav1.LabelSelector and that it selects `template_labels`.
void validateSelectorMatchesTemplate(const json::Value* selector, const json::Value* template_labels,
                                     const std::string& path, FieldErrors& errs, bool map_selector);

}  // namespace shepherd::apis::kinds
