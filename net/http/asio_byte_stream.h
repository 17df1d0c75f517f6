// ByteStream over a connection's Transport (plain TCP or TLS). Used by the server to hand
// over an upgraded connection and by the upgrade dialer for its own.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <string>

#include "net/http/byte_stream.h"
#include "net/http/transport.h"

namespace shepherd::http {

// Thread-safety: as ByteStream. The transport must be bound to a strand (or a
// one-threaded executor): every operation on it is posted there.
class AsioByteStream final : public ByteStream, public std::enable_shared_from_this<AsioByteStream> {
 public:
  // `leftover`: bytes already read from the connection past the HTTP message (served first).
  AsioByteStream(std::unique_ptr<Transport> transport, std::string leftover);
  ~AsioByteStream() override;

  void read(char* buf, size_t size, std::function<void(bool, size_t)> done) override;
  void write(std::string data, std::function<void(bool)> done) override;
  void shutdownWrite() override;
  void close() override;
  bool closed() const override { return closed_flag_.load(); }
  size_t pendingWriteBytes() const override { return pending_bytes_.load(); }
  boost::asio::any_io_executor executor() override { return t_->executor(); }

 private:
  struct Pending {
    std::string data;
    std::function<void(bool)> done;
    bool shutdown;
  };
  void closeNow();
  void failQueue();
  void pump();

  std::unique_ptr<Transport> t_;
  std::string leftover_;
  std::deque<Pending> queue_;  // strand only
  bool writing_ = false;
  bool closed_ = false;
  std::atomic<bool> closed_flag_{false};
  std::atomic<size_t> pending_bytes_{0};
};

}  // namespace shepherd::http
