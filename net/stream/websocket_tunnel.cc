#include "net/stream/websocket_tunnel.h"

#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <vector>

#include "net/stream/websocket.h"

namespace shepherd::stream {

namespace {

constexpr size_t kHighWater = 1 << 20;
constexpr size_t kLowWater = 256 << 10;
using Clock = std::chrono::steady_clock;

// Thread-safety: callbacks on the two connections' strands; shared state atomic.
class Tunnel : public std::enable_shared_from_this<Tunnel> {
 public:
  Tunnel(std::shared_ptr<http::ByteStream> client, std::shared_ptr<http::ByteStream> upstream, int idle)
      : ws_(std::make_shared<WebSocketConnection>(std::move(client))),
        up_(std::move(upstream)),
        idle_(idle),
        timer_(ws_->stream()->executor()) {
    touch();
    buf_.resize(32 * 1024);
  }

  void start() {
    auto self = shared_from_this();
    ws_->start(
        [self](bool binary, std::string msg) {
          if (!binary) return self->ws_->sendClose(1003, "binary messages only");
          self->touch();
          self->up_->write(std::move(msg), [self](bool ok) {
            if (!ok) return self->end();
            if (self->up_->pendingWriteBytes() < kLowWater) self->ws_->setReading(true);
          });
          if (self->up_->pendingWriteBytes() > kHighWater) self->ws_->setReading(false);
        },
        [self] { self->end(); });
    readUpstream();
    tick();
  }

 private:
  void touch() { last_ = Clock::now().time_since_epoch().count(); }

  // One read at a time: the next is issued when the last piece is handed to the client,
  // unless the client is too far behind; then the write callback resumes it.
  void readUpstream() {
    up_->read(buf_.data(), buf_.size(), [self = shared_from_this()](bool ok, size_t n) {
      if (!ok) {
        self->ws_->sendClose(1000, "");
        return self->end();
      }
      self->touch();
      self->ws_->sendBinary(std::string(self->buf_.data(), n), [self](bool ok) {
        if (!ok) return self->end();
        if (self->ws_->pendingWriteBytes() < kLowWater && self->paused_.exchange(false))
          boost::asio::post(self->up_->executor(), [self] { self->readUpstream(); });
      });
      if (self->ws_->pendingWriteBytes() < kHighWater) return self->readUpstream();
      self->paused_ = true;
      // The write may have drained between the check and the flag.
      if (self->ws_->pendingWriteBytes() < kLowWater && self->paused_.exchange(false)) self->readUpstream();
    });
  }

  void end() {
    if (done_.exchange(true)) return;
    up_->close();
    ws_->close();
    boost::asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
  }

  void tick() {
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->done_.load()) return;
      auto idle = Clock::now().time_since_epoch().count() - self->last_.load();
      if (self->idle_ > 0 &&
          idle > std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(self->idle_)).count())
        return self->end();
      self->tick();
    });
  }

  std::shared_ptr<WebSocketConnection> ws_;
  std::shared_ptr<http::ByteStream> up_;
  int idle_;
  boost::asio::steady_timer timer_;
  std::vector<char> buf_;
  std::atomic<bool> paused_{false}, done_{false};
  std::atomic<Clock::rep> last_{0};
};

}  // namespace

void tunnelWebSocketToStream(std::shared_ptr<http::ByteStream> client,
                             std::shared_ptr<http::ByteStream> upstream, int idle_timeout_seconds) {
  std::make_shared<Tunnel>(std::move(client), std::move(upstream), idle_timeout_seconds)->start();
}

}  // namespace shepherd::stream
