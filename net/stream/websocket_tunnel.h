// port-forward for kubectl 1.31+: a WebSocket whose binary messages carry the bytes of a
// SPDY/3.1 session (subprotocol SPDY/3.1+portforward.k8s.io). The messages are unwrapped
// into the kubelet's SPDY connection and the kubelet's bytes wrapped into messages, as
// upstream's TunnelingHandler does; the SPDY session itself is end to end.
#pragma once

#include <memory>

#include "net/http/byte_stream.h"

namespace shepherd::stream {

void tunnelWebSocketToStream(std::shared_ptr<http::ByteStream> client,
                             std::shared_ptr<http::ByteStream> upstream, int idle_timeout_seconds);

}  // namespace shepherd::stream
