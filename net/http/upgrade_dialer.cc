#include "net/http/upgrade_dialer.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <future>
#include <thread>

#include "net/http/asio_byte_stream.h"

namespace shepherd::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// The I/O threads of dialled streaming connections, shared by the whole process. They
// only move bytes (no handler blocks on them), so two are enough. Never destroyed, work
// guard included: the threads run until the process is gone. (A static guard was
// destroyed by exit(); the threads then finished, freeing their OpenSSL thread state,
// while exit() ran OpenSSL's clean-up, which LeakSanitizer reported now and then. See
// tests/unit/dial_exit_probe.cc.)
struct DialPool {
  net::io_context io;
  net::executor_work_guard<net::io_context::executor_type> keep_running{io.get_executor()};
};

net::io_context& dialIo() {
  static DialPool* pool = [] {
    auto* p = new DialPool();
    for (int i = 0; i < 2; ++i) std::thread([p] { p->io.run(); }).detach();
    return p;
  }();
  return pool->io;
}

ApiError unavailable(const UpgradeRequest& r, const std::string& what) {
  return ApiError::make(503, "ServiceUnavailable",
                        "cannot reach " + r.host + ":" + std::to_string(r.port) + ": " + what);
}

// Request out, answer head in, on the connection's strand; the caller waits on `done`.
template <class Stream>
struct Exchange : std::enable_shared_from_this<Exchange<Stream>> {
  Stream stream;
  const UpgradeRequest& req;
  bhttp::request<bhttp::empty_body> out;
  beast::flat_buffer buf;
  bhttp::response_parser<bhttp::string_body> parser;
  std::promise<Result<UpgradeResult>> done;

  template <class... A>
  Exchange(const UpgradeRequest& r, A&&... a) : stream(std::forward<A>(a)...), req(r) {}

  void fail(const std::string& what) { done.set_value(unavailable(req, what)); }

  void send() {
    out = bhttp::request<bhttp::empty_body>(req.method == "GET" ? bhttp::verb::get : bhttp::verb::post,
                                            req.target, 11);
    out.set(bhttp::field::host, req.host + ":" + std::to_string(req.port));
    for (auto& [k, v] : req.headers) out.insert(k, v);
    if (req.method != "GET") out.content_length(0);
    bhttp::async_write(stream, out, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->fail("sending the request: " + ec.message());
      self->parser.body_limit(64 * 1024);
      bhttp::async_read_header(self->stream, self->buf, self->parser,
                               [self](beast::error_code ec, size_t) { self->onHeader(ec); });
    });
  }

  void onHeader(beast::error_code ec) {
    if (ec) return fail("reading the answer: " + ec.message());
    auto& head = parser.get();
    if (head.result_int() != 101) {
      bhttp::async_read(stream, buf, parser, [self = this->shared_from_this()](beast::error_code, size_t) {
        self->finish(false);
      });
      return;
    }
    finish(true);
  }

  void finish(bool upgraded) {
    auto& msg = parser.get();
    UpgradeResult r;
    r.response.status = msg.result_int();
    for (auto& f : msg) r.response.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    beast::get_lowest_layer(stream).expires_never();
    if (upgraded) {
      std::string leftover = beast::buffers_to_string(buf.data());
      r.stream = std::make_shared<AsioByteStream<Stream>>(std::move(stream), std::move(leftover));
    } else {
      r.response.body = msg.body();
    }
    done.set_value(std::move(r));
  }
};

}  // namespace

bool splitUrl(const std::string& url, bool& https, std::string& host, int& port, std::string& target) {
  std::string rest;
  if (url.rfind("http://", 0) == 0) {
    https = false;
    rest = url.substr(7);
  } else if (url.rfind("https://", 0) == 0) {
    https = true;
    rest = url.substr(8);
  } else {
    return false;
  }
  auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  target = slash == std::string::npos ? "/" : rest.substr(slash);
  size_t colon = authority.rfind(':');
  if (!authority.empty() && authority[0] == '[') {  // [v6]:port
    auto close = authority.find(']');
    if (close == std::string::npos) return false;
    host = authority.substr(1, close - 1);
    colon = authority.find(':', close);
  } else {
    host = authority.substr(0, colon);
  }
  port = https ? 443 : 80;
  if (colon != std::string::npos) {
    try {
      port = std::stoi(authority.substr(colon + 1));
    } catch (...) {
      return false;
    }
  }
  return !host.empty() && port > 0 && port < 65536;
}

Result<UpgradeResult> dialUpgrade(const UpgradeRequest& req) {
  auto strand = net::make_strand(dialIo());
  beast::error_code ec;
  tcp::resolver resolver(dialIo());
  auto endpoints = resolver.resolve(req.host, std::to_string(req.port), ec);
  if (ec) return unavailable(req, ec.message());
  auto timeout = std::chrono::seconds(req.timeout_seconds);

  auto run = [&](auto exchange) -> Result<UpgradeResult> {
    auto future = exchange->done.get_future();
    auto& lowest = beast::get_lowest_layer(exchange->stream);
    lowest.expires_after(timeout);
    lowest.async_connect(endpoints, [exchange](beast::error_code ec, const tcp::endpoint&) {
      if (ec) return exchange->fail(ec.message());
      beast::error_code ignored;
      beast::get_lowest_layer(exchange->stream).socket().set_option(tcp::no_delay(true), ignored);
      using S = std::decay_t<decltype(exchange->stream)>;
      if constexpr (std::is_same_v<S, beast::tcp_stream>) {
        exchange->send();
      } else {
        exchange->stream.async_handshake(net::ssl::stream_base::client, [exchange](beast::error_code ec) {
          if (ec) return exchange->fail("TLS handshake: " + ec.message());
          exchange->send();
        });
      }
    });
    return future.get();  // every path sets it: the stream's timer bounds each step
  };

  if (!req.tls) return run(std::make_shared<Exchange<beast::tcp_stream>>(req, strand));
  auto ex = std::make_shared<Exchange<beast::ssl_stream<beast::tcp_stream>>>(req, strand, *req.tls);
  SSL* ssl = ex->stream.native_handle();
  SSL_set_tlsext_host_name(ssl, req.host.c_str());
  beast::error_code addrEc;
  net::ip::make_address(req.host, addrEc);
  if (!addrEc)
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), req.host.c_str());
  else
    SSL_set1_host(ssl, req.host.c_str());
  return run(ex);
}

}  // namespace shepherd::http
