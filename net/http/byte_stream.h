// A connection after an HTTP upgrade (101 Switching Protocols): raw bytes both ways, for
// the streaming protocols (SPDY/3.1, WebSocket) that kubectl exec, attach and
// port-forward speak. The same interface covers a client's connection handed over by
// the server and a connection the process dialled itself (to a kubelet or to
// containerd's streaming server), plain TCP or TLS alike, so relays and protocol
// sessions are written once.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>
#include <string>

namespace shepherd::http {

// Thread-safety: every method may be called from any thread. Work is carried out on the
// connection's own strand, where every callback runs. At most one read may be pending at
// a time; writes queue and go out in order.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Reads some bytes (at most `size`) into `buf`, which must stay valid until `done` runs.
  // ok=false: the peer closed, the connection failed, or close() was called.
  virtual void read(char* buf, size_t size, std::function<void(bool ok, size_t n)> done) = 0;
  // Queues `data`; `done` (optional) runs once it is written (ok) or cannot be (!ok).
  virtual void write(std::string data, std::function<void(bool ok)> done = nullptr) = 0;
  // After the queued writes, tells the peer no more bytes follow (TCP FIN, also under
  // TLS) while reading goes on.
  virtual void shutdownWrite() = 0;
  // Ends the connection at once; pending operations complete with ok=false.
  virtual void close() = 0;
  virtual bool closed() const = 0;
  // Bytes queued but not yet written (for producers that must not outrun a slow peer).
  virtual size_t pendingWriteBytes() const = 0;
  virtual boost::asio::any_io_executor executor() = 0;
};

}  // namespace shepherd::http
