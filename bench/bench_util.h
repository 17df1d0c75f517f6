// Helpers for benchmarks: spawn Shepherd processes on loopback, percentiles, timing.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"

namespace shepherd::bench {

using Clock = std::chrono::steady_clock;

inline double ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::string& log) {
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = std::freopen(log.c_str(), "a", stderr);
      (void)f;
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
  }
  ~Process() { stop(); }
  pid_t pid() const { return pid_; }
  void stop() {
    testsupport::stopChild(pid_, SIGTERM, std::chrono::seconds(15));
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

inline int waitForPortFile(const std::string& path, int timeout_ms = 15000) {
  int port = 0;
  for (int i = 0; i < timeout_ms / 20 && port == 0; ++i) {
    std::ifstream in(path);
    in >> port;
    if (!port) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return port;
}

inline std::string writeKubeconfig(const std::string& dir, int port) {
  std::string path = dir + "/kubeconfig";
  std::ofstream(path)
      << "apiVersion: v1\nkind: Config\nclusters:\n- name: b\n  cluster:\n    server: http://127.0.0.1:"
      << port << "\ncontexts:\n- name: b\n  context: {cluster: b, user: u}\ncurrent-context: b\n"
      << "users:\n- name: u\n  user: {}\n";
  return path;
}

// CPU seconds (user+system) a process has used so far, from /proc.
inline double cpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = s.rfind(')');
  if (close == std::string::npos) return 0;
  std::vector<std::string> fields;
  size_t i = close + 2;
  while (i < s.size()) {
    size_t j = s.find(' ', i);
    if (j == std::string::npos) j = s.size();
    fields.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  if (fields.size() < 13) return 0;
  long ticks = sysconf(_SC_CLK_TCK);
  return static_cast<double>(std::stoll(fields[11]) + std::stoll(fields[12])) / static_cast<double>(ticks);
}

// "1,16,64" -> {1, 16, 64}
inline std::vector<int64_t> parseIntList(const std::string& s) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(std::stoll(s.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

inline long rssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

}  // namespace shepherd::bench
