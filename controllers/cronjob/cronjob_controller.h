// CronJob controller, as upstream's (pkg/controller/cronjob, controller v2): for each
// CronJob, the most recent unmet schedule time (from lastScheduleTime or the creation
// time, within startingDeadlineSeconds) gets one Job named <cronjob>-<minutes since the
// epoch>, so a restart never creates it twice; concurrencyPolicy Allow, Forbid (skip
// while one runs) or Replace (delete the running ones first); status.active kept to the
// running Jobs; finished Jobs beyond the history limits deleted oldest first; the key is
// queued again for the next schedule time (+100 ms).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/event_recorder.h"
#include "client/shared_informers.h"
#include "common/clock.h"
#include "common/cron_schedule.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers {

// Thread-safety: as Controller.
class CronJobController : public Controller {
 public:
  CronJobController(client::Client& c, client::SharedInformers& informers, client::EventRecorder& events,
                    const clock::Clock& clk = clock::realClock());

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  struct Sync;
  void onJobChange(const client::Object& job);
  void onCronJobUpdate(const client::Object& old_cj, const client::Object& cj);
  client::Object resolveControllerRef(const json::Value& job) const;
  // The next time to look: the schedule's next time after the most recent one, + 100 ms.
  std::chrono::milliseconds nextScheduleDelay(const json::Value& cj, const CronSchedule& sched) const;
  bool cleanupFinishedJobs(Sync& s);
  Status syncCronJob(Sync& s);
  bool deleteJob(Sync& s, const json::Value& job);

  client::Client& client_;
  client::Informer& cronjobs_;
  client::Informer& jobs_;
  client::EventRecorder& events_;
  const clock::Clock& clock_;
};

}  // namespace shepherd::controllers
