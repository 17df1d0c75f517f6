// One HTTP/1.1 connection of the server, plain or TLS (its Transport): reads requests,
// hands them to the handler (on the worker pool, or inline), writes answers, chunked
// streams and 101 upgrades. Everything runs on the connection's strand.
#pragma once

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/http/server_internal.h"
#include "net/http/transport.h"

namespace shepherd::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

class Session final : public SessionBase {
 public:
  Session(Server::Impl& srv, std::unique_ptr<Transport> transport);
  ~Session();

  void start();

  // Called on the strand by Server::stop.
  void shutdownNow() override;

  // Kept from the start: an upgrade moves the transport out, and Server::stop may still ask.
  net::any_io_executor executor() override { return executor_; }

  void sendResponse(Response r, bool head);

  std::shared_ptr<StreamWriter> beginStream(int status, Headers headers);

  void beginUpgrade(Response r, std::function<void(std::shared_ptr<ByteStream>)> fn);

  // Strand side of StreamState::schedule.
  void flush() override;

 private:
  std::shared_ptr<Session> self() { return std::static_pointer_cast<Session>(shared_from_this()); }
  beast::tcp_stream& lowest() { return t_->tcp(); }

  // TLS only: the handshake must finish within the header timeout.
  void handshake();

  void readRequest(bool first);

  // Feeds what has been read to the parser until it has the header (Phase::Header) or the
  // whole request (Phase::Body), reading more as needed; then onHeader or onRequest.
  enum class Phase { Header, Body };
  void parse(Phase phase);

  void readMore(Phase phase);

  void onHeader(beast::error_code ec);

  void readSome(net::mutable_buffer into, Transport::ReadHandler fn) { t_->readSome(into, std::move(fn)); }
  void writeAll(std::vector<net::const_buffer> bufs, Transport::DoneHandler fn);

  void onRequest(beast::error_code ec);

  class ResponderImpl final : public Responder {
   public:
    ResponderImpl(std::shared_ptr<Session> s, bool head) : session_(std::move(s)), head_(head) {}
    ~ResponderImpl() override {
      if (!done_.exchange(true))
        session_->writeLater(
            session_->server().errorResponse(500, "InternalError", "the handler did not answer"), head_);
    }
    void send(Response r) override {
      if (done_.exchange(true)) return;
      session_->sendResponse(std::move(r), head_);
    }
    std::shared_ptr<StreamWriter> startStream(int status, Headers headers) override {
      if (done_.exchange(true)) return nullptr;
      return session_->beginStream(status, std::move(headers));
    }
    void upgrade(Response r, std::function<void(std::shared_ptr<ByteStream>)> fn) override {
      if (done_.exchange(true)) return;
      session_->beginUpgrade(std::move(r), std::move(fn));
    }

   private:
    std::shared_ptr<Session> session_;
    bool head_;
    std::atomic<bool> done_{false};
  };

  void writeLater(Response r, bool head) { sendResponse(std::move(r), head); }
  const Server::Impl& server() const { return srv_; }

  void writeResponse(Response r, bool head);

  // The 101 answer, then the connection leaves this session: its stream (and any bytes the
  // client sent after the request) moves into a ByteStream owned by the new protocol.
  void writeUpgrade(Response r, std::function<void(std::shared_ptr<ByteStream>)> fn);

  void afterWrite(beast::error_code ec, bool keep);

  void startStreaming(std::shared_ptr<StreamState> st, int status, Headers headers);

  // While streaming, a read that completes means the client closed (or misbehaves).
  void watchDisconnect();

  // A finished stream ends its connection: the terminating chunk (when the end is
  // orderly), then close. Watch clients reconnect; nothing else is pipelined on them.
  void endStream(bool graceful);

  void failAndClose(int code, const std::string& reason, const std::string& message);

  void close();

  std::unique_ptr<Transport> t_;  // null once an upgrade took the connection
  Server::Impl& srv_;
  net::any_io_executor executor_;  // the connection's strand
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::string remote_;
  std::shared_ptr<const Request::ClientCertificate> client_certificate_;
  bool keep_alive_ = true;
  bool head_ = false;
  bool handling_ = false;
  bool closed_ = false;
  bool writing_ = false;
  std::shared_ptr<StreamState> stream_state_;
  bool header_sent_ = false;
  bool stream_writing_ = false;
  std::vector<Chunk> inflight_;
  std::vector<std::string> sizes_;
};

}  // namespace shepherd::http
