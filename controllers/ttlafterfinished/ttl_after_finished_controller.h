// TTL-after-finished controller, as upstream's (pkg/controller/ttlafterfinished): a
// finished Job (Complete or Failed) with spec.ttlSecondsAfterFinished is deleted, with
// its pods (foreground), once that many seconds have passed since it finished; the TTL
// is checked again on a live read first, so an edit that extends it is honoured.
#pragma once

#include <optional>

#include "client/shared_informers.h"
#include "common/clock.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers {

// Thread-safety: as Controller.
class TtlAfterFinishedController : public Controller {
 public:
  TtlAfterFinishedController(client::Client& c, client::SharedInformers& informers,
                             const clock::Clock& clk = clock::realClock());

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  // How long until the Job expires (<= 0: expired), or nullopt when it needs no clean-up.
  std::optional<std::chrono::milliseconds> timeLeft(const json::Value& job) const;

  client::Client& client_;
  client::Informer& jobs_;
  const clock::Clock& clock_;
};

}  // namespace shepherd::controllers
