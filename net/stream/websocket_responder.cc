#include "net/stream/websocket_responder.h"

#include <algorithm>
#include <deque>
#include <mutex>

#include "common/base64.h"
#include "net/stream/websocket.h"

namespace shepherd::stream {

namespace {

// Queues writes until the connection has switched, then sends them as messages.
// Thread-safety: all methods may be called from any thread (state under mu_).
class WebSocketWriter final : public http::StreamWriter,
                              public std::enable_shared_from_this<WebSocketWriter> {
 public:
  explicit WebSocketWriter(bool base64) : base64_(base64) {}

  void attach(std::shared_ptr<http::ByteStream> stream) {
    if (!stream) return markClosed();  // the client left before the switch
    std::shared_ptr<WebSocketConnection> ws;
    {
      // Under the lock, so that writes racing with the switch keep their order.
      std::lock_guard<std::mutex> g(mu_);
      ws_ = ws = std::make_shared<WebSocketConnection>(stream);
      sendMessageLocked("");  // upstream's first, empty message
      for (auto& m : pending_) sendMessageLocked(std::move(m));
      pending_.clear();
      if (finish_) ws_->sendClose(1000, "");
    }
    ws->start([](bool, std::string) {},
              [weak = weak_from_this()] {
                if (auto self = weak.lock()) self->markClosed();
              });
  }

  bool write(http::Chunk chunk) override {
    std::string data(chunk.head);
    data.append(chunk.body);
    data.append(chunk.data);
    data.append(chunk.tail);
    std::lock_guard<std::mutex> g(mu_);
    if (closed_ || finish_) return false;
    if (ws_ && ws_->pendingWriteBytes() > (16u << 20)) return false;  // too far behind
    for (size_t pos = 0; pos < data.size(); pos += 2048) {
      std::string piece = data.substr(pos, 2048);
      if (ws_)
        sendMessageLocked(std::move(piece));
      else
        pending_.push_back(std::move(piece));
    }
    return true;
  }

  void finish() override {
    std::lock_guard<std::mutex> g(mu_);
    if (finish_) return;
    finish_ = true;
    if (ws_) ws_->sendClose(1000, "");
  }

  bool closed() const override {
    std::lock_guard<std::mutex> g(mu_);
    return closed_;
  }

  void onClose(std::function<void()> fn) override {
    bool now = false;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (closed_)
        now = true;
      else
        on_close_ = std::move(fn);
    }
    if (now && fn) fn();
  }

 private:
  void sendMessageLocked(std::string data) {
    if (base64_)
      ws_->sendText(base64Encode(data));
    else
      ws_->sendBinary(std::move(data));
  }
  void markClosed() {
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> g(mu_);
      closed_ = true;
      fn = std::move(on_close_);
    }
    if (fn) fn();
  }

  const bool base64_;
  mutable std::mutex mu_;
  std::shared_ptr<WebSocketConnection> ws_;
  std::deque<std::string> pending_;
  bool finish_ = false, closed_ = false;
  std::function<void()> on_close_;
};

class WebSocketResponder final : public http::Responder {
 public:
  WebSocketResponder(std::shared_ptr<http::Responder> inner, std::string key, std::string protocol)
      : inner_(std::move(inner)), key_(std::move(key)), protocol_(std::move(protocol)) {}

  void send(http::Response r) override {
    if (r.status >= 300) return inner_->send(std::move(r));
    auto w = startStream(r.status, {});
    if (!w) return;
    r.flattenBody();
    http::Chunk c;
    c.data = std::move(r.body);
    if (!c.data.empty()) w->write(std::move(c));
    w->finish();
  }

  std::shared_ptr<http::StreamWriter> startStream(int, http::Headers) override {
    auto writer = std::make_shared<WebSocketWriter>(protocol_ == "base64.binary.k8s.io");
    http::Response sw = websocketAccept(key_, protocol_);
    if (protocol_.empty())  // the client offered none: answer without one
      sw.headers.erase(std::remove_if(sw.headers.begin(), sw.headers.end(),
                                      [](auto& h) { return h.first == "Sec-WebSocket-Protocol"; }),
                       sw.headers.end());
    inner_->upgrade(std::move(sw),
                    [writer](std::shared_ptr<http::ByteStream> s) { writer->attach(std::move(s)); });
    return writer;
  }

  void upgrade(http::Response r, std::function<void(std::shared_ptr<http::ByteStream>)> fn) override {
    inner_->upgrade(std::move(r), std::move(fn));
  }

 private:
  std::shared_ptr<http::Responder> inner_;
  std::string key_, protocol_;
};

}  // namespace

bool isWebSocketUpgrade(const http::Request& req) {
  std::string up(req.header("upgrade"));
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return std::tolower(c); });
  return up.find("websocket") != std::string::npos;
}

std::shared_ptr<http::Responder> websocketStreamResponder(const http::Request& req,
                                                          std::shared_ptr<http::Responder> inner,
                                                          std::string& error) {
  std::string key(req.header("sec-websocket-key"));
  if (key.empty() || req.header("sec-websocket-version") != "13") {
    error = "invalid WebSocket handshake";
    return nullptr;
  }
  auto offered = offeredSubprotocols(req);
  std::string chosen;
  bool ok = offered.empty();
  for (auto& p : offered)
    if (p == "binary.k8s.io" || p == "base64.binary.k8s.io") {
      chosen = p;
      ok = true;
      break;
    }
  if (!ok) {
    error = "none of the offered WebSocket subprotocols is served here (binary.k8s.io, base64.binary.k8s.io)";
    return nullptr;
  }
  return std::make_shared<WebSocketResponder>(std::move(inner), std::move(key), std::move(chosen));
}

}  // namespace shepherd::stream
