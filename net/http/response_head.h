// The bytes of a response's head and of chunk headers, serialized by hand: only a stream's
// plain read and write operations are instantiated per transport (Beast's composed HTTP
// operations over TLS took minutes to compile).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "net/http/message.h"

namespace shepherd::http {

// The status line and headers; `length` is the Content-Length to send, unless chunked or 101.
std::string responseHead(int status, const Headers& headers, bool keep_alive, bool chunked,
                         std::optional<size_t> length);
// "<hex size>\r\n" before a chunk of `n` bytes.
std::string chunkHeader(size_t n);

}  // namespace shepherd::http
