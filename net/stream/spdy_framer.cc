#include "net/stream/spdy_framer.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace shepherd::stream {

namespace {

// SPDY/3's header dictionary, byte for byte (SHA-256 51d27341...07f02; see
// docs/research/streaming-spdy.md for where it was read and how it was checked).
const char kDictionary[] =
    "\000\000\000\007options\000\000\000\004head\000\000\000\004post\000\000"
    "\000\003put\000\000\000\006delete\000\000\000\005trace\000\000\000\006ac"
    "cept\000\000\000\016accept-charset\000\000\000\017accept-encoding\000"
    "\000\000\017accept-language\000\000\000\015accept-ranges\000\000\000\003"
    "age\000\000\000\005allow\000\000\000\015authorization\000\000\000\015cac"
    "he-control\000\000\000\012connection\000\000\000\014content-base\000\000"
    "\000\020content-encoding\000\000\000\020content-language\000\000\000\016"
    "content-length\000\000\000\020content-location\000\000\000\013content-md"
    "5\000\000\000\015content-range\000\000\000\014content-type\000\000\000"
    "\004date\000\000\000\004etag\000\000\000\006expect\000\000\000\007expire"
    "s\000\000\000\004from\000\000\000\004host\000\000\000\010if-match\000"
    "\000\000\021if-modified-since\000\000\000\015if-none-match\000\000\000"
    "\010if-range\000\000\000\023if-unmodified-since\000\000\000\015last-modi"
    "fied\000\000\000\010location\000\000\000\014max-forwards\000\000\000\006"
    "pragma\000\000\000\022proxy-authenticate\000\000\000\023proxy-authorizat"
    "ion\000\000\000\005range\000\000\000\007referer\000\000\000\013retry-aft"
    "er\000\000\000\006server\000\000\000\002te\000\000\000\007trailer\000"
    "\000\000\021transfer-encoding\000\000\000\007upgrade\000\000\000\012user"
    "-agent\000\000\000\004vary\000\000\000\003via\000\000\000\007warning\000"
    "\000\000\020www-authenticate\000\000\000\006method\000\000\000\003get"
    "\000\000\000\006status\000\000\000\006200 OK\000\000\000\007version\000"
    "\000\000\010HTTP/1.1\000\000\000\003url\000\000\000\006public\000\000"
    "\000\012set-cookie\000\000\000\012keep-alive\000\000\000\006origin100101"
    "201202205206300302303304305306307402405406407408409410411412413414415416"
    "417502504505203 Non-Authoritative Information204 No Content301 Moved Per"
    "manently400 Bad Request401 Unauthorized403 Forbidden404 Not Found500 Int"
    "ernal Server Error501 Not Implemented503 Service UnavailableJan Feb Mar "
    "Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, S"
    "at, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,application/"
    "xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-ag"
    "e=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.";

void putU32(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v >> 24));
  out.push_back(static_cast<char>(v >> 16));
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}

std::string controlFrame(SpdyType type, uint8_t flags, std::string_view payload) {
  std::string out;
  out.reserve(8 + payload.size());
  out.push_back(static_cast<char>(0x80));
  out.push_back(3);  // version 3
  uint16_t t = static_cast<uint16_t>(type);
  out.push_back(static_cast<char>(t >> 8));
  out.push_back(static_cast<char>(t));
  size_t n = payload.size();
  out.push_back(static_cast<char>(flags));
  out.push_back(static_cast<char>(n >> 16));
  out.push_back(static_cast<char>(n >> 8));
  out.push_back(static_cast<char>(n));
  out.append(payload);
  return out;
}

constexpr size_t kMaxHeaderBlock = 1 << 20;

}  // namespace

std::string_view spdyDictionary() {
  return std::string_view(kDictionary, sizeof(kDictionary) - 1);
}

uint32_t readU32(std::string_view s, size_t at) {
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(s[at + i])); };
  return (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
}

std::string encodeSpdyHeaderBlock(const SpdyHeaders& headers) {
  std::string out;
  putU32(out, static_cast<uint32_t>(headers.size()));
  for (auto& [k, v] : headers) {
    std::string name = k;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    putU32(out, static_cast<uint32_t>(name.size()));
    out += name;
    putU32(out, static_cast<uint32_t>(v.size()));
    out += v;
  }
  return out;
}

std::optional<SpdyHeaders> decodeSpdyHeaderBlock(std::string_view block) {
  if (block.size() < 4) return std::nullopt;
  uint32_t count = readU32(block, 0);
  size_t pos = 4;
  SpdyHeaders out;
  for (uint32_t i = 0; i < count; ++i) {
    std::string parts[2];
    for (auto& part : parts) {
      if (block.size() - pos < 4) return std::nullopt;
      uint32_t n = readU32(block, pos);
      pos += 4;
      if (block.size() - pos < n) return std::nullopt;
      part.assign(block.substr(pos, n));
      pos += n;
    }
    out.emplace_back(std::move(parts[0]), std::move(parts[1]));
  }
  return out;
}

SpdyDeflater::SpdyDeflater() {
  deflateInit2(&z_, Z_BEST_COMPRESSION, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY);
  deflateSetDictionary(&z_, reinterpret_cast<const Bytef*>(kDictionary), sizeof(kDictionary) - 1);
}

SpdyDeflater::~SpdyDeflater() {
  deflateEnd(&z_);
}

std::string SpdyDeflater::compress(std::string_view block) {
  std::string out;
  z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(block.data()));
  z_.avail_in = static_cast<uInt>(block.size());
  char buf[4096];
  do {
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = sizeof buf;
    deflate(&z_, Z_SYNC_FLUSH);
    out.append(buf, sizeof buf - z_.avail_out);
  } while (z_.avail_out == 0);
  return out;
}

SpdyInflater::SpdyInflater() {
  inflateInit(&z_);
}

SpdyInflater::~SpdyInflater() {
  inflateEnd(&z_);
}

std::optional<std::string> SpdyInflater::decompress(std::string_view data) {
  std::string out;
  z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z_.avail_in = static_cast<uInt>(data.size());
  char buf[4096];
  while (z_.avail_in > 0) {
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = sizeof buf;
    int rc = inflate(&z_, Z_SYNC_FLUSH);
    if (rc == Z_NEED_DICT) {
      if (inflateSetDictionary(&z_, reinterpret_cast<const Bytef*>(kDictionary), sizeof(kDictionary) - 1) !=
          Z_OK)
        return std::nullopt;
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) return std::nullopt;
    out.append(buf, sizeof buf - z_.avail_out);
    if (out.size() > kMaxHeaderBlock) return std::nullopt;
    if (rc == Z_BUF_ERROR && z_.avail_out != 0) return std::nullopt;  // no progress
  }
  // Output still buffered inside zlib (a block longer than one buffer).
  for (;;) {
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = sizeof buf;
    int rc = inflate(&z_, Z_SYNC_FLUSH);
    size_t got = sizeof buf - z_.avail_out;
    out.append(buf, got);
    if (out.size() > kMaxHeaderBlock) return std::nullopt;
    if (got == 0 || (rc != Z_OK && rc != Z_BUF_ERROR)) break;
  }
  return out;
}

SpdyFrameDecoder::Result SpdyFrameDecoder::next(SpdyFrame& out) {
  if (!error_.empty()) return Result::Error;
  if (pos_ > 0 && pos_ >= buf_.size() / 2) {  // keep the buffer from growing without bound
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  std::string_view b(buf_);
  b.remove_prefix(pos_);
  if (b.size() < 8) return Result::NeedMore;
  uint8_t b0 = static_cast<uint8_t>(b[0]);
  size_t len = (static_cast<size_t>(static_cast<uint8_t>(b[5])) << 16) |
               (static_cast<size_t>(static_cast<uint8_t>(b[6])) << 8) | static_cast<uint8_t>(b[7]);
  if (len > max_) {
    error_ = "frame of " + std::to_string(len) + " bytes is over the limit";
    return Result::Error;
  }
  if (b.size() < 8 + len) return Result::NeedMore;
  out.control = b0 & 0x80;
  out.flags = static_cast<uint8_t>(b[4]);
  if (out.control) {
    uint16_t type = static_cast<uint16_t>((static_cast<uint8_t>(b[2]) << 8) | static_cast<uint8_t>(b[3]));
    out.type = static_cast<SpdyType>(type);
    out.stream_id = 0;
  } else {
    out.stream_id = readU32(b, 0) & 0x7fffffff;
  }
  out.payload.assign(b.substr(8, len));
  pos_ += 8 + len;
  return Result::Frame;
}

bool SpdyActivityMeter::feed(std::string_view bytes) {
  bool active = false;
  while (!bytes.empty()) {
    if (skip_ > 0) {
      size_t n = std::min(skip_, bytes.size());
      skip_ -= n;
      bytes.remove_prefix(n);
      continue;
    }
    size_t n = std::min(sizeof head_ - head_len_, bytes.size());
    std::memcpy(head_ + head_len_, bytes.data(), n);
    head_len_ += n;
    bytes.remove_prefix(n);
    if (head_len_ < sizeof head_) break;
    head_len_ = 0;
    auto u = [&](int i) { return static_cast<uint8_t>(head_[i]); };
    bool control = u(0) & 0x80;
    uint16_t type = static_cast<uint16_t>((u(2) << 8) | u(3));
    if (!control || type != static_cast<uint16_t>(SpdyType::Ping)) active = true;
    skip_ = (static_cast<size_t>(u(5)) << 16) | (static_cast<size_t>(u(6)) << 8) | u(7);
  }
  return active;
}

std::function<bool(std::string_view)> spdyActivityMeter() {
  auto meter = std::make_shared<SpdyActivityMeter>();
  return [meter](std::string_view bytes) { return meter->feed(bytes); };
}

std::string spdySynStream(uint32_t id, std::string_view block, uint8_t flags) {
  std::string p;
  putU32(p, id & 0x7fffffff);
  putU32(p, 0);    // associated-to
  p.push_back(0);  // priority 0 (data must never overtake its SYN_STREAM)
  p.push_back(0);  // slot
  p.append(block);
  return controlFrame(SpdyType::SynStream, flags, p);
}

std::string spdySynReply(uint32_t id, std::string_view block, uint8_t flags) {
  std::string p;
  putU32(p, id & 0x7fffffff);
  p.append(block);
  return controlFrame(SpdyType::SynReply, flags, p);
}

std::string spdyData(uint32_t id, std::string_view data, uint8_t flags) {
  std::string out;
  out.reserve(8 + data.size());
  putU32(out, id & 0x7fffffff);
  size_t n = data.size();
  out.push_back(static_cast<char>(flags));
  out.push_back(static_cast<char>(n >> 16));
  out.push_back(static_cast<char>(n >> 8));
  out.push_back(static_cast<char>(n));
  out.append(data);
  return out;
}

std::string spdyRstStream(uint32_t id, uint32_t status) {
  std::string p;
  putU32(p, id & 0x7fffffff);
  putU32(p, status);
  return controlFrame(SpdyType::RstStream, 0, p);
}

std::string spdyPing(uint32_t id) {
  std::string p;
  putU32(p, id);
  return controlFrame(SpdyType::Ping, 0, p);
}

std::string spdyGoAway(uint32_t last_good, uint32_t status) {
  std::string p;
  putU32(p, last_good & 0x7fffffff);
  putU32(p, status);
  return controlFrame(SpdyType::GoAway, 0, p);
}

}  // namespace shepherd::stream
