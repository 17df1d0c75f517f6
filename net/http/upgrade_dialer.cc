#include "net/http/upgrade_dialer.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <future>
#include <thread>

#include "net/http/asio_byte_stream.h"
#include "net/http/transport.h"

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

// Request out, answer head in, on the connection's strand; the caller waits on `done`. The
// request is serialized by hand and the answer fed to Beast's parser from plain reads of
// the Transport.
struct Exchange : std::enable_shared_from_this<Exchange> {
  std::unique_ptr<Transport> t;
  const UpgradeRequest& req;
  std::string out;
  beast::flat_buffer buf;
  bhttp::response_parser<bhttp::string_body> parser;
  std::promise<Result<UpgradeResult>> done;

  Exchange(const UpgradeRequest& r, std::unique_ptr<Transport> transport) : t(std::move(transport)), req(r) {}

  void fail(const std::string& what) { done.set_value(unavailable(req, what)); }

  void send() {
    out = req.method + " " + req.target + " HTTP/1.1\r\nHost: " + req.host + ":" + std::to_string(req.port) +
          "\r\n";
    for (auto& [k, v] : req.headers) out += k + ": " + v + "\r\n";
    if (req.method != "GET") out += "Content-Length: 0\r\n";
    out += "\r\n";
    parser.body_limit(64 * 1024);
    t->write({net::buffer(out)}, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->fail("sending the request: " + ec.message());
      self->parse();
    });
  }

  // Until the head is in; a 101 is then finished, anything else also reads its body.
  void parse() {
    beast::error_code ec;
    for (;;) {
      if (parser.is_header_done() && (parser.get().result_int() == 101 || parser.is_done())) break;
      if (buf.size() == 0) return readMore();
      buf.consume(parser.put(buf.data(), ec));
      if (ec == bhttp::error::need_more) return readMore();
      if (ec) break;
    }
    if (ec && !parser.is_header_done()) return fail("reading the answer: " + ec.message());
    finish(parser.get().result_int() == 101);
  }

  void readMore() {
    t->readSome(buf.prepare(16 * 1024), [self = shared_from_this()](beast::error_code ec, size_t n) {
      self->buf.commit(n);
      if (ec == net::error::eof && self->parser.got_some()) {
        ec = {};
        self->parser.put_eof(ec);
        if (!ec) return self->parse();
      }
      if (ec) {
        if (self->parser.is_header_done()) return self->finish(false);  // the body as far as it came
        return self->fail("reading the answer: " + ec.message());
      }
      self->parse();
    });
  }

  void finish(bool upgraded) {
    auto& msg = parser.get();
    UpgradeResult r;
    r.response.status = msg.result_int();
    for (auto& f : msg) r.response.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    t->tcp().expires_never();
    if (upgraded) {
      std::string leftover = beast::buffers_to_string(buf.data());
      r.stream = std::make_shared<AsioByteStream>(std::move(t), std::move(leftover));
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

  beast::tcp_stream conn(strand);
  std::unique_ptr<Transport> transport;
  if (!req.tls) {
    transport = plainTransport(std::move(conn));
  } else {
    transport = tlsTransport(std::move(conn), *req.tls);
    SSL* ssl = transport->nativeTls();
    SSL_set_tlsext_host_name(ssl, req.host.c_str());
    beast::error_code addrEc;
    net::ip::make_address(req.host, addrEc);
    if (!addrEc)
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), req.host.c_str());
    else
      SSL_set1_host(ssl, req.host.c_str());
  }
  auto exchange = std::make_shared<Exchange>(req, std::move(transport));
  auto future = exchange->done.get_future();
  auto& lowest = exchange->t->tcp();
  lowest.expires_after(timeout);
  lowest.async_connect(endpoints, [exchange](beast::error_code ec, const tcp::endpoint&) {
    if (ec) return exchange->fail(ec.message());
    beast::error_code ignored;
    exchange->t->tcp().socket().set_option(tcp::no_delay(true), ignored);
    exchange->t->handshake(false, [exchange](beast::error_code ec) {
      if (ec) return exchange->fail("TLS handshake: " + ec.message());
      exchange->send();
    });
  });
  return future.get();  // every path sets it: the stream's timer bounds each step
}

}  // namespace shepherd::http
