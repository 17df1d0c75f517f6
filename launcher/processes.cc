#include "launcher/processes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

namespace shepherd::launcher {

pid_t spawn(const std::vector<std::string>& argv, const std::string& log_path) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd >= 0) {
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
  _exit(127);
}

int runScript(const std::vector<std::string>& argv, const std::string& log_path) {
  pid_t pid = spawn(argv, log_path);
  if (pid < 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void Supervisor::start(Component& c) {
  c.pid = spawn(c.argv, logOf(c));
  c.started = std::chrono::steady_clock::now();
  std::printf("shepherd: started %s (pid %d), log %s\n", c.name.c_str(), c.pid, logOf(c).c_str());
  std::fflush(stdout);
}

void Supervisor::reap(std::vector<Component>& components) {
  int status;
  pid_t dead;
  while ((dead = waitpid(-1, &status, WNOHANG)) > 0) {
    for (auto& c : components) {
      if (c.pid != dead) continue;
      auto now = std::chrono::steady_clock::now();
      if (now - c.started > std::chrono::seconds(60)) c.restarts = 0;
      int backoff = std::min(30, 1 << std::min(c.restarts, 5));
      ++c.restarts;
      std::fprintf(stderr, "shepherd: %s (pid %d) exited (%s %d); restarting in %ds\n", c.name.c_str(), dead,
                   WIFSIGNALED(status) ? "signal" : "status",
                   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), backoff);
      c.pid = -1;
      c.restart_at = now + std::chrono::seconds(backoff);
    }
  }
  auto now = std::chrono::steady_clock::now();
  for (auto& c : components) {
    if (!c.restart_at || *c.restart_at > now) continue;
    c.restart_at.reset();
    c.pid = spawn(c.argv, logOf(c));
    c.started = now;
  }
}

void Supervisor::stopAll(std::vector<Component>& components, int grace_seconds) {
  auto stopBy = std::chrono::steady_clock::now() + std::chrono::seconds(grace_seconds);
  for (auto it = components.rbegin(); it != components.rend(); ++it) {
    auto& c = *it;
    c.restart_at.reset();
    if (c.pid > 0) kill(c.pid, SIGTERM);
    while (c.pid > 0) {
      int status;
      pid_t r = waitpid(c.pid, &status, WNOHANG);
      if (r == c.pid || r < 0) {
        c.pid = -1;
        break;
      }
      if (std::chrono::steady_clock::now() > stopBy) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, &status, 0);
        c.pid = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

}  // namespace shepherd::launcher
