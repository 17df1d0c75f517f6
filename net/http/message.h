// HTTP messages as the API handlers see them, independent of the server library.
#pragma once

#include <any>
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shepherd::http {

class ByteStream;

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method;                                      // GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS
  std::string target;                                      // as sent: /api/v1/pods?watch=1
  std::string path;                                        // percent-decoded path without the query
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  Headers headers;                                         // names lower-cased
  std::string body;
  std::string remote;  // peer address
  // The client certificate of a TLS connection, if one was presented: its subject's
  // common name and organizations, and whether it chains to the client CA.
  struct ClientCertificate {
    bool verified = false;
    std::string error;  // why it did not verify
    std::string common_name;
    std::vector<std::string> organizations;
  };
  std::shared_ptr<const ClientCertificate> client_certificate;  // null: none presented
  bool tls = false;
  // Per-request state of the layer above (the API server keeps the authenticated user
  // here); the HTTP layer never reads it.
  std::any context;

  // Header value by lower-case name ("" if absent; the first one if repeated).
  std::string_view header(std::string_view lower_name) const;
  bool hasQuery(std::string_view key) const;
  std::string_view queryValue(std::string_view key) const;  // "" if absent
  // A boolean query parameter as upstream reads one: absent, "", "0" and "false" (any
  // case) are false; anything else is true.
  bool queryBool(std::string_view key) const;
};

// One piece of a streamed (chunked) response, sent as head + body + data + tail.
// `head` and `tail` point at static storage; `body` is kept alive by `owner` so one
// serialized event can go to many streams without copies; `data` holds owned bytes.
struct Chunk {
  std::string_view head;
  std::shared_ptr<const void> owner;
  std::string_view body;
  std::string_view tail;
  std::string data;
  size_t size() const { return head.size() + body.size() + tail.size() + data.size(); }
  // The bytes in the order they are sent.
  std::array<std::string_view, 4> pieces() const { return {head, body, data, tail}; }
};

struct Response {
  int status = 200;
  Headers headers;
  std::string body;
  // The rest of the body, after `body`, written without being copied into one buffer (a
  // list's items are the watch cache's own JSON strings: tens of megabytes for a big list).
  // Empty for most answers.
  std::vector<Chunk> more_body{};

  void setHeader(std::string name, std::string value);
  size_t bodySize() const;
  // Appends more_body to body (for a responder that needs the body as one string).
  void flattenBody();
};

// A chunked response in progress. Thread-safety: all methods may be called from any
// thread; writes are queued and carried out on the connection's own strand.
class StreamWriter {
 public:
  virtual ~StreamWriter() = default;
  // Queues a chunk; false when the stream has ended (client gone, or too far behind:
  // a slow reader is dropped rather than allowed to hold memory or block producers).
  virtual bool write(Chunk chunk) = 0;
  // Ends the response (the terminating chunk is sent after queued data).
  virtual void finish() = 0;
  virtual bool closed() const = 0;
  // Called once, from the connection's strand, when the stream ends for any reason.
  virtual void onClose(std::function<void()> fn) = 0;
};

// Given to each handler; exactly one of send(), startStream() or upgrade() must be
// called, once, from any thread.
class Responder {
 public:
  virtual ~Responder() = default;
  virtual void send(Response response) = 0;
  virtual std::shared_ptr<StreamWriter> startStream(int status, Headers headers) = 0;
  // Switches protocols: writes `response` (101 with its Upgrade headers) and then hands
  // the raw connection to `on_upgraded`, on the connection's strand; nullptr when the
  // client went away first. The connection no longer carries HTTP afterwards.
  virtual void upgrade(Response response, std::function<void(std::shared_ptr<ByteStream>)> on_upgraded) = 0;
};

// A plain-text answer (as a kubelet gives its errors).
Response plainText(int status, std::string body);

// The non-empty segments of a path: "/api//v1/" -> {"api", "v1"}.
std::vector<std::string> pathSegments(std::string_view path);

}  // namespace shepherd::http
