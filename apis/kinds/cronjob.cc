// CronJob (batch/v1): a cron schedule (upstream's parser, so its messages), an IANA
// timeZone from the system tz database, concurrencyPolicy Allow/Forbid/Replace, history
// limits 3 and 1 by default, and a job template whose selector is always generated.
#include <cctype>

#include "apis/kinds/job_checks.h"
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"
#include "common/cron_schedule.h"
#include "common/time_zone.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

const json::Value& objectOr(const json::Value* v) {
  static const json::Value empty(rapidjson::kObjectType);
  return v && v->IsObject() ? *v : empty;
}

std::string quoted(std::string_view s) {
  return meta::validation::quote(s);
}

void validateSchedule(const json::Value& spec, bool allow_tz, FieldErrors& errs) {
  std::string_view schedule = json::getString(spec, "schedule");
  if (schedule.empty()) {
    errs.required("spec.schedule");
    return;
  }
  if (auto s = CronSchedule::parse(schedule); !s)
    errs.invalid("spec.schedule", quoted(schedule), s.error().message);
  bool tz = schedule.find("TZ") != std::string_view::npos;
  if (allow_tz && tz && json::find(spec, "timeZone"))
    errs.invalid("spec.schedule", quoted(schedule),
                 "cannot use both timeZone field and TZ or CRON_TZ in schedule");
  else if (!allow_tz && tz)
    errs.invalid("spec.schedule", quoted(schedule),
                 "cannot use TZ or CRON_TZ in schedule, use timeZone field instead");
}

void validateTimeZone(const json::Value& spec, FieldErrors& errs) {
  const json::Value* tz = json::find(spec, "timeZone");
  if (!tz || tz->IsNull() || !tz->IsString()) return;
  std::string_view name = json::view(*tz);
  const std::string field = "spec.timeZone";
  if (name.empty()) {
    errs.invalid(field, quoted(name), "timeZone must be nil or non-empty string");
    return;
  }
  // IANA's naming rules (digits and '+' tolerated for legacy names).
  size_t start = 0;
  while (true) {
    size_t slash = name.find('/', start);
    std::string_view part =
        name.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    bool ok = !part.empty() && part.size() <= 14 && part != "." && part != ".." && part[0] != '-';
    for (char c : part)
      ok =
          ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == '+');
    if (!ok) {
      errs.invalid(field, quoted(name), "unknown time zone " + std::string(name));
      return;
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "local")
    errs.invalid(field, quoted(name),
                 "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones");
  if (auto z = TimeZone::load(name); !z) errs.invalid(field, quoted(name), z.error().message);
}

void validateCronJobSpec(const json::Value& obj, const json::Value* old, FieldErrors& errs) {
  const json::Value& spec = objectOr(json::find(obj, "spec"));
  const json::Value* oldSpec = old ? json::find(*old, "spec") : nullptr;
  bool allowTz = oldSpec && json::getString(*oldSpec, "schedule").find("TZ") != std::string_view::npos;
  validateSchedule(spec, allowTz, errs);
  if (auto d = json::getInt(spec, "startingDeadlineSeconds"); d && *d < 0)
    errs.invalid("spec.startingDeadlineSeconds", std::to_string(*d), "must be greater than or equal to 0");
  const json::Value* tz = json::find(spec, "timeZone");
  const json::Value* oldTz = oldSpec ? json::find(*oldSpec, "timeZone") : nullptr;
  bool tzChanged = !oldSpec || (tz == nullptr) != (oldTz == nullptr) || (tz && *tz != *oldTz);
  if (tzChanged) validateTimeZone(spec, errs);
  std::string_view policy = json::getString(spec, "concurrencyPolicy");
  if (policy.empty())
    errs.required("spec.concurrencyPolicy");
  else if (policy != "Allow" && policy != "Forbid" && policy != "Replace")
    errs.notSupported("spec.concurrencyPolicy", std::string(policy), {"Allow", "Forbid", "Replace"});
  const json::Value& jobSpec = objectOr(json::findPath(spec, {"jobTemplate", "spec"}));
  validateJobSpecFields(jobSpec, "spec.jobTemplate.spec", errs);
  if (const json::Value* sel = json::find(jobSpec, "selector"); sel && !sel->IsNull())
    errs.invalid("spec.jobTemplate.spec.selector", labelSelectorRepr(sel),
                 "`selector` will be auto-generated");
  if (json::getBool(jobSpec, "manualSelector"))
    errs.notSupported("spec.jobTemplate.spec.manualSelector", "true", {"nil", "false"});
  for (const char* f : {"successfulJobsHistoryLimit", "failedJobsHistoryLimit"})
    if (auto v = json::getInt(spec, f); v && *v < 0)
      errs.invalid(std::string("spec.") + f, std::to_string(*v), "must be greater than or equal to 0");
}

class CronJobStrategy final : public Strategy {
 public:
  void prepareForCreate(json::Document& obj, const StrategyContext&) const override {
    json::set(obj, "status", json::Value(rapidjson::kObjectType), obj.GetAllocator());
  }
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    json::Value& spec = json::ensureObject(obj, "spec", a);
    if (json::getString(spec, "concurrencyPolicy").empty())
      json::setString(spec, "concurrencyPolicy", "Allow", a);
    if (!json::find(spec, "suspend")) json::set(spec, "suspend", json::Value(false), a);
    if (!json::find(spec, "successfulJobsHistoryLimit"))
      json::set(spec, "successfulJobsHistoryLimit", json::Value(3), a);
    if (!json::find(spec, "failedJobsHistoryLimit"))
      json::set(spec, "failedJobsHistoryLimit", json::Value(1), a);
    if (json::Value* ps = json::findPath(spec, {"jobTemplate", "spec", "template", "spec"}))
      defaultPodSpec(*ps, a);
  }
  void validate(const json::Value& obj, FieldErrors& errs) const override {
    validateCronJobSpec(obj, nullptr, errs);
    // The controller appends an 11-character suffix to name its Jobs (63 at most).
    std::string_view name = json::getStringPath(obj, {"metadata", "name"});
    if (name.size() > 52) errs.invalid("metadata.name", quoted(name), "must be no more than 52 characters");
  }
  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validateCronJobSpec(obj, &old, errs);
  }

  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Schedule", "string", "", "The schedule in Cron format.", 0},
            {"Timezone", "string", "", "The time zone name for the given schedule.", 0},
            {"Suspend", "boolean", "", "Whether the controller suspends subsequent executions.", 0},
            {"Active", "integer", "", "The number of currently running jobs.", 0},
            {"Last Schedule", "string", "", "When the job was last successfully scheduled.", 0},
            {"Age", "string", "", "Time since the cronjob was created.", 0},
            {"Containers", "string", "", "Names of each container in the template.", 1},
            {"Images", "string", "", "Images referenced by each container in the template.", 1},
            {"Selector", "string", "", "A label query over pods that should match the pod count.", 1}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    const json::Value& spec = objectOr(json::find(obj, "spec"));
    const json::Value& status = objectOr(json::find(obj, "status"));
    std::string_view last = json::getString(status, "lastScheduleTime");
    const json::Value* tz = json::find(spec, "timeZone");
    const json::Value* suspend = json::find(spec, "suspend");
    const json::Value* active = json::find(status, "active");
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(json::getString(spec, "schedule"), a), a);
    cells.PushBack(json::str(tz && tz->IsString() ? json::view(*tz) : "<none>", a), a);
    cells.PushBack(
        json::str(suspend && suspend->IsBool() ? (suspend->GetBool() ? "True" : "False") : "<unset>", a), a);
    cells.PushBack(json::Value(static_cast<int64_t>(active && active->IsArray() ? active->Size() : 0)), a);
    cells.PushBack(json::str(last.empty() ? "<none>" : humanAgeSince(last), a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
    const json::Value* ps = json::findPath(spec, {"jobTemplate", "spec", "template", "spec"});
    cells.PushBack(json::str(ps ? containerNames(*ps) : "", a), a);
    cells.PushBack(json::str(ps ? containerImages(*ps) : "", a), a);
    cells.PushBack(
        json::str(formatLabelSelector(json::findPath(spec, {"jobTemplate", "spec", "selector"})), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> cronJobStrategy() {
  return std::make_shared<CronJobStrategy>();
}

}  // namespace shepherd::apis::kinds
