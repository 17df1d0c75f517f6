#include "tests/support/process.h"

#include <errno.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace shepherd::testsupport {

bool waitChildExit(pid_t pid, std::chrono::milliseconds timeout, int& status) {
  if (waitpid(pid, &status, WNOHANG) == pid) return true;
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd >= 0) {  // readable when the process exits
    pollfd p{fd, POLLIN, 0};
    int ready;
    do {
      ready = poll(&p, 1, static_cast<int>(timeout.count()));
    } while (ready < 0 && errno == EINTR);
    close(fd);
    return ready > 0 && waitpid(pid, &status, 0) == pid;
  }
  // No pidfd (a kernel older than 5.3): look every 20 ms.
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int stopChild(pid_t pid, int sig, std::chrono::milliseconds grace) {
  if (pid <= 0) return -1;
  int status = 0;
  kill(pid, sig);
  if (waitChildExit(pid, grace, status)) return status;
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return status;
}

}  // namespace shepherd::testsupport
