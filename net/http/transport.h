// A connection's transport, plain TCP or TLS over TCP, behind one interface. The HTTP
// server, the upgrade dialer and upgraded byte streams only read, write and hand-shake
// through it, so Asio's operations are compiled once (transport.cc) for both kinds rather
// than once per protocol and handler that uses them: over TLS each such instantiation
// took minutes to compile.
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <functional>
#include <memory>
#include <vector>

namespace shepherd::http {

// Thread-safety: as the stream it wraps: used only from its executor (a strand).
class Transport {
 public:
  using ReadHandler = std::function<void(boost::system::error_code, size_t)>;
  using DoneHandler = std::function<void(boost::system::error_code)>;

  virtual ~Transport() = default;
  virtual bool tls() const = 0;
  // Reads what is there (at least one byte) into `into`.
  virtual void readSome(boost::asio::mutable_buffer into, ReadHandler done) = 0;
  // Reads straight from the socket, outside the TCP layer's timer (plain only; TLS reads
  // through TLS as readSome): a streaming response's watch for its client going away.
  virtual void readSomeUntimed(boost::asio::mutable_buffer into, ReadHandler done) = 0;
  // Writes all of `buffers`, which must stay valid until `done`.
  virtual void write(std::vector<boost::asio::const_buffer> buffers, DoneHandler done) = 0;
  // The TLS handshake as server or client (plain: done at once).
  virtual void handshake(bool server, DoneHandler done) = 0;
  virtual SSL* nativeTls() = 0;  // null for plain
  // The TCP layer: timeouts, the socket, closing.
  virtual boost::beast::tcp_stream& tcp() = 0;
  boost::asio::any_io_executor executor() { return tcp().get_executor(); }
};

std::unique_ptr<Transport> plainTransport(boost::beast::tcp_stream stream);
// `context` must outlive the transport.
std::unique_ptr<Transport> tlsTransport(boost::beast::tcp_stream stream, boost::asio::ssl::context& context);

}  // namespace shepherd::http
