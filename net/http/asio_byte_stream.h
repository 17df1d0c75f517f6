// ByteStream over a Beast stream (plain tcp_stream or ssl_stream over one). Used by the
// server to hand over an upgraded connection and by the upgrade dialer for its own.
#pragma once

#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <cstring>
#include <deque>
#include <mutex>
#include <type_traits>

#include "net/http/byte_stream.h"

namespace shepherd::http {

// Thread-safety: as ByteStream. `Stream` must be bound to a strand (or a one-threaded
// executor): every operation on it is posted there.
template <class Stream>
class AsioByteStream final : public ByteStream, public std::enable_shared_from_this<AsioByteStream<Stream>> {
  static constexpr bool kTls = !std::is_same_v<Stream, boost::beast::tcp_stream>;

 public:
  // `leftover`: bytes already read from the connection past the HTTP message (served first).
  AsioByteStream(Stream stream, std::string leftover)
      : stream_(std::move(stream)), leftover_(std::move(leftover)) {}
  ~AsioByteStream() override {
    boost::beast::error_code ec;
    boost::beast::get_lowest_layer(stream_).socket().close(ec);
  }

  void read(char* buf, size_t size, std::function<void(bool, size_t)> done) override {
    boost::asio::post(stream_.get_executor(),
                      [self = this->shared_from_this(), buf, size, done = std::move(done)] {
                        if (!self->leftover_.empty()) {
                          size_t n = std::min(size, self->leftover_.size());
                          std::memcpy(buf, self->leftover_.data(), n);
                          self->leftover_.erase(0, n);
                          done(true, n);
                          return;
                        }
                        if (self->closed_) return done(false, 0);
                        self->stream_.async_read_some(boost::asio::buffer(buf, size),
                                                      [self, done](boost::beast::error_code ec, size_t n) {
                                                        if (ec && n == 0) return done(false, 0);
                                                        done(true, n);
                                                      });
                      });
  }

  void write(std::string data, std::function<void(bool)> done) override {
    pending_bytes_.fetch_add(data.size());
    boost::asio::post(stream_.get_executor(), [self = this->shared_from_this(), data = std::move(data),
                                               done = std::move(done)]() mutable {
      self->queue_.push_back({std::move(data), std::move(done), false});
      self->pump();
    });
  }

  void shutdownWrite() override {
    boost::asio::post(stream_.get_executor(), [self = this->shared_from_this()] {
      self->queue_.push_back({std::string(), nullptr, true});
      self->pump();
    });
  }

  void close() override {
    boost::asio::post(stream_.get_executor(), [self = this->shared_from_this()] { self->closeNow(); });
  }

  bool closed() const override { return closed_flag_.load(); }
  size_t pendingWriteBytes() const override { return pending_bytes_.load(); }
  boost::asio::any_io_executor executor() override { return stream_.get_executor(); }

 private:
  struct Pending {
    std::string data;
    std::function<void(bool)> done;
    bool shutdown;
  };

  void closeNow() {
    if (closed_) return;
    closed_ = true;
    closed_flag_ = true;
    boost::beast::error_code ec;
    auto& sock = boost::beast::get_lowest_layer(stream_).socket();
    sock.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
    sock.close(ec);
    failQueue();  // the write in flight, if any, completes on its own
  }

  void failQueue() {
    auto q = std::move(queue_);
    queue_.clear();
    for (auto& p : q) {
      pending_bytes_.fetch_sub(p.data.size());
      if (p.done) p.done(false);
    }
  }

  void pump() {
    if (writing_) return;
    if (closed_) return failQueue();
    if (queue_.empty()) return;
    if (queue_.front().shutdown) {
      // TCP FIN only, also under TLS: a close_notify exchange would read from the stream
      // beside the reader's own reads. The peers here treat the FIN as the end.
      queue_.pop_front();
      boost::beast::error_code ec;
      boost::beast::get_lowest_layer(stream_).socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send,
                                                                ec);
      return pump();
    }
    // The piece in flight lives in the write's handler, not in this object: callbacks that
    // hold this stream then never form a cycle with it, even if the handler is dropped.
    writing_ = true;
    auto cur = std::make_shared<Pending>(std::move(queue_.front()));
    queue_.pop_front();
    boost::asio::async_write(stream_, boost::asio::buffer(cur->data),
                             [self = this->shared_from_this(), cur](boost::beast::error_code ec, size_t) {
                               self->writing_ = false;
                               self->pending_bytes_.fetch_sub(cur->data.size());
                               if (ec) self->closeNow();
                               if (cur->done) cur->done(!ec);
                               self->pump();
                             });
  }

  Stream stream_;
  std::string leftover_;
  std::deque<Pending> queue_;  // strand only
  bool writing_ = false;
  bool closed_ = false;
  std::atomic<bool> closed_flag_{false};
  std::atomic<size_t> pending_bytes_{0};
};

}  // namespace shepherd::http
