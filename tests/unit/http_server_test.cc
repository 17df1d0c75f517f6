#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <thread>

#include "net/http/server.h"

using namespace shepherd;
using namespace shepherd::http;

namespace {

int connectTo(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

void sendAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// Reads until the peer closes (or `until` appears).
std::string readAll(int fd, const std::string& until = "") {
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (!until.empty() && out.find(until) != std::string::npos) break;
  }
  return out;
}

std::string request(int port, const std::string& raw) {
  int fd = connectTo(port);
  sendAll(fd, raw);
  std::string r = readAll(fd);
  close(fd);
  return r;
}

struct TestServer {
  std::atomic<int> streamsClosed{0};
  std::atomic<int> blocked{0};
  std::atomic<int> laterStarted{0};
  std::condition_variable changed;  // any of the above or lastStream changed (under mu)
  std::promise<void> release_;
  std::shared_future<void> gate = release_.get_future().share();
  std::shared_ptr<StreamWriter> lastStream;
  std::mutex mu;
  Server server;
  int port = 0;
  // Waits (up to 10 s) until `pred` holds; it is checked under mu.
  template <class P>
  bool waitFor(P pred) {
    std::unique_lock<std::mutex> lk(mu);
    return changed.wait_for(lk, std::chrono::seconds(10), pred);
  }
  void bump(std::atomic<int>& counter) {
    std::lock_guard<std::mutex> g(mu);
    ++counter;
    changed.notify_all();
  }
  TestServer(ServerOptions o = {})
      : server(o, [this](Request& req, std::shared_ptr<Responder> resp) { handle(req, resp); }) {
    auto p = server.start();
    EXPECT_TRUE(p.ok());
    port = p.value();
  }
  void handle(Request& req, const std::shared_ptr<Responder>& resp) {
    if (req.path == "/echo") {
      Response r;
      r.headers.emplace_back("Content-Type", "text/plain");
      r.headers.emplace_back("Warning", "299 - \"one\"");
      r.headers.emplace_back("Warning", "299 - \"two\"");
      r.body = req.method + " " + req.path + " q=" + std::string(req.queryValue("q")) + " body=" + req.body;
      return resp->send(r);
    }
    if (req.path == "/later") {
      bump(laterStarted);
      // Answered from a foreign thread, as a group commit would.
      std::thread([resp] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        resp->send(Response{200, {{"Content-Type", "text/plain"}}, "late"});
      }).detach();
      return;
    }
    if (req.path == "/stream") {
      auto w = resp->startStream(200, {{"Content-Type", "application/json"}});
      w->onClose([this] { bump(streamsClosed); });
      {
        std::lock_guard<std::mutex> g(mu);
        lastStream = w;
        changed.notify_all();
      }
      std::thread([w] {
        for (int i = 0; i < 100; ++i) {
          Chunk c;
          c.data = "{\"n\":" + std::to_string(i) + "}\n";
          w->write(std::move(c));
        }
        w->finish();
      }).detach();
      return;
    }
    if (req.path == "/forever") {
      auto w = resp->startStream(200, {{"Content-Type", "application/json"}});
      w->onClose([this] { bump(streamsClosed); });
      std::lock_guard<std::mutex> g(mu);
      lastStream = w;
      changed.notify_all();
      return;
    }
    if (req.path == "/block") {  // holds its worker until release()
      bump(blocked);
      gate.wait();
      return resp->send(Response{200, {{"Content-Type", "text/plain"}}, "released"});
    }
    if (req.path == "/pieces") {  // a body in parts, as a list's items are sent
      Response r;
      r.headers.emplace_back("Content-Type", "application/json");
      r.body = "[";
      auto shared = std::make_shared<const std::string>("\"shared\"");
      for (int i = 0; i < 3000; ++i) {
        Chunk c;
        if (i > 0) c.head = ",";
        c.owner = shared;
        c.body = *shared;
        r.more_body.push_back(std::move(c));
      }
      Chunk end;
      end.data = "]";
      r.more_body.push_back(std::move(end));
      return resp->send(std::move(r));
    }
    if (req.path == "/noanswer") return;  // the server must still answer
    resp->send(Response{404, {}, "nf"});
  }
};

}  // namespace

TEST(HttpServer, ServesRequestsWithQueryBodyAndRepeatedHeaders) {
  TestServer s;
  std::string r = request(
      s.port, "POST /echo?q=a%20b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc");
  EXPECT_NE(r.find("200 OK"), std::string::npos) << r;
  EXPECT_NE(r.find("POST /echo q=a b body=abc"), std::string::npos) << r;
  EXPECT_NE(r.find("Warning: 299 - \"one\""), std::string::npos);
  EXPECT_NE(r.find("Warning: 299 - \"two\""), std::string::npos);
  std::string late = request(s.port, "GET /later HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(late.find("late"), std::string::npos);
  std::string none = request(s.port, "GET /noanswer HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(none.find("500"), std::string::npos) << none;
}

TEST(HttpServer, SendsABodyGivenInPartsWithItsWholeLength) {
  TestServer s;
  std::string expected = "[";
  for (int i = 0; i < 3000; ++i) expected += (i > 0 ? ",\"shared\"" : "\"shared\"");
  expected += "]";
  std::string r = request(s.port, "GET /pieces HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(r.find("Content-Length: " + std::to_string(expected.size()) + "\r\n"), std::string::npos)
      << r.substr(0, 300);
  ASSERT_NE(r.find("\r\n\r\n"), std::string::npos);
  EXPECT_EQ(r.substr(r.find("\r\n\r\n") + 4), expected);
  // HEAD: the same length, no body.
  std::string h = request(s.port, "HEAD /pieces HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(h.find("Content-Length: " + std::to_string(expected.size()) + "\r\n"), std::string::npos) << h;
  EXPECT_EQ(h.substr(h.find("\r\n\r\n") + 4), "");
  // flattenBody gives the same bytes to a responder that needs one string.
  Response flat;
  flat.body = "a";
  Chunk c;
  c.head = "b";
  c.body = "c";
  c.data = "d";
  c.tail = "e";
  flat.more_body.push_back(c);
  EXPECT_EQ(flat.bodySize(), 5u);
  flat.flattenBody();
  EXPECT_EQ(flat.body, "abcde");
  EXPECT_TRUE(flat.more_body.empty());
}

TEST(HttpServer, KeepAliveServesSeveralRequestsOnOneConnection) {
  TestServer s;
  int fd = connectTo(s.port);
  for (int i = 0; i < 3; ++i) {
    sendAll(fd, "GET /echo?q=" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string r = readAll(fd, "q=" + std::to_string(i) + " body=");
    EXPECT_NE(r.find("q=" + std::to_string(i)), std::string::npos);
  }
  close(fd);
}

TEST(HttpServer, LimitsBodiesAndHeaders) {
  // The layer above renders the answers the server gives itself (the API server: Status).
  ServerOptions o;
  o.error_response = [](int code, const std::string& reason, const std::string& message) {
    return Response{
        code, {{"Content-Type", "application/json"}}, "{\"reason\":\"" + reason + "\"}" + message};
  };
  TestServer s(o);
  std::string big =
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(4 * 1024 * 1024) + "\r\n\r\n";
  std::string r = request(s.port, big);
  EXPECT_NE(r.find("413"), std::string::npos) << r;
  EXPECT_NE(r.find("RequestEntityTooLarge"), std::string::npos);
  std::string hdr = "GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(100 * 1024, 'a') + "\r\n\r\n";
  r = request(s.port, hdr);
  EXPECT_NE(r.find("431"), std::string::npos) << r.substr(0, 200);
  r = request(s.port, "BLAH\r\n\r\n");
  EXPECT_NE(r.find("400"), std::string::npos) << r;
  // Still serving.
  r = request(s.port, "GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(r.find("200 OK"), std::string::npos);
}

TEST(HttpServer, ItsOwnErrorAnswersArePlainTextByDefault) {
  TestServer s;
  std::string big =
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(4 * 1024 * 1024) + "\r\n\r\n";
  std::string r = request(s.port, big);
  EXPECT_NE(r.find("413"), std::string::npos) << r;
  EXPECT_NE(r.find("Content-Type: text/plain"), std::string::npos) << r;
  EXPECT_EQ(r.find("RequestEntityTooLarge"), std::string::npos) << r;
}

TEST(HttpServer, StreamsChunksInOrderFromAnotherThread) {
  TestServer s;
  std::string r = request(s.port, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(r.find("Transfer-Encoding: chunked"), std::string::npos);
  size_t pos = 0;
  for (int i = 0; i < 100; ++i) {
    size_t at = r.find("{\"n\":" + std::to_string(i) + "}", pos);
    ASSERT_NE(at, std::string::npos) << i;
    pos = at;
  }
  EXPECT_NE(r.find("\r\n0\r\n\r\n"), std::string::npos);  // terminating chunk
}

TEST(HttpServer, ClientThatVanishesEndsItsStream) {
  TestServer s;
  int fd = connectTo(s.port);
  sendAll(fd, "GET /forever HTTP/1.1\r\nHost: x\r\n\r\n");
  readAll(fd, "\r\n\r\n");
  close(fd);
  // The close can be seen before the handler's thread has kept its writer: wait for both.
  EXPECT_TRUE(s.waitFor([&] { return s.streamsClosed.load() > 0 && s.lastStream != nullptr; }));
  EXPECT_EQ(s.streamsClosed.load(), 1);
  std::lock_guard<std::mutex> g(s.mu);
  ASSERT_TRUE(s.lastStream);
  Chunk c;
  c.data = "x";
  EXPECT_FALSE(s.lastStream->write(std::move(c)));
}

TEST(HttpServer, SlowReaderIsDroppedNotBuffered) {
  ServerOptions o;
  o.max_stream_backlog_bytes = 256 * 1024;
  TestServer s(o);
  int fd = connectTo(s.port);
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sendAll(fd, "GET /forever HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(s.waitFor([&] { return s.lastStream != nullptr; }));
  std::shared_ptr<StreamWriter> w;
  {
    std::lock_guard<std::mutex> g(s.mu);
    w = s.lastStream;
  }
  ASSERT_TRUE(w);
  // The client never reads: writes must start failing instead of growing memory.
  bool refused = false;
  for (int i = 0; i < 100000 && !refused; ++i) {
    Chunk c;
    c.data = std::string(1024, 'x');
    refused = !w->write(std::move(c));
  }
  EXPECT_TRUE(refused);
  close(fd);
}

TEST(HttpServer, StopFinishesInFlightRequests) {
  auto s = std::make_unique<TestServer>();
  int fd = connectTo(s->port);
  sendAll(fd, "GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(s->waitFor([&] { return s->laterStarted.load() > 0; }));  // in flight
  std::thread stopper([&] { s->server.stop(5); });
  std::string r = readAll(fd);
  stopper.join();
  EXPECT_NE(r.find("late"), std::string::npos) << r;
  close(fd);
}

TEST(HttpServer, MaxInFlightAnswers429WithRetryAfterAndExemptsLongRunning) {
  ServerOptions o;
  o.worker_threads = 8;
  o.max_requests_inflight = 2;
  o.max_mutating_requests_inflight = 1;
  o.long_running = [](const Request& r) { return r.path == "/forever"; };
  TestServer s(o);
  auto waitBlocked = [&](int n) {
    s.waitFor([&] { return s.blocked.load() >= n; });
    ASSERT_EQ(s.blocked.load(), n);
  };
  int r1 = connectTo(s.port), r2 = connectTo(s.port), w1 = connectTo(s.port);
  sendAll(r1, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n");
  sendAll(r2, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n");
  waitBlocked(2);
  // Read-only slots are full: the next read is refused at once, as upstream words it.
  std::string refused = request(s.port, "GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(refused.rfind("HTTP/1.1 429", 0), 0u) << refused;
  EXPECT_NE(refused.find("Retry-After: 1\r\n"), std::string::npos) << refused;
  EXPECT_NE(refused.find("\r\n\r\nToo many requests, please try again later.\n"), std::string::npos)
      << refused;
  // Mutating requests have their own budget.
  sendAll(w1, "POST /block HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  waitBlocked(3);
  std::string refusedWrite =
      request(s.port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(refusedWrite.rfind("HTTP/1.1 429", 0), 0u) << refusedWrite;
  // A long-running request is not counted.
  int lr = connectTo(s.port);
  sendAll(lr, "GET /forever HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string head = readAll(lr, "\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
  close(lr);
  // Once the slots free up, requests are served again.
  s.release_.set_value();
  for (int fd : {r1, r2, w1}) {
    EXPECT_NE(readAll(fd, "released").find("released"), std::string::npos);
    close(fd);
  }
  std::string ok;
  for (int i = 0; i < 100; ++i) {  // the slots are given back as the handlers return
    ok = request(s.port, "GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    if (ok.rfind("HTTP/1.1 200", 0) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << ok;
}

TEST(HttpServer, SlowlorisConnectionsAreClosedAfterTheHeaderTimeout) {
  ServerOptions o;
  o.header_timeout_seconds = 1;
  TestServer s(o);
  // Silent, and trickling a header that never ends: both are cut after the timeout,
  // while a well-behaved client is served meanwhile.
  int silent = connectTo(s.port);
  int trickle = connectTo(s.port);
  auto t0 = std::chrono::steady_clock::now();
  sendAll(trickle, "GET /echo HTTP/1.1\r\nHost: x\r\n");
  std::thread dripper([&] {
    for (int i = 0; i < 4; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      sendAll(trickle, "X-Drip: " + std::to_string(i) + "\r\n");
    }
  });
  std::string ok = request(s.port, "GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << ok;
  EXPECT_EQ(readAll(silent), "");  // closed by the server: recv returns 0
  std::string dripped = readAll(trickle);
  auto elapsed = std::chrono::steady_clock::now() - t0;
  dripper.join();
  EXPECT_EQ(dripped.find("200"), std::string::npos) << dripped;  // never served
  EXPECT_LT(elapsed, std::chrono::seconds(5));                   // and not kept open by dripping
  close(silent);
  close(trickle);
}
