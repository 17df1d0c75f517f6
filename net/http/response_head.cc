#include "net/http/response_head.h"

#include <boost/beast/http/status.hpp>

namespace shepherd::http {

namespace bhttp = boost::beast::http;

namespace {

char hexDigit(int v) {
  return "0123456789abcdef"[v & 15];
}

}  // namespace

std::string chunkHeader(size_t n) {
  std::string s;
  if (n == 0) s = "0";
  while (n) {
    s.insert(s.begin(), hexDigit(static_cast<int>(n & 15)));
    n >>= 4;
  }
  return s + "\r\n";
}

std::string responseHead(int status, const Headers& headers, bool keep_alive, bool chunked,
                         std::optional<size_t> length) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " ";
  out += std::string_view(bhttp::obsolete_reason(bhttp::int_to_status(static_cast<unsigned>(status))));
  out += "\r\n";
  for (const auto& [k, v] : headers) {
    out += k;
    out += ": ";
    out += v;
    out += "\r\n";
  }
  if (chunked) out += "Transfer-Encoding: chunked\r\n";
  if (length) out += "Content-Length: " + std::to_string(*length) + "\r\n";
  if (!keep_alive) out += "Connection: close\r\n";
  out += "\r\n";
  return out;
}

}  // namespace shepherd::http
