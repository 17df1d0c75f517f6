// Copies bytes both ways between two upgraded connections (a client and the next hop),
// as upstream's UpgradeAwareHandler does once both ends have switched protocols. Each
// direction reads the next piece only after the last one is written, so a slow reader
// holds back its writer instead of filling memory.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "net/http/byte_stream.h"

namespace shepherd::http {

struct RelayOptions {
  // Both connections are closed when no byte has moved either way for this long; 0: never.
  int idle_timeout_seconds = 0;
  // Called once when the relay ends (both connections closed).
  std::function<void()> on_end;
  // Makes, per direction, a judge of whether the bytes that moved count as activity for
  // the idle timeout (unset: all bytes do); e.g. a SPDY session's keep-alive pings do not.
  std::function<std::function<bool(std::string_view)>()> activity_meter;
};

// Runs until either side closes or fails: the end of one direction half-closes the other
// side's writing, and both connections are closed soon after (whatever the peers do).
void relay(std::shared_ptr<ByteStream> a, std::shared_ptr<ByteStream> b, RelayOptions options = {});

}  // namespace shepherd::http
