#include "net/http/asio_byte_stream.h"

#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <cstring>

namespace shepherd::http {

namespace net = boost::asio;
using tcp = net::ip::tcp;

AsioByteStream::AsioByteStream(std::unique_ptr<Transport> transport, std::string leftover)
    : t_(std::move(transport)), leftover_(std::move(leftover)) {}

AsioByteStream::~AsioByteStream() {
  boost::system::error_code ec;
  t_->tcp().socket().close(ec);
}

void AsioByteStream::read(char* buf, size_t size, std::function<void(bool, size_t)> done) {
  net::post(t_->executor(), [self = shared_from_this(), buf, size, done = std::move(done)] {
    if (!self->leftover_.empty()) {
      size_t n = std::min(size, self->leftover_.size());
      std::memcpy(buf, self->leftover_.data(), n);
      self->leftover_.erase(0, n);
      done(true, n);
      return;
    }
    if (self->closed_) return done(false, 0);
    self->t_->readSome(net::buffer(buf, size), [self, done](boost::system::error_code ec, size_t n) {
      if (ec && n == 0) return done(false, 0);
      done(true, n);
    });
  });
}

void AsioByteStream::write(std::string data, std::function<void(bool)> done) {
  pending_bytes_.fetch_add(data.size());
  net::post(t_->executor(),
            [self = shared_from_this(), data = std::move(data), done = std::move(done)]() mutable {
              self->queue_.push_back({std::move(data), std::move(done), false});
              self->pump();
            });
}

void AsioByteStream::shutdownWrite() {
  net::post(t_->executor(), [self = shared_from_this()] {
    self->queue_.push_back({std::string(), nullptr, true});
    self->pump();
  });
}

void AsioByteStream::close() {
  net::post(t_->executor(), [self = shared_from_this()] { self->closeNow(); });
}

void AsioByteStream::closeNow() {
  if (closed_) return;
  closed_ = true;
  closed_flag_ = true;
  boost::system::error_code ec;
  auto& sock = t_->tcp().socket();
  sock.shutdown(tcp::socket::shutdown_both, ec);
  sock.close(ec);
  failQueue();  // the write in flight, if any, completes on its own
}

void AsioByteStream::failQueue() {
  auto q = std::move(queue_);
  queue_.clear();
  for (auto& p : q) {
    pending_bytes_.fetch_sub(p.data.size());
    if (p.done) p.done(false);
  }
}

void AsioByteStream::pump() {
  if (writing_) return;
  if (closed_) return failQueue();
  if (queue_.empty()) return;
  if (queue_.front().shutdown) {
    // TCP FIN only, also under TLS: a close_notify exchange would read from the stream
    // beside the reader's own reads. The peers here treat the FIN as the end.
    queue_.pop_front();
    boost::system::error_code ec;
    t_->tcp().socket().shutdown(tcp::socket::shutdown_send, ec);
    return pump();
  }
  // The piece in flight lives in the write's handler, not in this object: callbacks that
  // hold this stream then never form a cycle with it, even if the handler is dropped.
  writing_ = true;
  auto cur = std::make_shared<Pending>(std::move(queue_.front()));
  queue_.pop_front();
  t_->write({net::buffer(cur->data)}, [self = shared_from_this(), cur](boost::system::error_code ec) {
    self->writing_ = false;
    self->pending_bytes_.fetch_sub(cur->data.size());
    if (ec) self->closeNow();
    if (cur->done) cur->done(!ec);
    self->pump();
  });
}

}  // namespace shepherd::http
