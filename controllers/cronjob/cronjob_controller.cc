#include "controllers/cronjob/cronjob_controller.h"

#include <algorithm>
#include <ctime>
#include <set>

#include "common/log.h"
#include "controllers/manager/controller_ref.h"
#include "controllers/manager/job_state.h"
#include "controllers/manager/object_meta.h"
#include "controllers/manager/pod_state.h"

namespace shepherd::controllers {

namespace {

constexpr auto kNextScheduleDelta = std::chrono::milliseconds(100);
enum class Missed { None, Few, Many };

std::string cronJobPath(const std::string& ns, const std::string& name) {
  return "/apis/batch/v1/namespaces/" + client::urlEncode(ns) + "/cronjobs/" + client::urlEncode(name);
}
std::string jobsPath(const std::string& ns) {
  return "/apis/batch/v1/namespaces/" + client::urlEncode(ns) + "/jobs";
}

const json::Value& objectOr(const json::Value* v) {
  static const json::Value empty(rapidjson::kObjectType);
  return v && v->IsObject() ? *v : empty;
}

std::optional<clock::TimePoint> timeAt(const json::Value& v, std::initializer_list<std::string_view> path) {
  std::string_view s = json::getStringPath(v, path);
  return s.empty() ? std::nullopt : clock::parseRfc3339(s);
}

std::string scheduleSpec(const json::Value& cj) {
  std::string schedule(json::getStringPath(cj, {"spec", "schedule"}));
  if (schedule.find("TZ") != std::string::npos) return schedule;
  const json::Value* tz = json::findPath(cj, {"spec", "timeZone"});
  if (tz && tz->IsString() && TimeZone::load(json::view(*tz)))
    return "TZ=" + std::string(json::view(*tz)) + " " + schedule;
  return schedule;
}

struct Recent {
  clock::TimePoint earliest;
  std::optional<clock::TimePoint> most_recent;
  Missed missed = Missed::None;
  std::string error;
};

// mostRecentScheduleTime: the latest schedule time at or before `now` after the last
// one (or the creation time); `with_deadline` ignores times before startingDeadlineSeconds.
Recent mostRecent(const json::Value& cj, clock::TimePoint now, const CronSchedule& sched,
                  bool with_deadline) {
  Recent r;
  r.earliest = timeAt(cj, {"metadata", "creationTimestamp"}).value_or(now);
  if (auto last = timeAt(cj, {"status", "lastScheduleTime"})) r.earliest = *last;
  if (auto d = json::getInt(objectOr(json::find(cj, "spec")), "startingDeadlineSeconds");
      with_deadline && d) {
    auto deadline = now - std::chrono::seconds(*d);
    if (deadline > r.earliest) r.earliest = deadline;
  }
  auto t1 = sched.next(r.earliest);
  if (!t1 || now < *t1) return r;
  auto t2 = sched.next(*t1);
  if (!t2 || now < *t2) {
    r.most_recent = t1;
    return r;
  }
  int64_t between =
      std::chrono::duration_cast<std::chrono::seconds>(*t2 - *t1 + std::chrono::milliseconds(500)).count();
  if (between < 1) {
    r.error = "time difference between two schedules is less than 1 second";
    return r;
  }
  int64_t elapsed = std::chrono::duration_cast<std::chrono::seconds>(now - *t1).count();
  int64_t missed = elapsed / between + 1;
  // Jump close to now, then let the schedule find the exact last time.
  auto from = *t1 + std::chrono::seconds((missed - 2) * between);
  for (auto t = sched.next(from); t && *t <= now; t = sched.next(*t)) r.most_recent = t;
  r.missed = missed > 100 ? Missed::Many : missed > 0 ? Missed::Few : Missed::None;
  return r;
}

// RFC 1123 with a numeric zone, in UTC ("Mon, 02 Jan 2006 15:04:05 +0000").
std::string rfc1123z(clock::TimePoint t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S +0000", &tm);
  return buf;
}

// RFC 3339 in the CronJob's zone, as Go's Format(time.RFC3339) writes it.
std::string rfc3339In(clock::TimePoint t, const TimeZone& tz) {
  int64_t unix = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  int32_t off = tz.lookup(unix).offset;
  std::time_t local = static_cast<std::time_t>(unix + off);
  std::tm tm{};
  gmtime_r(&local, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  if (off == 0) return std::string(buf) + "Z";
  char zone[16];
  int a = off < 0 ? -off : off;
  std::snprintf(zone, sizeof zone, "%c%02d:%02d", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
  return std::string(buf) + zone;
}

json::Value jobRef(const json::Value& job, json::Allocator& a) {
  json::Value ref(rapidjson::kObjectType);
  json::setString(ref, "kind", "Job", a);
  json::setString(ref, "namespace", namespaceOf(job), a);
  json::setString(ref, "name", nameOf(job), a);
  json::setString(ref, "uid", uidOf(job), a);
  json::setString(ref, "apiVersion", "batch/v1", a);
  json::setString(ref, "resourceVersion", json::getStringPath(job, {"metadata", "resourceVersion"}), a);
  return ref;
}

}  // namespace

struct CronJobController::Sync {
  std::string key;
  json::Document cj;
  std::vector<client::Object> jobs;
  clock::TimePoint now;
  bool update_status = false;
  std::optional<std::chrono::milliseconds> requeue;

  json::Value& status() { return json::ensureObject(cj, "status", cj.GetAllocator()); }
  bool inActive(const std::string& uid) {
    const json::Value* active = json::find(status(), "active");
    if (!active || !active->IsArray()) return false;
    for (auto& r : active->GetArray())
      if (json::getString(r, "uid") == uid) return true;
    return false;
  }
  bool inActiveByName(const std::string& name) {
    const json::Value* active = json::find(status(), "active");
    if (!active || !active->IsArray()) return false;
    for (auto& r : active->GetArray())
      if (json::getString(r, "name") == name) return true;
    return false;
  }
  void removeActive(const std::string& uid) {
    json::Value* active = json::find(status(), "active");
    if (!active || !active->IsArray()) return;
    json::Value kept(rapidjson::kArrayType);
    for (auto& r : active->GetArray())
      if (json::getString(r, "uid") != uid)
        kept.PushBack(json::Value(r, cj.GetAllocator()), cj.GetAllocator());
    if (kept.Empty())
      json::remove(status(), "active");
    else
      *active = std::move(kept);
  }
};

CronJobController::CronJobController(client::Client& c, client::SharedInformers& informers,
                                     client::EventRecorder& events, const clock::Clock& clk)
    : Controller("cronjob"),
      client_(c),
      cronjobs_(informers.get(client::allObjects("batch", "v1", "cronjobs"))),
      jobs_(informers.get(client::allObjects("batch", "v1", "jobs"))),
      events_(events),
      clock_(clk) {
  indexByNamespace(jobs_);
  client::EventHandlers ch = enqueueKeys();
  ch.on_update = [this](const client::Object& old, const client::Object& o) { onCronJobUpdate(old, o); };
  cronjobs_.addHandlers(std::move(ch));
  client::EventHandlers jh;
  jh.on_add = [this](const client::Object& o) { onJobChange(o); };
  jh.on_update = [this](const client::Object& old, const client::Object& o) {
    if (json::getStringPath(*old, {"metadata", "resourceVersion"}) ==
        json::getStringPath(*o, {"metadata", "resourceVersion"}))
      return;
    const json::Value* a = controllerRef(*old);
    const json::Value* b = controllerRef(*o);
    if (a && (!b || *a != *b)) onJobChange(old);
    onJobChange(o);
  };
  jh.on_delete = [this](const client::Object& o) { onJobChange(o); };
  jobs_.addHandlers(std::move(jh));
}

client::Object CronJobController::resolveControllerRef(const json::Value& job) const {
  const json::Value* ref = controllerRef(job);
  if (!ref || json::getString(*ref, "kind") != "CronJob") return nullptr;
  client::Object cj = cronjobs_.get(namespaceOf(job) + "/" + std::string(json::getString(*ref, "name")));
  if (!cj || uidOf(*cj) != json::getString(*ref, "uid")) return nullptr;
  return cj;
}

void CronJobController::onJobChange(const client::Object& job) {
  if (client::Object cj = resolveControllerRef(*job)) queue_.add(client::objectKey(*cj));
}

void CronJobController::onCronJobUpdate(const client::Object& old_cj, const client::Object& cj) {
  std::string key = client::objectKey(*cj);
  const json::Value* a = json::findPath(*old_cj, {"spec", "timeZone"});
  const json::Value* b = json::findPath(*cj, {"spec", "timeZone"});
  bool tzChanged = (a == nullptr) != (b == nullptr) || (a && *a != *b);
  if (json::getStringPath(*old_cj, {"spec", "schedule"}) == json::getStringPath(*cj, {"spec", "schedule"}) &&
      !tzChanged) {
    queue_.add(key);
    return;
  }
  // A new schedule: look at the next time it gives.
  auto sched = CronSchedule::parse(scheduleSpec(*cj));
  if (!sched) {
    events_.event(
        *cj, "batch/v1", "CronJob", "Warning", "UnParseableCronJobSchedule",
        "unparseable schedule for cronjob: " + std::string(json::getStringPath(*cj, {"spec", "schedule"})));
    return;
  }
  queue_.addAfter(key, nextScheduleDelay(*cj, *sched));
}

std::chrono::milliseconds CronJobController::nextScheduleDelay(const json::Value& cj,
                                                               const CronSchedule& sched) const {
  auto now = clock_.now();
  Recent r = mostRecent(cj, now, sched, false);
  clock::TimePoint from = r.earliest;
  if (!r.error.empty())
    from = now;
  else if (r.most_recent)
    from = *r.most_recent;
  else if (r.missed != Missed::None)
    from = now;
  auto next = sched.next(from);
  if (!next) return std::chrono::hours(24 * 365);
  return std::chrono::duration_cast<std::chrono::milliseconds>(*next + kNextScheduleDelta - now);
}

bool CronJobController::deleteJob(Sync& s, const json::Value& job) {
  auto r = client_.del(jobsPath(namespaceOf(job)) + "/" + client::urlEncode(nameOf(job)),
                       R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})");
  if (!r && r.error().code != 404) {
    events_.event(s.cj, "batch/v1", "CronJob", "Warning", "FailedDelete",
                  "Deleted job: " + r.error().message);
    return false;
  }
  s.removeActive(uidOf(job));
  events_.event(s.cj, "batch/v1", "CronJob", "Normal", "SuccessfulDelete", "Deleted job " + nameOf(job));
  return true;
}

bool CronJobController::cleanupFinishedJobs(Sync& s) {
  const json::Value& spec = objectOr(json::find(s.cj, "spec"));
  auto keepOk = json::getInt(spec, "successfulJobsHistoryLimit");
  auto keepFailed = json::getInt(spec, "failedJobsHistoryLimit");
  if (!keepOk && !keepFailed) return false;
  std::vector<client::Object> ok, failed;
  for (auto& j : s.jobs) {
    std::string t = jobFinishedType(*j);
    if (t == "Complete") ok.push_back(j);
    if (t == "Failed") failed.push_back(j);
  }
  bool changed = false;
  auto removeOldest = [&](std::vector<client::Object>& list, std::optional<int64_t> keep) {
    if (!keep || static_cast<int64_t>(list.size()) <= *keep) return;
    // Oldest start first (never started last), then by name.
    std::sort(list.begin(), list.end(), [](const client::Object& a, const client::Object& b) {
      auto sa = timeAt(*a, {"status", "startTime"}), sb = timeAt(*b, {"status", "startTime"});
      if (sa && !sb) return true;
      if (!sa && sb) return false;
      if (sa && sb && *sa != *sb) return *sa < *sb;
      return nameOf(*a) < nameOf(*b);
    });
    for (int64_t i = 0; i < static_cast<int64_t>(list.size()) - *keep; ++i)
      if (deleteJob(s, *list[static_cast<size_t>(i)])) changed = true;
  };
  removeOldest(ok, keepOk);
  removeOldest(failed, keepFailed);
  return changed;
}

Status CronJobController::syncCronJob(Sync& s) {
  const std::string cjName = nameOf(s.cj), ns = namespaceOf(s.cj);
  auto event = [&](const char* type, const char* reason, const std::string& msg) {
    events_.event(s.cj, "batch/v1", "CronJob", type, reason, msg);
  };
  std::set<std::string> children;
  for (auto& j : s.jobs) {
    std::string uid = uidOf(*j);
    children.insert(uid);
    bool found = s.inActive(uid);
    std::string finished = jobFinishedType(*j);
    if (!found && finished.empty()) {
      // Perhaps our own status write is not in the cache yet: read it live.
      auto fresh = client_.get(cronJobPath(ns, cjName));
      if (!fresh) return fresh.error();
      const json::Value* act = json::findPath(*fresh, {"status", "active"});
      bool live = false;
      if (act && act->IsArray())
        for (auto& r : act->GetArray()) live = live || json::getString(r, "uid") == uid;
      if (live) {
        s.cj.CopyFrom(*fresh, s.cj.GetAllocator());
        continue;
      }
      event("Warning", "UnexpectedJob",
            "Saw a job that the controller did not create or forgot: " + nameOf(*j));
    } else if (found && !finished.empty()) {
      s.removeActive(uid);
      event("Normal", "SawCompletedJob", "Saw completed job: " + nameOf(*j) + ", status: " + finished);
      s.update_status = true;
    } else if (finished == "Complete") {
      // A succeeded Job need not be active to count for lastSuccessfulTime.
      auto done = timeAt(*j, {"status", "completionTime"});
      auto last = timeAt(s.cj, {"status", "lastSuccessfulTime"});
      if (done && (!last || *done > *last)) {
        json::setString(s.status(), "lastSuccessfulTime",
                        json::getStringPath(*j, {"status", "completionTime"}), s.cj.GetAllocator());
        s.update_status = true;
      }
    }
  }
  // Active entries whose Job is gone (checked live: the cache may lag).
  std::vector<std::pair<std::string, std::string>> gone;
  if (const json::Value* active = json::find(s.status(), "active"); active && active->IsArray())
    for (auto& r : active->GetArray())
      if (!children.count(std::string(json::getString(r, "uid"))))
        gone.emplace_back(json::getString(r, "uid"), json::getString(r, "name"));
  for (auto& [uid, name] : gone) {
    auto live = client_.get(jobsPath(ns) + "/" + client::urlEncode(name));
    if (live) continue;
    if (live.error().code != 404) return live.error();
    event("Normal", "MissingJob", "Active job went missing: " + name);
    s.removeActive(uid);
    s.update_status = true;
  }
  if (json::findPath(s.cj, {"metadata", "deletionTimestamp"})) return okStatus();
  const json::Value& spec = objectOr(json::find(s.cj, "spec"));
  if (const json::Value* tz = json::find(spec, "timeZone"); tz && tz->IsString())
    if (auto z = TimeZone::load(json::view(*tz)); !z) {
      event("Warning", "UnknownTimeZone",
            "invalid timeZone: \"" + std::string(json::view(*tz)) + "\": " + z.error().message);
      return okStatus();
    }
  if (json::getBool(spec, "suspend")) return okStatus();
  std::string schedule(json::getString(spec, "schedule"));
  if (schedule.find("TZ") != std::string::npos)
    event("Warning", "UnsupportedSchedule",
          "CRON_TZ or TZ used in schedule \"" + schedule +
              "\" is not officially supported, see "
              "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ "
              "for more details");
  auto sched = CronSchedule::parse(scheduleSpec(s.cj));
  if (!sched) {
    event("Warning", "UnparseableSchedule",
          "unparseable schedule: \"" + schedule + "\" : " + sched.error().message);
    return okStatus();
  }
  Recent r = mostRecent(s.cj, s.now, *sched, true);
  if (!r.error.empty()) {
    event("Warning", "InvalidSchedule", "invalid schedule: " + schedule + " : " + r.error);
    return okStatus();
  }
  auto requeueNext = [&] { s.requeue = nextScheduleDelay(s.cj, *sched); };
  if (!r.most_recent || *r.most_recent > s.now) {
    requeueNext();
    return okStatus();
  }
  if (r.missed == Missed::Many)
    event("Warning", "TooManyMissedTimes",
          "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew");
  clock::TimePoint scheduled = *r.most_recent;
  if (auto d = json::getInt(spec, "startingDeadlineSeconds");
      d && scheduled + std::chrono::seconds(*d) < s.now) {
    event("Warning", "MissSchedule", "Missed scheduled time to start a job: " + rfc1123z(scheduled));
    requeueNext();
    return okStatus();
  }
  int64_t minutes =
      std::chrono::duration_cast<std::chrono::seconds>(scheduled.time_since_epoch()).count() / 60;
  std::string jobName = cjName + "-" + std::to_string(minutes);
  auto last = timeAt(s.cj, {"status", "lastScheduleTime"});
  if (s.inActiveByName(jobName) || (last && *last == scheduled)) {
    requeueNext();
    return okStatus();
  }
  std::string_view policy = json::getString(spec, "concurrencyPolicy");
  const json::Value* active = json::find(s.status(), "active");
  bool anyActive = active && active->IsArray() && !active->Empty();
  if (policy == "Forbid" && anyActive) {
    event("Normal", "JobAlreadyActive",
          "Not starting job because prior execution is running and concurrency policy is Forbid");
    requeueNext();
    return okStatus();
  }
  if (policy == "Replace" && anyActive) {
    std::vector<std::string> names;
    for (auto& ref : active->GetArray()) names.emplace_back(json::getString(ref, "name"));
    for (auto& n : names) {
      auto job = client_.get(jobsPath(ns) + "/" + client::urlEncode(n));
      if (!job) {
        event("Warning", "FailedGet", "Get job: " + job.error().message);
        return job.error();
      }
      if (!deleteJob(s, *job)) return ApiError::internal("could not replace job " + ns + "/" + n);
      s.update_status = true;
    }
  }
  // The Job: the template's metadata and spec, named for its scheduled minute.
  json::Document body;
  body.SetObject();
  auto& a = body.GetAllocator();
  json::setString(body, "apiVersion", "batch/v1", a);
  json::setString(body, "kind", "Job", a);
  json::Value& md = json::ensureObject(body, "metadata", a);
  json::setString(md, "name", jobName, a);
  const json::Value& tmpl = objectOr(json::find(spec, "jobTemplate"));
  if (const json::Value* l = json::findPath(tmpl, {"metadata", "labels"}); l && l->IsObject())
    json::set(md, "labels", json::Value(*l, a), a);
  json::Value& ann = json::ensureObject(md, "annotations", a);
  if (const json::Value* an = json::findPath(tmpl, {"metadata", "annotations"}); an && an->IsObject())
    ann.CopyFrom(*an, a);
  json::setString(ann, "batch.kubernetes.io/cronjob-scheduled-timestamp", rfc3339In(scheduled, sched->zone()),
                  a);
  json::Value refs(rapidjson::kArrayType);
  refs.PushBack(controllerReference(Owner{&s.cj, "batch/v1", "CronJob", "", ""}, a), a);
  json::set(md, "ownerReferences", std::move(refs), a);
  json::set(body, "spec", json::Value(objectOr(json::find(tmpl, "spec")), a), a);
  auto created = client_.post(jobsPath(ns), json::serialize(body));
  json::Document job;
  if (!created) {
    const ApiError& e = created.error();
    if (e.code == 403 && e.message.find("being terminated") != std::string::npos) return e;
    if (e.code != 409) {
      event("Warning", "FailedCreate", "Error creating job: " + e.message);
      return e;
    }
    // Created before (by us, before a restart lost the status write?): adopt it into active.
    auto existing = client_.get(jobsPath(ns) + "/" + client::urlEncode(jobName));
    if (!existing) return existing.error();
    const json::Value* ref = controllerRef(*existing);
    if (!ref || json::getString(*ref, "uid") != uidOf(s.cj)) return okStatus();
    if (s.inActive(uidOf(*existing))) return okStatus();
    job = std::move(*existing);
  } else {
    job = std::move(*created);
    event("Normal", "SuccessfulCreate", "Created job " + nameOf(job));
  }
  json::Value& st = s.status();
  auto& ca = s.cj.GetAllocator();
  json::Value* list = json::find(st, "active");
  if (!list || !list->IsArray()) {
    json::set(st, "active", json::Value(rapidjson::kArrayType), ca);
    list = json::find(st, "active");
  }
  list->PushBack(jobRef(job, ca), ca);
  json::setString(st, "lastScheduleTime", clock::rfc3339(scheduled), ca);
  s.update_status = true;
  requeueNext();
  return okStatus();
}

Result<SyncResult> CronJobController::sync(const std::string& key) {
  client::Object cj = cronjobs_.get(key);
  if (!cj) return SyncResult{};
  Sync s;
  s.key = key;
  s.cj.CopyFrom(*cj, s.cj.GetAllocator());
  s.now = clock_.now();
  std::string uid = uidOf(*cj);
  for (auto& j : jobs_.byIndex(kNamespaceIndex, namespaceOf(*cj))) {
    const json::Value* ref = controllerRef(*j);
    if (ref && json::getString(*ref, "name") == nameOf(*cj)) s.jobs.push_back(j);
  }
  bool cleaned = cleanupFinishedJobs(s);
  Status st = syncCronJob(s);
  if (!st) LOG_INFO("cronjob controller: " << key << ": " << st.error().message);
  if (cleaned || s.update_status) {
    auto r = client_.put(cronJobPath(namespaceOf(s.cj), nameOf(s.cj)) + "/status", json::serialize(s.cj));
    if (!r) return r.error();
  }
  if (s.requeue) return SyncResult{std::max(*s.requeue, std::chrono::milliseconds(1))};
  if (!st) return st.error();
  return SyncResult{};
}

}  // namespace shepherd::controllers
