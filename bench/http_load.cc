#include "bench/http_load.h"

#include <boost/asio.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <curl/curl.h>

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
  std::vector<char> scratch(256 * 1024);
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
      // The body streams through a fixed scratch buffer (a 50 MB LIST must not cost the
      // client more than the server); it is kept only when asked.
      http::response_parser<http::buffer_body> parser;
      parser.body_limit(boost::none);
      co_await http::async_read_header(*sock, buffer, parser, asio::use_awaitable);
      std::string body;
      uint64_t body_bytes = 0;
      while (!parser.is_done()) {
        parser.get().body().data = scratch.data();
        parser.get().body().size = scratch.size();
        auto [ec, n] = co_await http::async_read(*sock, buffer, parser, asio::as_tuple(asio::use_awaitable));
        (void)n;
        if (ec && ec != http::error::need_buffer) throw boost::system::system_error(ec);
        size_t got = scratch.size() - parser.get().body().size;
        body_bytes += got;
        if (s.opts.keep_bodies) body.append(scratch.data(), got);
      }
      auto at = Clock::now();
      auto& res = parser.get();
      int status = static_cast<int>(res.result_int());
      s.result.latencies_ms.push_back(ms(at - sent));
      s.result.statuses[status]++;
      s.result.answered++;
      s.result.response_bytes += body_bytes;
      if (s.opts.keep_bodies) s.result.bodies[static_cast<size_t>(i)] = std::move(body);
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

LoadResult sequentialGets(int port, const std::string& target, const std::string& accept, int count) {
  LoadResult result;
  CURL* curl = curl_easy_init();
  if (!curl) {
    result.errors = count;
    return result;
  }
  std::string url = "http://127.0.0.1:" + std::to_string(port) + target;
  curl_slist* headers = curl_slist_append(nullptr, ("Accept: " + accept).c_str());
  uint64_t bytes = 0;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "shepherd-bench");
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &bytes);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, +[](char*, size_t size, size_t n, void* counter) {
    *static_cast<uint64_t*>(counter) += size * n;
    return size * n;
  });
  auto start = Clock::now();
  for (int i = 0; i < count; ++i) {
    bytes = 0;
    auto sent = Clock::now();
    CURLcode rc = curl_easy_perform(curl);
    auto at = Clock::now();
    if (rc != CURLE_OK) {
      result.errors++;
      continue;
    }
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    result.latencies_ms.push_back(ms(at - sent));
    result.statuses[static_cast<int>(status)]++;
    result.answered++;
    result.response_bytes += bytes;
    result.seconds = ms(at - start) / 1000;
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return result;
}

std::string httpGet(const std::string& target, const std::string& accept) {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: " + accept + "\r\nUser-Agent: shepherd-bench\r\n\r\n";
}

std::string httpPost(const std::string& target, const std::string& body, const std::string& content_type) {
  return "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nContent-Type: " + content_type +
         "\r\nUser-Agent: shepherd-bench\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace shepherd::bench
