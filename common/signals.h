// Signal set-up shared by the daemons: SIGINT/SIGTERM are blocked in every thread (the
// main thread waits for them with sigtimedwait) and SIGPIPE is ignored (a closed socket
// is an error return, not a process exit).
#pragma once

#include <signal.h>

namespace shepherd {

// Call before starting any thread; returns the set to wait on.
sigset_t blockTerminationSignals();

}  // namespace shepherd
