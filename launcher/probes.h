// Readiness checks of the launcher's components over loopback.
#pragma once

namespace shepherd::launcher {

// GET /health over plain HTTP on loopback (an etcd member); true when it says healthy.
bool etcdHealthy(int port);
// GET /readyz over HTTPS on loopback (the probe needs no credentials); true on 200.
bool apiServerReady(int port);

}  // namespace shepherd::launcher
