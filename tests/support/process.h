// Stopping a child process the tests or benchmarks started, by its PID only.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>

namespace shepherd::testsupport {

// Waits up to timeout for the child pid to exit (on a pidfd: it wakes at the exit, no
// polling); true once it has, with its wait status reaped into status.
bool waitChildExit(pid_t pid, std::chrono::milliseconds timeout, int& status);

// Sends sig to the child pid, waits up to grace for it to exit (on a pidfd: no polling),
// then sends SIGKILL; always reaps it. Returns the wait status (-1 if pid <= 0).
int stopChild(pid_t pid, int sig = SIGTERM, std::chrono::milliseconds grace = std::chrono::seconds(10));

}  // namespace shepherd::testsupport
