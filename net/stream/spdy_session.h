// The client end of a SPDY/3.1 session over an upgraded connection, enough for the
// streaming protocols: open streams with headers, send data (and FIN), receive data, FIN
// and resets, answer pings, end with GOAWAY. No flow-control windows are kept or asked
// for, as spdystream keeps none (docs/research/streaming-spdy.md §4): TCP is the
// backpressure, and reading can be paused.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "net/http/byte_stream.h"
#include "net/stream/spdy_framer.h"

namespace shepherd::stream {

// Thread-safety: methods may be called from any thread; callbacks run on the
// connection's strand, one at a time.
class SpdyClientSession : public std::enable_shared_from_this<SpdyClientSession> {
 public:
  struct Callbacks {
    std::function<void(uint32_t stream)> on_reply;                   // SYN_REPLY
    std::function<void(uint32_t stream, std::string data)> on_data;  // DATA payload
    std::function<void(uint32_t stream)> on_remote_end;              // FIN or RST_STREAM from the peer
    std::function<void(const std::string& why)> on_end;              // GOAWAY, EOF, error or close()
  };

  explicit SpdyClientSession(std::shared_ptr<http::ByteStream> conn);
  void start(Callbacks callbacks);
  // Sends SYN_STREAM; returns the new stream's id (1, 3, 5, ...).
  uint32_t openStream(const SpdyHeaders& headers);
  // DATA on `stream`, cut into pieces of at most 32 KiB; `fin` half-closes it after.
  void send(uint32_t stream, std::string data, bool fin = false, std::function<void(bool)> done = nullptr);
  void reset(uint32_t stream, uint32_t status = kSpdyRstCancel);
  void setReading(bool on);
  // GOAWAY, then the connection closes.
  void close();
  size_t pendingWriteBytes() const { return conn_->pendingWriteBytes(); }

 private:
  void readMore();
  void handle(SpdyFrame& f);
  void end(const std::string& why);

  std::shared_ptr<http::ByteStream> conn_;
  Callbacks cb_;
  SpdyFrameDecoder decoder_;
  SpdyInflater inflater_;  // strand only
  std::vector<char> buf_;
  std::mutex mu_;  // guards what follows (and the deflater, whose order must be the wire order)
  SpdyDeflater deflater_;
  uint32_t next_id_ = 1;
  bool reading_ = true, read_pending_ = false, ended_ = false;
};

}  // namespace shepherd::stream
