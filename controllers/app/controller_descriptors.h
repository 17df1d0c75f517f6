// Every controller shepherd-controller-manager can run, each described once (upstream's
// NewControllerDescriptors): its name, its flags, and how it is made from the shared
// client and informers. Adding a controller is one entry here.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/event_recorder.h"
#include "client/shared_informers.h"
#include "common/api_error.h"
#include "common/flags.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers {

// What a controller is made from.
struct ControllerContext {
  client::Client& client;
  client::SharedInformers& informers;
  const Flags& flags;
  std::string root_ca_pem;  // the CA root-ca-cert-publisher publishes
  // Waits this long; false when the process is asked to stop meanwhile.
  std::function<bool(std::chrono::seconds)> wait;
};

// A made controller with what it owns. The recorder outlives the controller.
struct RunningController {
  std::unique_ptr<client::EventRecorder> events;
  std::unique_ptr<Controller> controller;
  int workers = 1;
};

struct ControllerDescriptor {
  std::string name;  // upstream's, as --controllers names it
  // The controller; BadRequest when its flags are wrong; null controller when the process
  // was asked to stop while it was being made.
  std::function<Result<RunningController>(ControllerContext&)> make;
};

const std::vector<ControllerDescriptor>& controllerDescriptors();
// Every controller's flags (and --controllers).
void defineControllerFlags(Flags& flags);
// --controllers as upstream: "*" enables every controller, "name" adds one, "-name" removes
// one. Names that are not controllers are returned as they are (the caller refuses them).
std::set<std::string> enabledControllers(const std::string& spec);

}  // namespace shepherd::controllers
