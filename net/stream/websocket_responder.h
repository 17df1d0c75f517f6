// Streamed answers (pods/log) for WebSocket clients, as upstream's wsstream reader does for
// `binary.k8s.io` and `base64.binary.k8s.io` (and no subprotocol): one empty message
// first, then the body in messages of at most 2 KiB (binary, or base64 text), then a
// normal close. Error answers (>= 400) stay plain HTTP, before any switch.
#pragma once

#include <memory>

#include "net/http/message.h"

namespace shepherd::stream {

// True when `req` asks to switch to WebSocket.
bool isWebSocketUpgrade(const http::Request& req);

// Wraps `inner` for a WebSocket upgrade request; returns nullptr and fills `error` (a
// message for a 400) when the handshake is invalid or no offered subprotocol is served.
std::shared_ptr<http::Responder> websocketStreamResponder(const http::Request& req,
                                                          std::shared_ptr<http::Responder> inner,
                                                          std::string& error);

}  // namespace shepherd::stream
