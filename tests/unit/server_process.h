// Runs a real shepherd-apiserver for client tests: fork/exec on a data dir and port,
// waits for /readyz, kills by PID.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "client/rest_client.h"
#include "tests/support/process.h"

namespace shepherd::testutil {

class ServerProcess {
 public:
  // port 0 picks a free one (read back from the port file).
  ServerProcess(const std::string& data_dir, int port, const std::string& extra = "") : dir_(data_dir) {
    std::string portFile = data_dir + "/port-" + std::to_string(counter()++);
    pid_ = fork();
    if (pid_ == 0) {
      // The server ends with the test binary, even when ctest kills it on a timeout.
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      std::string log = data_dir + "/server.log";
      FILE* f = std::freopen(log.c_str(), "a", stderr);
      (void)f;
      std::string d = "--data-dir=" + data_dir + "/data";
      std::string p = "--port=" + std::to_string(port);
      std::string pf = "--port-file=" + portFile;
      if (extra.empty())
        execl(SHEPHERD_APISERVER_PATH, SHEPHERD_APISERVER_PATH, d.c_str(), p.c_str(), pf.c_str(),
              static_cast<char*>(nullptr));
      else
        execl(SHEPHERD_APISERVER_PATH, SHEPHERD_APISERVER_PATH, d.c_str(), p.c_str(), pf.c_str(),
              extra.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 400 && port_ == 0; ++i) {
      std::ifstream in(portFile);
      in >> port_;
      if (!port_) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }
  ~ServerProcess() { stop(SIGTERM); }
  int port() const { return port_; }
  // HTTPS with the PKI the server generates in DATA/pki (the same for every server on
  // one data dir); clients act as its admin.
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  std::string pkiDir() const { return dir_ + "/data/pki"; }
  void stop(int sig) {
    testsupport::stopChild(pid_, sig, std::chrono::seconds(10));
    pid_ = -1;
  }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace shepherd::testutil
