// Job (batch/v1): a selector generated from the Job's uid unless manualSelector, the
// template labelled with it, upstream's defaults; completions, selector, template and
// the policies immutable (a suspended Job that never started may change its scheduling
// directives); status writes keep the terminal conditions and counters consistent.
#include <optional>
#include <set>

#include "apis/kinds/job_checks.h"
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"
#include "common/clock.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

constexpr const char* kControllerUid = "batch.kubernetes.io/controller-uid";
constexpr const char* kJobName = "batch.kubernetes.io/job-name";
constexpr const char* kLegacyControllerUid = "controller-uid";
constexpr const char* kLegacyJobName = "job-name";

const json::Value& objectOr(const json::Value* v) {
  static const json::Value empty(rapidjson::kObjectType);
  return v && v->IsObject() ? *v : empty;
}

bool conditionTrue(const json::Value& job, std::string_view type) {
  const json::Value* conds = json::findPath(job, {"status", "conditions"});
  if (!conds || !conds->IsArray()) return false;
  for (auto& c : conds->GetArray())
    if (json::getString(c, "type") == type && json::getString(c, "status") == "True") return true;
  return false;
}

bool finished(const json::Value& job) {
  return conditionTrue(job, "Complete") || conditionTrue(job, "Failed");
}

// Template labels that pin the pods to this Job, added where the user set none.
void generateSelector(json::Document& obj) {
  auto& a = obj.GetAllocator();
  std::string name(json::getStringPath(obj, {"metadata", "name"}));
  std::string uid(json::getStringPath(obj, {"metadata", "uid"}));
  json::Value& spec = json::ensureObject(obj, "spec", a);
  json::Value& tmeta = json::ensureObject(json::ensureObject(spec, "template", a), "metadata", a);
  json::Value& labels = json::ensureObject(tmeta, "labels", a);
  for (const char* k : {kLegacyJobName, kJobName})
    if (!json::find(labels, k)) json::setString(labels, k, name, a);
  for (const char* k : {kLegacyControllerUid, kControllerUid})
    if (!json::find(labels, k)) json::setString(labels, k, uid, a);
  json::Value* sel = json::find(spec, "selector");
  if (!sel || !sel->IsObject()) {
    json::set(spec, "selector", json::Value(rapidjson::kObjectType), a);
    sel = json::find(spec, "selector");
  }
  json::Value& ml = json::ensureObject(*sel, "matchLabels", a);
  if (!json::find(ml, kControllerUid)) json::setString(ml, kControllerUid, uid, a);
}

// ValidateHasLabel.
void validateHasLabel(const json::Value* labels, const char* key, std::string_view want, FieldErrors& errs) {
  std::string field = std::string("spec.template.metadata.labels[") + key + "]";
  const json::Value* v = labels && labels->IsObject() ? json::find(*labels, key) : nullptr;
  if (!v)
    errs.required(field, std::string(want));
  else if (!v->IsString() || json::view(*v) != want)
    errs.invalid(field, labelMapRepr(labels), "must be '" + std::string(want) + "'");
}

void validateGeneratedSelector(const json::Value& job, bool prefixed_labels, FieldErrors& errs) {
  const json::Value& spec = objectOr(json::find(job, "spec"));
  if (json::getBool(spec, "manualSelector")) return;
  const json::Value* selector = json::find(spec, "selector");
  if (!selector || !selector->IsObject()) return;
  std::string_view uid = json::getStringPath(job, {"metadata", "uid"});
  std::string_view name = json::getStringPath(job, {"metadata", "name"});
  if (uid.empty()) errs.required("metadata.uid");
  const json::Value* labels = json::findPath(spec, {"template", "metadata", "labels"});
  validateHasLabel(labels, kLegacyControllerUid, uid, errs);
  validateHasLabel(labels, kLegacyJobName, name, errs);
  json::Document expected;
  expected.SetObject();
  auto& a = expected.GetAllocator();
  if (prefixed_labels) {
    validateHasLabel(labels, kControllerUid, uid, errs);
    validateHasLabel(labels, kJobName, name, errs);
    json::setString(expected, kControllerUid, std::string(uid), a);
    json::setString(expected, kJobName, std::string(name), a);
  }
  json::setString(expected, kLegacyControllerUid, std::string(uid), a);
  json::setString(expected, kLegacyJobName, std::string(name), a);
  if (selectorConverts(*selector) && !selectorMatches(*selector, &expected))
    errs.invalid("spec.selector", labelSelectorRepr(selector), "`selector` not auto-generated");
}

void validateJob(const json::Value& job, bool prefixed_labels, FieldErrors& errs) {
  validateGeneratedSelector(job, prefixed_labels, errs);
  const json::Value& spec = objectOr(json::find(job, "spec"));
  validateJobSpecFields(spec, "spec", errs);
  const json::Value* selector = json::find(spec, "selector");
  if (!selector || !selector->IsObject()) {
    errs.required("spec.selector");
  } else {
    validateLabelSelector(*selector, "spec.selector", errs);
    const json::Value* labels = json::findPath(spec, {"template", "metadata", "labels"});
    if (selectorConverts(*selector) && !selectorMatches(*selector, labels))
      errs.invalid("spec.template.metadata.labels", labelMapRepr(labels),
                   "`selector` does not match template `labels`");
  }
  auto completions = json::getInt(spec, "completions");
  if (json::getString(spec, "completionMode") == "Indexed" && completions && *completions > 0) {
    std::string name(json::getStringPath(job, {"metadata", "name"}));
    std::string host = name + "-" + std::to_string(*completions - 1);
    if (!meta::validation::dns1123Label(host).empty())
      errs.invalid("metadata.name", meta::validation::quote(name),
                   "will not able to create pod with invalid DNS label: " + host);
  }
}

void immutable(const json::Value& now, const json::Value& old, const char* key, const std::string& field,
               FieldErrors& errs) {
  const json::Value* a = json::find(now, key);
  const json::Value* b = json::find(old, key);
  if (a && a->IsNull()) a = nullptr;
  if (b && b->IsNull()) b = nullptr;
  bool same = (!a && !b) || (a && b && *a == *b);
  if (same) return;
  std::string repr = !a ? "null" : a->IsString() ? meta::validation::quote(json::view(*a)) : jsonRepr(*a);
  errs.invalid(field, repr, "field is immutable");
}

// A suspended Job that never started may change where its pods go (node affinity,
// node selector, tolerations, scheduling gates) and the template's labels and annotations.
void validateTemplateUpdate(const json::Value& spec, const json::Value& old_spec, bool mutable_scheduling,
                            FieldErrors& errs) {
  const json::Value& t = objectOr(json::find(spec, "template"));
  json::Document before;
  before.CopyFrom(objectOr(json::find(old_spec, "template")), before.GetAllocator());
  if (mutable_scheduling) {
    auto& a = before.GetAllocator();
    json::Value& bmeta = json::ensureObject(before, "metadata", a);
    json::Value& bspec = json::ensureObject(before, "spec", a);
    const json::Value& tmeta = objectOr(json::find(t, "metadata"));
    const json::Value& tspec = objectOr(json::find(t, "spec"));
    for (const char* k : {"labels", "annotations"}) {
      json::remove(bmeta, k);
      if (const json::Value* v = json::find(tmeta, k)) json::set(bmeta, k, json::Value(*v, a), a);
    }
    for (const char* k : {"nodeSelector", "tolerations", "schedulingGates"}) {
      json::remove(bspec, k);
      if (const json::Value* v = json::find(tspec, k)) json::set(bspec, k, json::Value(*v, a), a);
    }
    const json::Value* na = json::findPath(tspec, {"affinity", "nodeAffinity"});
    json::Value* baff = json::find(bspec, "affinity");
    if (baff && baff->IsObject()) {
      json::remove(*baff, "nodeAffinity");
      if (na) json::set(*baff, "nodeAffinity", json::Value(*na, a), a);
      if (baff->MemberCount() == 0 && !json::find(tspec, "affinity")) json::remove(bspec, "affinity");
    } else if (na) {
      json::Value aff(rapidjson::kObjectType);
      json::set(aff, "nodeAffinity", json::Value(*na, a), a);
      json::set(bspec, "affinity", std::move(aff), a);
    }
    if (bmeta.MemberCount() == 0 && !json::find(t, "metadata")) json::remove(before, "metadata");
  }
  if (t != before) errs.invalid("spec.template", jsonRepr(t), "field is immutable");
}

void validateCompletionsUpdate(const json::Value& spec, const json::Value& old_spec, FieldErrors& errs) {
  const json::Value* a = json::find(spec, "completions");
  const json::Value* b = json::find(old_spec, "completions");
  if ((!a && !b) || (a && b && *a == *b)) return;
  // Indexed Jobs may change completions together with parallelism (elastic Indexed Jobs).
  if (json::getString(spec, "completionMode") != "Indexed") {
    immutable(spec, old_spec, "completions", "spec.completions", errs);
    return;
  }
  if (!a || a->IsNull()) return;  // already "Required" from the spec checks
  if (json::getInt(spec, "completions") != json::getInt(spec, "parallelism"))
    errs.invalid("spec.completions", jsonRepr(*a), "can only be modified in tandem with spec.parallelism");
}

std::optional<clock::TimePoint> timeOf(const json::Value& st, const char* key) {
  std::string_view s = json::getString(st, key);
  return s.empty() ? std::nullopt : clock::parseRfc3339(s);
}

size_t uncountedCount(const json::Value& st) {
  size_t n = 0;
  for (const char* k : {"succeeded", "failed"})
    if (const json::Value* v = json::findPath(st, {"uncountedTerminatedPods", k}); v && v->IsArray())
      n += v->Size();
  return n;
}

// ValidateJobStatusUpdate with the checks upstream runs when a Job may be managed by
// another controller (JobManagedBy): each rule only when the fields it reads changed.
void validateStatusUpdate(const json::Value& job, const json::Value& old, FieldErrors& errs) {
  const json::Value& st = objectOr(json::find(job, "status"));
  const json::Value& ost = objectOr(json::find(old, "status"));
  const json::Value& spec = objectOr(json::find(job, "spec"));
  for (const char* k : {"active", "succeeded", "failed", "ready", "terminating"})
    if (auto v = json::getInt(st, k); v && *v < 0)
      errs.invalid("status." + std::string(k), std::to_string(*v), "must be greater than or equal to 0");
  std::set<std::string> seen;
  for (const char* k : {"succeeded", "failed"})
    if (const json::Value* v = json::findPath(st, {"uncountedTerminatedPods", k}); v && v->IsArray())
      for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
        std::string at = "status.uncountedTerminatedPods." + std::string(k) + "[" + std::to_string(i) + "]";
        std::string uid((*v)[i].IsString() ? json::view((*v)[i]) : "");
        if (uid.empty())
          errs.invalid(at, "\"\"", "must not be empty");
        else if (!seen.insert(uid).second)
          errs.duplicate(at, meta::validation::quote(uid));
      }
  auto changed = [&](const char* k) {
    const json::Value* a = json::find(st, k);
    const json::Value* b = json::find(ost, k);
    return (a == nullptr) != (b == nullptr) || (a && *a != *b);
  };
  bool indexed = json::getString(spec, "completionMode") == "Indexed";
  bool finishedChanged = finished(job) != finished(old);
  bool completeChanged = conditionTrue(job, "Complete") != conditionTrue(old, "Complete");
  bool failedChanged = conditionTrue(job, "Failed") != conditionTrue(old, "Failed");
  bool failureTargetChanged = conditionTrue(job, "FailureTarget") != conditionTrue(old, "FailureTarget");
  bool completedIdxChanged = changed("completedIndexes"), failedIdxChanged = changed("failedIndexes");
  bool startChanged = changed("startTime"), completionChanged = changed("completionTime");
  bool complete = conditionTrue(job, "Complete"), failedNow = conditionTrue(job, "Failed");
  bool isFinished = finished(job);
  auto completions = json::getInt(spec, "completions");
  std::string_view completedIdx = json::getString(st, "completedIndexes");
  const json::Value* failedIdx = json::find(st, "failedIndexes");
  if ((completeChanged || failedChanged) && complete && failedNow)
    errs.invalidOmitValue("status.conditions", "cannot set Complete=True and Failed=true conditions");
  if ((completeChanged || failureTargetChanged) && complete && conditionTrue(job, "FailureTarget"))
    errs.invalidOmitValue("status.conditions", "cannot set Complete=True and FailureTarget=true conditions");
  if ((completeChanged || completionChanged) && json::find(st, "completionTime") && !complete)
    errs.invalid("status.completionTime", meta::validation::quote(json::getString(st, "completionTime")),
                 "cannot set completionTime when there is no Complete=True condition");
  if ((completeChanged || completionChanged) && !json::find(st, "completionTime") && complete)
    errs.required("status.completionTime", "completionTime is required for Complete jobs");
  if (startChanged || completionChanged) {
    auto s = timeOf(st, "startTime"), c = timeOf(st, "completionTime");
    if (s && c && *c < *s)
      errs.invalid("status.completionTime", meta::validation::quote(json::getString(st, "completionTime")),
                   "completionTime cannot be set before startTime");
  }
  if (isFinished && (finishedChanged || changed("active")) && json::getInt(st, "active").value_or(0) > 0)
    errs.invalid("status.active", std::to_string(*json::getInt(st, "active")),
                 "active>0 is invalid for finished job");
  if (isFinished && (finishedChanged || startChanged) && !json::find(st, "startTime"))
    errs.required("status.startTime", "startTime is required for finished job");
  if (isFinished && (finishedChanged || changed("uncountedTerminatedPods")) && uncountedCount(st) > 0)
    errs.invalid("status.uncountedTerminatedPods", jsonRepr(*json::find(st, "uncountedTerminatedPods")),
                 "uncountedTerminatedPods needs to be empty for finished job");
  if (completedIdxChanged && completions) {
    IndexesFormat f = parseIndexesFormat(completedIdx, *completions);
    if (!f.error.empty())
      errs.invalid("status.completedIndexes", meta::validation::quote(completedIdx),
                   "error parsing completedIndexes: " + f.error);
  }
  if (failedIdxChanged && completions && json::find(spec, "backoffLimitPerIndex") && failedIdx &&
      failedIdx->IsString()) {
    IndexesFormat f = parseIndexesFormat(json::view(*failedIdx), *completions);
    if (!f.error.empty())
      errs.invalid("status.failedIndexes", meta::validation::quote(json::view(*failedIdx)),
                   "error parsing failedIndexes: " + f.error);
  }
  if (completedIdxChanged && !completedIdx.empty() && !indexed)
    errs.invalid("status.completedIndexes", meta::validation::quote(completedIdx),
                 "cannot set non-empty completedIndexes when non-indexed completion mode");
  if (failedIdxChanged && !json::find(spec, "backoffLimitPerIndex") && failedIdx && failedIdx->IsString())
    errs.invalid("status.failedIndexes", meta::validation::quote(json::view(*failedIdx)),
                 "cannot set non-null failedIndexes when backoffLimitPerIndex is null");
  bool scm = conditionTrue(job, "SuccessCriteriaMet");
  if (scm && failedNow)
    errs.invalidOmitValue("status.conditions",
                          "cannot set SuccessCriteriaMet=True and Failed=true conditions");
  if (scm && conditionTrue(job, "FailureTarget"))
    errs.invalidOmitValue("status.conditions",
                          "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions");
  if (json::find(spec, "successPolicy") && !scm && complete)
    errs.invalidOmitValue(
        "status.conditions",
        "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True");
  // Transitions.
  for (const char* c : {"Failed", "Complete", "FailureTarget"})
    if (conditionTrue(old, c) && !conditionTrue(job, c))
      errs.invalidOmitValue("status.conditions",
                            std::string("cannot disable the terminal ") + c + "=True condition");
  if (json::getInt(st, "failed").value_or(0) < json::getInt(ost, "failed").value_or(0))
    errs.invalid("status.failed", std::to_string(json::getInt(st, "failed").value_or(0)),
                 "cannot decrease the failed counter");
  bool elastic = indexed && json::getInt(spec, "completions") == json::getInt(spec, "parallelism");
  if (!elastic && json::getInt(st, "succeeded").value_or(0) < json::getInt(ost, "succeeded").value_or(0))
    errs.invalid("status.succeeded", std::to_string(json::getInt(st, "succeeded").value_or(0)),
                 "cannot decrease the succeeded counter");
  if (json::find(st, "completionTime") && json::find(ost, "completionTime") && completionChanged)
    errs.invalid("status.completionTime", meta::validation::quote(json::getString(st, "completionTime")),
                 "completionTime cannot be mutated");
  if (startChanged && json::find(ost, "startTime") && !json::getBool(spec, "suspend"))
    errs.required("status.startTime", "startTime cannot be removed for unsuspended job");
  if (conditionTrue(old, "SuccessCriteriaMet") && !scm)
    errs.invalidOmitValue("status.conditions", "cannot disable the SuccessCriteriaMet=True condition");
  if (conditionTrue(old, "Complete") && !conditionTrue(old, "SuccessCriteriaMet") && scm)
    errs.invalidOmitValue("status.conditions",
                          "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions");
}

std::string jobStatusCell(const json::Value& job) {
  if (conditionTrue(job, "Complete")) return "Complete";
  if (conditionTrue(job, "Failed")) return "Failed";
  if (json::findPath(job, {"metadata", "deletionTimestamp"})) return "Terminating";
  if (conditionTrue(job, "Suspended")) return "Suspended";
  if (conditionTrue(job, "FailureTarget")) return "FailureTarget";
  return "Running";
}

std::string durationCell(const json::Value& status) {
  auto start = timeOf(status, "startTime");
  if (!start) return "";
  auto end = timeOf(status, "completionTime").value_or(clock::now());
  return clock::humanDuration(std::chrono::duration_cast<std::chrono::seconds>(end - *start));
}

class JobStrategy final : public Strategy {
 public:
  void prepareForCreate(json::Document& obj, const StrategyContext&) const override {
    auto& a = obj.GetAllocator();
    json::set(obj, "status", json::Value(rapidjson::kObjectType), a);
    if (!json::getBool(objectOr(json::find(obj, "spec")), "manualSelector")) generateSelector(obj);
  }
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    json::Value& spec = json::ensureObject(obj, "spec", a);
    defaultJobSpec(spec, a);
    // A Job without labels of its own takes its template's (SetDefaults_Job).
    const json::Value* tl = json::findPath(spec, {"template", "metadata", "labels"});
    json::Value& meta = json::ensureObject(obj, "metadata", a);
    const json::Value* labels = json::find(meta, "labels");
    if (tl && tl->IsObject() && (!labels || !labels->IsObject() || labels->MemberCount() == 0))
      json::set(meta, "labels", json::Value(*tl, a), a);
  }
  void validate(const json::Value& obj, FieldErrors& errs) const override { validateJob(obj, true, errs); }
  // batch/v1 keeps its pods on a DELETE without a policy, for backward compatibility.
  bool orphansDependentsByDefault() const override { return true; }

  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    const json::Value* oldLabels = json::findPath(old, {"spec", "template", "metadata", "labels"});
    bool prefixed = oldLabels && oldLabels->IsObject() && json::find(*oldLabels, kJobName) &&
                    json::find(*oldLabels, kControllerUid);
    validateJob(obj, prefixed, errs);
    const json::Value& spec = objectOr(json::find(obj, "spec"));
    const json::Value& ospec = objectOr(json::find(old, "spec"));
    validateCompletionsUpdate(spec, ospec, errs);
    immutable(spec, ospec, "selector", "spec.selector", errs);
    bool mutableScheduling = json::getBool(ospec, "suspend") && !json::findPath(old, {"status", "startTime"});
    validateTemplateUpdate(spec, ospec, mutableScheduling, errs);
    immutable(spec, ospec, "completionMode", "spec.completionMode", errs);
    immutable(spec, ospec, "podFailurePolicy", "spec.podFailurePolicy", errs);
    immutable(spec, ospec, "backoffLimitPerIndex", "spec.backoffLimitPerIndex", errs);
    immutable(spec, ospec, "managedBy", "spec.managedBy", errs);
    immutable(spec, ospec, "successPolicy", "spec.successPolicy", errs);
    // Only /status changes status (the store keeps the stored one otherwise).
    const json::Value* st = json::find(obj, "status");
    const json::Value* ost = json::find(old, "status");
    if ((st == nullptr) != (ost == nullptr) || (st && *st != *ost)) validateStatusUpdate(obj, old, errs);
  }

  std::vector<std::string> selectableFieldNames() const override { return {"status.successful"}; }
  void selectableFields(const json::Value& obj, meta::StringPairs& out) const override {
    const json::Value& st = objectOr(json::find(obj, "status"));
    out.emplace_back("status.successful", std::to_string(json::getInt(st, "succeeded").value_or(0)));
  }

  std::vector<TableColumn> tableColumns() const override {
    std::vector<TableColumn> cols = {
        {"Name", "string", "name", "Name must be unique within a namespace.", 0},
        {"Status", "string", "", "Status of the job.", 0},
        {"Completions", "string", "", "The number of pods which reached phase Succeeded.", 0},
        {"Duration", "string", "", "Time required to complete the job.", 0},
        {"Age", "string", "", "Time since the job was created.", 0}};
    for (auto& c : templateWideColumns()) cols.push_back(c);
    return cols;
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    const json::Value& spec = objectOr(json::find(obj, "spec"));
    const json::Value& status = objectOr(json::find(obj, "status"));
    int64_t succeeded = json::getInt(status, "succeeded").value_or(0);
    std::string completions;
    if (auto c = json::getInt(spec, "completions")) {
      completions = std::to_string(succeeded) + "/" + std::to_string(*c);
    } else {
      int64_t p = json::getInt(spec, "parallelism").value_or(0);
      completions = std::to_string(succeeded) + "/1" + (p > 1 ? " of " + std::to_string(p) : "");
    }
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(jobStatusCell(obj), a), a);
    cells.PushBack(json::str(completions, a), a);
    cells.PushBack(json::str(durationCell(status), a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
    templateWideCells(obj, formatLabelSelector(json::find(spec, "selector")), cells, a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> jobStrategy() {
  return std::make_shared<JobStrategy>();
}

}  // namespace shepherd::apis::kinds
