// The small HTTP endpoint of the control-plane components (scheduler, controller
// manager): /healthz, /livez, /readyz answer "ok"; /metrics, when given, the component's
// metrics text.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "net/http/server.h"

namespace shepherd::http {

Result<std::unique_ptr<Server>> startHealthEndpoint(const std::string& address, int port,
                                                    std::function<std::string()> metrics = nullptr);

}  // namespace shepherd::http
