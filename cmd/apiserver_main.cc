// shepherd-apiserver: serves the Kubernetes API over an embedded, durable SQLite store (or
// etcd). The server itself is apiserver::Server; this is its command line.
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <fstream>

#include "apiserver/options.h"
#include "apiserver/server.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/signals.h"

using namespace shepherd;

namespace {

int fail(const ApiError& e) {
  std::fprintf(stderr, "shepherd-apiserver: %s\n", e.message.c_str());
  return e.code == 400 ? 2 : 1;  // wrong options, or a failing environment
}

// Every client connection is a descriptor: take the hard limit, so thousands of idle
// clients cannot exhaust the default of 1024.
void raiseDescriptorLimit() {
  if (rlimit rl{}; getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

void writePortFile(const std::string& path, int port) {
  std::string tmp = path + ".tmp";
  std::ofstream(tmp) << port << "\n";
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  apiserver::defineFlags(flags);
  flags.define("port-file", "", "If set, the bound port is written to this file once serving.");
  flags.define("v", "0", "Log verbosity (0 info, 1+ debug).");
  flags.define("help", "false", "Show this help.", true);
  if (int rc = flags.parseMain(argc, argv, "shepherd-apiserver", "shepherd-apiserver [flags]"); rc >= 0)
    return rc;
  auto options = apiserver::optionsFromFlags(flags);
  if (!options) return fail(options.error());
  raiseDescriptorLimit();
  // Signals are taken synchronously by main; every other thread inherits the mask.
  sigset_t set = blockTerminationSignals();
  auto server = apiserver::Server::start(*options);
  if (!server) return fail(server.error());
  if (!flags.get("port-file").empty()) writePortFile(flags.get("port-file"), (*server)->port());
  int sig = 0;
  sigwait(&set, &sig);
  LOG_INFO("received signal " << sig << "; shutting down");
  (*server)->stop();
  LOG_INFO("shepherd-apiserver stopped");
  return 0;
}
