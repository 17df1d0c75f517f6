#include "net/stream/remotecommand_translator.h"

#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "common/log.h"
#include "net/stream/spdy_session.h"
#include "net/stream/websocket.h"

namespace shepherd::stream {

namespace {

constexpr size_t kHighWater = 1 << 20;  // queued bytes at which the other side stops reading
constexpr size_t kLowWater = 256 << 10;

using Clock = std::chrono::steady_clock;

// Thread-safety: callbacks arrive on the two connections' strands; state shared between
// them is atomic or set before either side starts.
class Translator : public std::enable_shared_from_this<Translator> {
 public:
  Translator(std::shared_ptr<http::ByteStream> client, std::shared_ptr<http::ByteStream> kubelet,
             RemoteCommandOptions o)
      : opts_(o),
        ws_(std::make_shared<WebSocketConnection>(std::move(client))),
        spdy_(std::make_shared<SpdyClientSession>(std::move(kubelet))),
        timer_(ws_->stream()->executor()) {
    touch();
  }

  void start() {
    auto self = shared_from_this();
    // Client input waits (reading paused) until the far side has every stream.
    ws_->setReading(false);
    ws_->start([self](bool, std::string msg) { self->fromClient(std::move(msg)); },
               [self] { self->clientGone(); });
    // An empty first message tells the client the session is up (as upstream's servers do).
    char first = opts_.stdout ? 1 : (opts_.stderr && !opts_.tty) ? 2 : 3;
    ws_->sendBinary(std::string(1, first));
    // The streams the runtime expects, in client-go's order (it waits for exactly these).
    error_ = spdy_->openStream({{"streamtype", "error"}});
    expected_replies_ = 1;
    if (opts_.stdin) stdin_ = spdy_->openStream({{"streamtype", "stdin"}}), ++expected_replies_;
    if (opts_.stdout) stdout_ = spdy_->openStream({{"streamtype", "stdout"}}), ++expected_replies_;
    if (opts_.stderr && !opts_.tty)
      stderr_ = spdy_->openStream({{"streamtype", "stderr"}}), ++expected_replies_;
    if (opts_.tty) resize_ = spdy_->openStream({{"streamtype", "resize"}}), ++expected_replies_;

    SpdyClientSession::Callbacks cb;
    cb.on_reply = [self](uint32_t) {
      // Client input flows only once every stream exists on the far side.
      if (self->expected_replies_.fetch_sub(1) == 1) self->ws_->setReading(true);
    };
    cb.on_data = [self](uint32_t id, std::string data) { self->fromKubelet(id, std::move(data)); };
    cb.on_end = [self](const std::string&) { self->finish(); };
    spdy_->start(std::move(cb));

    tick();
  }

 private:
  void touch() { last_ = Clock::now().time_since_epoch().count(); }

  void fromClient(std::string msg) {
    if (msg.empty()) return;
    touch();
    uint8_t channel = static_cast<uint8_t>(msg[0]);
    if (channel == 255) {  // v5: the client closes a channel for writing
      if (msg.size() != 2) return ws_->sendClose(1002, "invalid close message");
      uint8_t closed = static_cast<uint8_t>(msg[1]);
      if (closed == 0 && stdin_) spdy_->send(stdin_, "", true);
      if (closed == 4 && resize_) spdy_->send(resize_, "", true);
      return;
    }
    uint32_t to = channel == 0 ? stdin_ : channel == 4 ? resize_ : 0;
    if (!to || msg.size() == 1) return;  // not a channel the client may write
    auto self = shared_from_this();
    spdy_->send(to, msg.substr(1), false, [self](bool) {
      if (self->spdy_->pendingWriteBytes() < kLowWater) self->ws_->setReading(true);
    });
    if (spdy_->pendingWriteBytes() > kHighWater) ws_->setReading(false);
  }

  void fromKubelet(uint32_t id, std::string data) {
    touch();
    if (id == error_) {
      if (status_.size() < 64 * 1024) status_ += data;
      return;
    }
    char channel = id == stdout_ ? 1 : id == stderr_ ? 2 : 0;
    if (!channel) return;
    auto self = shared_from_this();
    ws_->sendBinary(std::string(1, channel) + data, [self](bool) {
      if (self->ws_->pendingWriteBytes() < kLowWater) self->spdy_->setReading(true);
    });
    if (ws_->pendingWriteBytes() > kHighWater) spdy_->setReading(false);
  }

  // The runtime ended the session (after writing the status): the status goes to the
  // client on channel 3, then a normal close (1000), which the client reads as EOF.
  void finish() {
    if (finished_.exchange(true)) return;
    std::string status = status_.empty() ? R"({"metadata":{},"status":"Success"})" : status_;
    ws_->sendBinary(std::string(1, '\x03') + status);
    ws_->sendClose(1000, "");
    stopTimer();
  }

  // The client went away (or closed): end the runtime's session so its process sees EOF.
  void clientGone() {
    finished_ = true;
    spdy_->close();
    stopTimer();
  }

  void tick() {
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->finished_.load()) return;
      auto idle = Clock::now().time_since_epoch().count() - self->last_.load();
      if (self->opts_.idle_timeout_seconds > 0 &&
          idle > std::chrono::duration_cast<Clock::duration>(
                     std::chrono::seconds(self->opts_.idle_timeout_seconds))
                     .count()) {
        LOG_INFO("stream: closing an idle exec/attach session");
        self->ws_->sendClose(1000, "idle timeout");
        self->clientGone();
        return;
      }
      self->tick();
    });
  }

  void stopTimer() {
    boost::asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
  }

  RemoteCommandOptions opts_;
  std::shared_ptr<WebSocketConnection> ws_;
  std::shared_ptr<SpdyClientSession> spdy_;
  boost::asio::steady_timer timer_;                                        // on the client's strand
  uint32_t error_ = 0, stdin_ = 0, stdout_ = 0, stderr_ = 0, resize_ = 0;  // set before start
  std::atomic<int> expected_replies_{0};
  std::string status_;  // the kubelet's strand only
  std::atomic<bool> finished_{false};
  std::atomic<Clock::rep> last_{0};
};

}  // namespace

void translateRemoteCommand(std::shared_ptr<http::ByteStream> client,
                            std::shared_ptr<http::ByteStream> kubelet, const RemoteCommandOptions& options) {
  std::make_shared<Translator>(std::move(client), std::move(kubelet), options)->start();
}

}  // namespace shepherd::stream
