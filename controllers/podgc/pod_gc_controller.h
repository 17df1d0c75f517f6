// The pod garbage collector (upstream's podgc controller): every check period one pass
//  - terminated pods (Succeeded, Failed) beyond the threshold, evicted then oldest first;
//  - terminating pods on a node that is not Ready and has the out-of-service taint;
//  - pods bound to a node that no longer exists: missing from the node cache for the
//    quarantine time, then confirmed gone by a live GET (they get phase Failed and the
//    DisruptionTarget condition "PodGC: node no longer exists");
//  - terminating pods never bound to a node.
// Each is set Failed (if not terminal yet) and force-deleted (grace period 0). Without it a
// pod on a deleted node stays for ever and keeps its namespace Terminating.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "client/client.h"
#include "client/shared_informers.h"
#include "common/clock.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers {

struct PodGcOptions {
  int terminated_threshold = 12500;  // --terminated-pod-gc-threshold; <= 0: no terminated collection
  std::chrono::milliseconds check_period{20000};
  std::chrono::milliseconds quarantine{40000};  // a missing node counts as gone after this
  const clock::Clock* clock = &clock::realClock();
};

class PodGcController : public Controller {
 public:
  PodGcController(client::Client& c, client::SharedInformers& informers, PodGcOptions opts);
  void run(int workers) override;

 protected:
  // One pass over every pod (the key is ignored); asks to run again after the period.
  Result<SyncResult> sync(const std::string& key) override;

 private:
  // Phase Failed (and, for orphans, the DisruptionTarget condition), then the forced delete.
  Status failAndDelete(const json::Value& pod, bool orphaned);
  void gcTerminated();
  void gcTerminating();
  void gcOrphaned();
  void gcUnscheduledTerminating();

  client::Client& client_;
  client::Informer& pods_;
  client::Informer& nodes_;
  PodGcOptions opts_;
  std::map<std::string, std::chrono::steady_clock::time_point> missing_since_;  // node -> first pass missing
};

}  // namespace shepherd::controllers
