// Child processes for the launcher: start one with its output in a log, run a script to
// completion, and supervise the cluster's components (restart on crash, ordered stop).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "launcher/cluster_plan.h"

namespace shepherd::launcher {

// Starts `argv` as a child with default signal handling and its output appended to
// `log_path`; the child's pid (-1 if fork failed).
pid_t spawn(const std::vector<std::string>& argv, const std::string& log_path);
// Runs a helper script to completion with its output appended to `log_path`; its exit code.
int runScript(const std::vector<std::string>& argv, const std::string& log_path);

// Thread-safety: one thread (the launcher's main loop).
class Supervisor {
 public:
  explicit Supervisor(std::string log_dir) : log_dir_(std::move(log_dir)) {}
  void start(Component& c);
  // Reaps exited children; a component that exited is started again after a back-off that
  // grows per crash (reset once it ran a minute). Never blocks: call it often; a restart
  // happens on the first call after its back-off.
  void reap(std::vector<Component>& components);
  // Stops the components in reverse start order, each after the one before has exited
  // (SIGTERM, SIGKILL after `grace_seconds` in all): clients still reach the API server
  // while they stop.
  void stopAll(std::vector<Component>& components, int grace_seconds);

 private:
  std::string logOf(const Component& c) const { return log_dir_ + "/" + c.name + ".log"; }
  std::string log_dir_;
};

}  // namespace shepherd::launcher
