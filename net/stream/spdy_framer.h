// SPDY/3.1 framing as Kubernetes' streaming uses it (moby/spdystream): control and data
// frames, header blocks compressed with zlib and SPDY/3's dictionary (one deflate and one
// inflate context per connection, never reset, sync-flushed per block). Wire facts are
// collected in docs/research/streaming-spdy.md. There is no SPDY library in Debian.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shepherd::stream {

enum class SpdyType : uint16_t {
  SynStream = 1,
  SynReply = 2,
  RstStream = 3,
  Settings = 4,
  Ping = 6,
  GoAway = 7,
  Headers = 8,
  WindowUpdate = 9,
};

inline constexpr uint8_t kSpdyFlagFin = 0x01;
inline constexpr uint32_t kSpdyRstCancel = 5;
inline constexpr uint32_t kSpdyRstProtocolError = 1;
inline constexpr uint32_t kSpdyRstRefused = 3;

using SpdyHeaders = std::vector<std::pair<std::string, std::string>>;

// SPDY/3's zlib dictionary (1423 bytes).
std::string_view spdyDictionary();

// Header blocks: SPDY/3 layout (32-bit counts and lengths), names lower-cased.
std::string encodeSpdyHeaderBlock(const SpdyHeaders& headers);
std::optional<SpdyHeaders> decodeSpdyHeaderBlock(std::string_view block);

// One direction's compression state. Thread-safety: none (one per connection direction).
class SpdyDeflater {
 public:
  SpdyDeflater();
  ~SpdyDeflater();
  SpdyDeflater(const SpdyDeflater&) = delete;
  SpdyDeflater& operator=(const SpdyDeflater&) = delete;
  std::string compress(std::string_view block);

 private:
  z_stream z_{};
};

class SpdyInflater {
 public:
  SpdyInflater();
  ~SpdyInflater();
  SpdyInflater(const SpdyInflater&) = delete;
  SpdyInflater& operator=(const SpdyInflater&) = delete;
  // The whole compressed block of one frame; nullopt if it is corrupt or oversized.
  std::optional<std::string> decompress(std::string_view data);

 private:
  z_stream z_{};
};

// A decoded frame: for control frames `type` and the payload after the 8-byte header;
// for data frames `stream_id` and the payload.
struct SpdyFrame {
  bool control = false;
  SpdyType type = SpdyType::SynStream;
  uint8_t flags = 0;
  uint32_t stream_id = 0;  // data frames; for control frames read it from the payload
  std::string payload;
};

// Incremental decoder. Errors stop it (the session then ends).
class SpdyFrameDecoder {
 public:
  explicit SpdyFrameDecoder(size_t max_frame = 16 << 20) : max_(max_frame) {}
  void feed(const char* data, size_t n) { buf_.append(data, n); }
  enum class Result { Frame, NeedMore, Error };
  Result next(SpdyFrame& out);
  const std::string& error() const { return error_; }

 private:
  size_t max_;
  std::string buf_;
  size_t pos_ = 0;
  std::string error_;
};

uint32_t readU32(std::string_view s, size_t at);

// Follows the frames of one direction of a relayed SPDY session without keeping them:
// feed() says whether the bytes held any frame but a PING, so keep-alive pings (kubectl
// sends one every 5 s) do not keep an idle session open.
// Thread-safety: none (one per direction).
class SpdyActivityMeter {
 public:
  bool feed(std::string_view bytes);

 private:
  char head_[8];
  size_t head_len_ = 0;
  size_t skip_ = 0;  // body bytes of the current frame still to pass
};

// A new meter as http::RelayOptions::activity_meter wants one.
std::function<bool(std::string_view)> spdyActivityMeter();

// Encoders. `block` arguments are already compressed.
std::string spdySynStream(uint32_t id, std::string_view block, uint8_t flags = 0);
std::string spdySynReply(uint32_t id, std::string_view block, uint8_t flags = 0);
std::string spdyData(uint32_t id, std::string_view data, uint8_t flags = 0);
std::string spdyRstStream(uint32_t id, uint32_t status);
std::string spdyPing(uint32_t id);
std::string spdyGoAway(uint32_t last_good, uint32_t status);

}  // namespace shepherd::stream
