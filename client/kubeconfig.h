// Client configuration from a kubeconfig file (the subset Shepherd's components use):
// the current context's server, CA, client certificate/key and bearer token.
#pragma once

#include <string>
#include <vector>

#include "common/api_error.h"

namespace shepherd::client {

struct ClientConfig {
  std::vector<std::string> servers;  // first is preferred; others are fail-over targets
  std::string token;
  std::string ca_file, ca_data;      // PEM; data is decoded from base64
  std::string cert_file, cert_data;
  std::string key_file, key_data;
  bool insecure_skip_tls_verify = false;
  std::string user_agent = "shepherd";
  int timeout_ms = 30000;            // per request (watches have their own)
};

// Loads `path` using `context` (empty: current-context). Relative file paths in the
// kubeconfig are resolved against its directory.
Result<ClientConfig> loadKubeconfig(const std::string& path, const std::string& context = "");

}  // namespace shepherd::client
