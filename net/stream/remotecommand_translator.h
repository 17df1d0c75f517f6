// exec and attach for WebSocket clients speaking v5.channel.k8s.io (kubectl 1.30+),
// translated to SPDY/3.1 with v4.channel.k8s.io towards the kubelet and the runtime's
// streaming server, which predate v5 — as upstream's StreamTranslatorHandler does.
//   WebSocket binary message [channel][payload]: 0 stdin, 1 stdout, 2 stderr, 3 error
//   (the final Status JSON), 4 resize (JSON {"Width","Height"}), and {255, channel}: the
//   client is done writing that channel (stdin EOF, so `cp` and `sha256sum` finish).
#pragma once

#include <memory>
#include <string>

#include "net/http/byte_stream.h"

namespace shepherd::stream {

struct RemoteCommandOptions {
  bool stdin = false, stdout = false, stderr = false, tty = false;
  // The session is closed when no data moves either way for this long (0: never);
  // the client's keep-alive pings do not count as data.
  int idle_timeout_seconds = 0;
};

// Runs the session until either side ends. `kubelet` has already switched to SPDY
// (v4.channel.k8s.io); `client` to WebSocket (v5.channel.k8s.io).
void translateRemoteCommand(std::shared_ptr<http::ByteStream> client,
                            std::shared_ptr<http::ByteStream> kubelet, const RemoteCommandOptions& options);

}  // namespace shepherd::stream
