#include "bench/http_load.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <optional>

#include "bench/bench_util.h"

namespace shepherd::bench {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;

namespace {

struct Shared {
  const LoadOptions& opts;
  const RequestFactory& make;
  const AnswerObserver& observe;
  tcp::endpoint endpoint;
  int64_t next = 0;  // only the load thread touches Shared: no locks
  Clock::time_point start;
  Clock::time_point last_answer;
  LoadResult result;
};

bool outOfTime(const Shared& s) {
  return s.opts.max_seconds > 0 && ms(Clock::now() - s.start) > s.opts.max_seconds * 1000;
}

asio::awaitable<void> connectionLoop(Shared& s) {
  auto executor = co_await asio::this_coro::executor;
  std::optional<tcp::socket> sock;
  boost::beast::flat_buffer buffer;
  asio::steady_timer pace(executor);
  for (;;) {
    if (s.next >= s.opts.requests || outOfTime(s)) co_return;
    int64_t i = s.next++;
    if (s.opts.rate > 0) {
      pace.expires_at(s.start + std::chrono::nanoseconds(static_cast<int64_t>(
                                    static_cast<double>(i) * 1e9 / s.opts.rate)));
      co_await pace.async_wait(asio::use_awaitable);
    }
    std::string request = s.make(i);
    try {
      if (!sock) {
        sock.emplace(executor);
        co_await sock->async_connect(s.endpoint, asio::use_awaitable);
        sock->set_option(tcp::no_delay(true));
        buffer.clear();
      }
      auto sent = Clock::now();
      co_await asio::async_write(*sock, asio::buffer(request), asio::use_awaitable);
      http::response_parser<http::string_body> parser;
      parser.body_limit(boost::none);
      co_await http::async_read(*sock, buffer, parser, asio::use_awaitable);
      auto at = Clock::now();
      auto& res = parser.get();
      int status = static_cast<int>(res.result_int());
      s.result.latencies_ms.push_back(ms(at - sent));
      s.result.statuses[status]++;
      s.result.answered++;
      s.result.response_bytes += res.body().size();
      if (s.opts.keep_bodies) s.result.bodies[static_cast<size_t>(i)] = std::move(res.body());
      s.last_answer = at;
      if (s.observe) s.observe(i, status, at);
      if (!res.keep_alive()) sock.reset();
    } catch (const std::exception& e) {
      if (s.result.errors++ < 3 && !s.opts.quiet) std::fprintf(stderr, "load: request %lld: %s\n", static_cast<long long>(i), e.what());
      sock.reset();
    }
  }
}

}  // namespace

LoadResult runLoad(const LoadOptions& opts, const RequestFactory& make, const AnswerObserver& observe) {
  asio::io_context io(1);
  Shared s{opts, make, observe, tcp::endpoint(asio::ip::make_address(opts.host), static_cast<uint16_t>(opts.port)), 0,
           Clock::now(), Clock::now(), {}};
  if (opts.keep_bodies) s.result.bodies.resize(static_cast<size_t>(opts.requests));
  s.result.latencies_ms.reserve(static_cast<size_t>(std::min<int64_t>(opts.requests, 10'000'000)));
  for (int c = 0; c < opts.connections; ++c) asio::co_spawn(io, connectionLoop(s), asio::detached);
  io.run();
  s.result.seconds = ms(s.last_answer - s.start) / 1000;
  return std::move(s.result);
}

double LoadResult::perSecond() const {
  int64_t ok = 0;
  for (auto& [code, n] : statuses)
    if (code >= 200 && code < 300) ok += n;
  return seconds > 0 ? static_cast<double>(ok) / seconds : 0;
}

std::string LoadResult::summary() const {
  char line[256];
  std::snprintf(line, sizeof line, "%8.0f ok/s  p50 %6.2f ms  p99 %6.2f ms  p99.9 %7.2f ms", perSecond(),
                percentile(latencies_ms, 50), percentile(latencies_ms, 99), percentile(latencies_ms, 99.9));
  std::string out = line;
  out += "  (";
  bool first = true;
  for (auto& [code, n] : statuses) {
    out += (first ? "" : ", ") + std::to_string(code) + ": " + std::to_string(n);
    first = false;
  }
  if (errors) out += std::string(first ? "" : ", ") + "errors: " + std::to_string(errors);
  return out + ")";
}

std::string httpGet(const std::string& target, const std::string& accept) {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: " + accept + "\r\nUser-Agent: shepherd-bench\r\n\r\n";
}

std::string httpPost(const std::string& target, const std::string& body, const std::string& content_type) {
  return "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nContent-Type: " + content_type +
         "\r\nUser-Agent: shepherd-bench\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace shepherd::bench
