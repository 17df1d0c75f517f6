#include "net/http/transport.h"

#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

namespace shepherd::http {

namespace beast = boost::beast;
namespace net = boost::asio;

namespace {

// Stream: beast::tcp_stream or beast::ssl_stream<beast::tcp_stream>.
template <class Stream>
class StreamTransport final : public Transport {
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

 public:
  template <class... Args>
  explicit StreamTransport(Args&&... args) : stream_(std::forward<Args>(args)...) {}

  bool tls() const override { return kTls; }

  void readSome(net::mutable_buffer into, ReadHandler done) override {
    stream_.async_read_some(into, std::move(done));
  }

  void readSomeUntimed(net::mutable_buffer into, ReadHandler done) override {
    if constexpr (kTls)
      stream_.async_read_some(into, std::move(done));
    else
      stream_.socket().async_read_some(into, std::move(done));
  }

  void write(std::vector<net::const_buffer> buffers, DoneHandler done) override {
    net::async_write(stream_, std::move(buffers),
                     [done = std::move(done)](beast::error_code ec, size_t) { done(ec); });
  }

  void handshake(bool server, DoneHandler done) override {
    if constexpr (kTls)
      stream_.async_handshake(server ? net::ssl::stream_base::server : net::ssl::stream_base::client,
                              std::move(done));
    else
      net::post(stream_.get_executor(), [done = std::move(done)] { done({}); });
  }

  SSL* nativeTls() override {
    if constexpr (kTls)
      return stream_.native_handle();
    else
      return nullptr;
  }

  beast::tcp_stream& tcp() override { return beast::get_lowest_layer(stream_); }

 private:
  Stream stream_;
};

}  // namespace

std::unique_ptr<Transport> plainTransport(beast::tcp_stream stream) {
  return std::make_unique<StreamTransport<beast::tcp_stream>>(std::move(stream));
}

std::unique_ptr<Transport> tlsTransport(beast::tcp_stream stream, net::ssl::context& context) {
  return std::make_unique<StreamTransport<beast::ssl_stream<beast::tcp_stream>>>(std::move(stream), context);
}

}  // namespace shepherd::http
