// PodSpec rules shared by Pod and every kind that embeds a pod template (PodTemplate,
// ReplicationController, ReplicaSet, Deployment): upstream's defaults and validation.
#pragma once

#include <string>

#include "apis/resource.h"

namespace shepherd::apis::kinds {

void defaultPodSpec(json::Value& spec, json::Allocator& a);
// Pod defaults that a pod template does not get (SetDefaults_Pod): service links, and
// host ports equal to container ports under hostNetwork. Admission's own additions
// (tolerations, priority, service account) are plugins/admission.
void defaultPodOnly(json::Value& spec, json::Allocator& a);
void validatePodSpec(const json::Value& spec, const std::string& path, FieldErrors& errs,
                     bool is_pod = false);
// A pod template (ValidatePodTemplateSpec): its labels and annotations at
// `path`.labels/.annotations, then the spec at `path`.spec.
void validatePodTemplate(const json::Value& tmpl, const std::string& path, FieldErrors& errs);
// The annotations only pods (and templates) have rules for.
void validatePodAnnotations(const json::Value* annotations, const json::Value& spec, const std::string& path,
                            FieldErrors& errs);
// Pod update: existing tolerations may change only their tolerationSeconds; then the new
// list is validated (again, as upstream does).
void validateOnlyAddedTolerations(const json::Value* now, const json::Value* before, const std::string& path,
                                  FieldErrors& errs);
void validateObjectLabels(const json::Value& meta, const std::string& path, FieldErrors& errs);
// Label keys and values of a map (labels, node selectors, service selectors) at `path`.
void validateLabelMap(const json::Value* labels, const std::string& path, FieldErrors& errs);
// A metav1.LabelSelector's syntax (ValidateLabelSelector).
void validateLabelSelector(const json::Value& selector, const std::string& path, FieldErrors& errs);
// Annotation keys and total size (ValidateAnnotations) at `path`.
void validateAnnotations(const json::Value* annotations, const std::string& path, FieldErrors& errs);

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

// The spec of a ReplicaSet or Deployment (apps ValidateReplicaSetSpec's selector and
// template part): the LabelSelector's syntax, that it selects the template, and the
// template itself, whose restartPolicy must be Always and which may not set
// activeDeadlineSeconds (`kind` names the kind in that message).
void validateSelectorAndTemplate(const json::Value& spec, const std::string& kind, FieldErrors& errs);
// Whether `selector` converts to a labels.Selector (LabelSelectorAsSelector): operators
// known, keys and values valid, In/NotIn with values, Exists without.
bool selectorConverts(const json::Value& selector);
// Whether a (converting) LabelSelector selects `labels` (null: no labels).
bool selectorMatches(const json::Value& selector, const json::Value* labels);
// A LabelSelector as upstream prints it in messages (its String()).
std::string labelSelectorRepr(const json::Value* selector);
// Template labels as Go prints a map[string]string with %#v.
std::string labelMapRepr(const json::Value* labels);

}  // namespace shepherd::apis::kinds
