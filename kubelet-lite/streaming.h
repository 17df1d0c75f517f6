// The kubelet port's streaming endpoints, reached through the API server's pods/exec,
// pods/attach and pods/portforward:
//   /exec/{namespace}/{pod}/{container}?command=..&input=1&output=1&error=1&tty=1
//   /attach/{namespace}/{pod}/{container}?input=1&output=1&error=1&tty=1
//   /portForward/{namespace}/{pod}
// Each asks the runtime (CRI Exec, Attach, PortForward) for a URL on its streaming server,
// sends the client's upgrade request there, answers the client with the runtime's 101
// and then relays bytes both ways, as upstream's kubelet does with its streaming proxy.
#pragma once

#include <string>
#include <vector>

#include "net/http/message.h"

namespace shepherd::kubelet {

class Kubelet;

struct StreamingOptions {
  // A session with no traffic either way for this long is closed (as the kubelet's
  // --streaming-connection-idle-timeout); 0: never.
  int idle_timeout_seconds = 4 * 3600;
};

// kind: "exec", "attach" or "portForward"; parts: the path segments after it.
// Thread-safety: may be called concurrently (it only reads the kubelet's pod cache).
void serveStreaming(Kubelet& kubelet, const StreamingOptions& options, const std::string& kind,
                    const std::vector<std::string>& parts, http::Request& req,
                    std::shared_ptr<http::Responder> resp);

}  // namespace shepherd::kubelet
