// Watch stress test (API machinery acceptance): W watch clients connect, read for a
// random while, drop the connection abruptly (RST) and reconnect from the last revision
// they saw, while a writer drives R writes/s for D seconds. Every connection must see
// every event after its starting revision, in revision order, with no gaps; the server
// must keep answering /healthz and must not die.
//
// Usage: watch_stress <path-to-shepherd-apiserver> [seconds=120] [watchers=200] [writes_per_s=500]
// Exit status 0 only if every check held. Talks only to 127.0.0.1.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
int g_port = 0;

int dial() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(g_port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool sendAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// One request on a fresh connection; returns status code and body (Content-Length only).
int request(const std::string& method, const std::string& path, const std::string& body, std::string* out,
            int timeout_ms = 10000) {
  int fd = dial();
  if (fd < 0) return -1;
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (!body.empty())
    req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  if (!sendAll(fd, req)) {
    close(fd);
    return -1;
  }
  std::string resp;
  char buf[16384];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) resp.append(buf, static_cast<size_t>(n));
  close(fd);
  if (resp.size() < 12) return -1;
  int code = std::atoi(resp.c_str() + 9);
  if (out) {
    auto p = resp.find("\r\n\r\n");
    *out = p == std::string::npos ? "" : resp.substr(p + 4);
  }
  return code;
}

// A keep-alive connection for a writer: one request at a time, Content-Length bodies.
class Conn {
 public:
  ~Conn() { reset(); }
  int request(const std::string& method, const std::string& path, const std::string& body) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (fd_ < 0) {
        fd_ = dial();
        if (fd_ < 0) return -1;
        timeval tv{10, 0};
        setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      }
      std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
      if (!body.empty())
        req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
      req += "\r\n" + body;
      if (!sendAll(fd_, req)) {
        reset();
        continue;
      }
      std::string resp;
      char buf[16384];
      size_t need = std::string::npos;
      while (true) {
        ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n <= 0) break;
        resp.append(buf, static_cast<size_t>(n));
        auto h = resp.find("\r\n\r\n");
        if (h == std::string::npos) continue;
        if (need == std::string::npos) {
          auto cl = resp.find("Content-Length: ");
          if (cl == std::string::npos || cl > h) cl = resp.find("content-length: ");
          need = h + 4 +
                 (cl != std::string::npos && cl < h ? std::strtoul(resp.c_str() + cl + 16, nullptr, 10) : 0);
        }
        if (resp.size() >= need) break;
      }
      if (resp.size() < 12 || need == std::string::npos || resp.size() < need) {
        reset();
        if (attempt == 0 && resp.empty()) continue;  // the server closed an idle connection
        return -1;
      }
      if (resp.find("Connection: close") != std::string::npos) reset();
      return std::atoi(resp.c_str() + 9);
    }
    return -1;
  }

 private:
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
};

long long extractRv(const std::string& s, size_t from = 0) {
  auto p = s.find("\"resourceVersion\":\"", from);
  if (p == std::string::npos) return -1;
  return std::atoll(s.c_str() + p + 19);
}

struct Stats {
  std::atomic<long long> events{0}, connections{0}, gaps{0}, order{0}, errors{0}, expired{0};
  std::atomic<long long> writes{0}, write_failures{0}, health_failures{0};
  std::atomic<long long> max_write_ms{0}, max_health_ms{0};
  std::mutex mu;
  std::string first_problem;
  void problem(const std::string& p) {
    std::lock_guard<std::mutex> g(mu);
    if (first_problem.empty()) first_problem = p;
  }
};

void noteMax(std::atomic<long long>& m, long long v) {
  long long cur = m.load();
  while (v > cur && !m.compare_exchange_weak(cur, v)) {
  }
}

// Reads one watch connection for up to `for_ms`, checking consecutive revisions.
void watchOnce(long long& last, int for_ms, Stats& st, int id) {
  int fd = dial();
  if (fd < 0) {
    st.errors++;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return;
  }
  st.connections++;
  timeval tv{0, 200 * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string req =
      "GET /api/v1/namespaces/stress/configmaps?watch=true&resourceVersion=" + std::to_string(last) +
      " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  sendAll(fd, req);
  std::string buf, lines;
  bool headerDone = false;
  size_t chunkLeft = 0;
  bool inChunk = false;
  auto deadline = Clock::now() + std::chrono::milliseconds(for_ms);
  char tmp[65536];
  while (Clock::now() < deadline) {
    ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n == 0) break;  // server ended the watch (e.g. timeout): reconnect
    if (n < 0) continue;
    buf.append(tmp, static_cast<size_t>(n));
    if (!headerDone) {
      auto p = buf.find("\r\n\r\n");
      if (p == std::string::npos) continue;
      if (buf.compare(9, 3, "200") != 0) {
        st.errors++;
        st.problem("watcher " + std::to_string(id) + ": " + buf.substr(0, 40));
        break;
      }
      headerDone = true;
      buf.erase(0, p + 4);
    }
    // De-chunk into `lines` (offsets, one erase per read: the client must stay cheap).
    size_t pos = 0;
    while (true) {
      if (!inChunk) {
        auto p = buf.find("\r\n", pos);
        if (p == std::string::npos) break;
        chunkLeft = std::strtoul(buf.c_str() + pos, nullptr, 16);
        pos = p + 2;
        inChunk = true;
      }
      if (buf.size() - pos < chunkLeft + 2) break;
      lines.append(buf, pos, chunkLeft);
      pos += chunkLeft + 2;
      inChunk = false;
    }
    buf.erase(0, pos);
    size_t start = 0, nl;
    while ((nl = lines.find('\n', start)) != std::string::npos) {
      std::string_view line(lines.data() + start, nl - start);
      start = nl + 1;
      if (line.rfind("{\"type\":\"BOOKMARK\"", 0) == 0) continue;
      if (line.rfind("{\"type\":\"ERROR\"", 0) == 0) {
        if (line.find("\"code\":410") != std::string_view::npos)
          st.expired++;
        else
          st.errors++;
        st.problem("watcher " + std::to_string(id) + " got " + std::string(line.substr(0, 200)));
        close(fd);
        return;
      }
      auto rp = line.find("\"resourceVersion\":\"");
      long long rv = rp == std::string_view::npos ? -1 : std::atoll(line.data() + rp + 19);
      st.events++;
      if (rv <= last) {
        st.order++;
        st.problem("watcher " + std::to_string(id) + ": revision " + std::to_string(rv) + " after " +
                   std::to_string(last));
      } else if (rv != last + 1) {
        st.gaps++;
        st.problem("watcher " + std::to_string(id) + ": gap " + std::to_string(last) + " -> " +
                   std::to_string(rv));
      }
      if (rv > last) last = rv;
    }
    lines.erase(0, start);
  }
  // Abrupt disconnect: RST instead of FIN.
  linger lg{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SHEPHERD_APISERVER [seconds] [watchers] [writes_per_s]\n", argv[0]);
    return 2;
  }
  std::string bin = argv[1];
  int seconds = argc > 2 ? std::atoi(argv[2]) : 120;
  int watchers = argc > 3 ? std::atoi(argv[3]) : 200;
  int rate = argc > 4 ? std::atoi(argv[4]) : 500;
  signal(SIGPIPE, SIG_IGN);

  char tmpl[] = "/tmp/shepherd-stress-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string portFile = dir + "/port";
  pid_t server = fork();
  if (server == 0) {
    std::string log = dir + "/server.log";
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    execl(bin.c_str(), bin.c_str(), ("--data-dir=" + dir + "/data").c_str(), "--port=0", "--plain-http", "--authorization-mode=AlwaysAllow",
          ("--port-file=" + portFile).c_str(), "--watch-cache-size=50000", static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 300 && g_port == 0; ++i) {
    std::ifstream in(portFile);
    in >> g_port;
    if (!g_port) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto cleanup = [&] {
    kill(server, SIGTERM);
    int status = 0;
    for (int i = 0; i < 200; ++i) {
      if (waitpid(server, &status, WNOHANG) == server) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (i == 199) {
        kill(server, SIGKILL);
        waitpid(server, &status, 0);
      }
    }
    return status;
  };
  if (!g_port || request("GET", "/readyz", "", nullptr) != 200) {
    std::fprintf(stderr, "server did not start\n");
    cleanup();
    return 1;
  }
  request("POST", "/api/v1/namespaces",
          R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"stress"}})", nullptr);
  std::string listBody;
  request("GET", "/api/v1/namespaces/stress/configmaps", "", &listBody);
  long long startRv = extractRv(listBody);

  Stats st;
  std::atomic<bool> stop{false};
  auto end = Clock::now() + std::chrono::seconds(seconds);

  // Writers: creates, updates and deletes of 200 configmaps at the target rate.
  std::vector<std::thread> writers;
  int writerThreads = 32;
  for (int w = 0; w < writerThreads; ++w)
    writers.emplace_back([&, w] {
      std::mt19937 rng(w);
      Conn conn;
      double perThread = static_cast<double>(rate) / writerThreads;
      auto next = Clock::now();
      long long i = 0;
      while (!stop.load()) {
        next += std::chrono::microseconds(static_cast<long long>(1e6 / perThread));
        std::string name = "cm-" + std::to_string(w) + "-" + std::to_string(rng() % 12);
        int op = static_cast<int>(rng() % 3);
        auto t0 = Clock::now();
        int code;
        if (op == 2) {
          code = conn.request("DELETE", "/api/v1/namespaces/stress/configmaps/" + name, "");
          if (code == 404) code = 200;
        } else {
          std::string body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
                             R"("},"data":{"i":")" + std::to_string(++i) + R"("}})";
          code = conn.request("PUT", "/api/v1/namespaces/stress/configmaps/" + name, body);
          if (code == 404) code = conn.request("POST", "/api/v1/namespaces/stress/configmaps", body);
          if (code == 409) code = 200;  // raced with another op on the same name
        }
        noteMax(st.max_write_ms,
                std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count());
        if (code >= 200 && code < 300)
          st.writes++;
        else
          st.write_failures++;
        std::this_thread::sleep_until(next);
      }
    });

  // Watchers.
  std::vector<std::thread> ws;
  for (int id = 0; id < watchers; ++id)
    ws.emplace_back([&, id] {
      std::mt19937 rng(1000 + id);
      long long last = startRv;
      while (!stop.load()) watchOnce(last, 50 + static_cast<int>(rng() % 3000), st, id);
    });

  // Health probe: the server must keep answering.
  std::thread health([&] {
    while (!stop.load()) {
      auto t0 = Clock::now();
      int code = request("GET", "/healthz", "", nullptr, 5000);
      long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
      noteMax(st.max_health_ms, ms);
      if (code != 200) st.health_failures++;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });

  while (Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::seconds(10));
    std::printf("t+%llds writes=%lld events=%lld connections=%lld gaps=%lld order=%lld errors=%lld\n",
                static_cast<long long>(
                    seconds - std::chrono::duration_cast<std::chrono::seconds>(end - Clock::now()).count()),
                st.writes.load(), st.events.load(), st.connections.load(), st.gaps.load(), st.order.load(),
                st.errors.load());
    std::fflush(stdout);
  }
  stop = true;
  for (auto& t : writers) t.join();
  for (auto& t : ws) t.join();
  health.join();
  bool alive = kill(server, 0) == 0 && request("GET", "/healthz", "", nullptr) == 200;
  int status = cleanup();
  bool cleanExit = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (WIFSIGNALED(status)) std::printf("server died with signal %d\n", WTERMSIG(status));

  std::printf(
      "watch stress: %ds, %d watchers, target %d writes/s: writes=%lld (%.0f/s) write_failures=%lld "
      "max_write_ms=%lld events=%lld connections=%lld gaps=%lld out_of_order=%lld expired=%lld errors=%lld "
      "health_failures=%lld max_health_ms=%lld alive=%d clean_exit=%d\n",
      seconds, watchers, rate, st.writes.load(), static_cast<double>(st.writes.load()) / seconds,
      st.write_failures.load(), st.max_write_ms.load(), st.events.load(), st.connections.load(),
      st.gaps.load(), st.order.load(), st.expired.load(), st.errors.load(), st.health_failures.load(),
      st.max_health_ms.load(), alive, cleanExit);
  if (!st.first_problem.empty()) std::printf("first problem: %s\n", st.first_problem.c_str());
  bool ok = alive && cleanExit && st.gaps == 0 && st.order == 0 && st.expired == 0 && st.errors == 0 &&
            st.write_failures == 0 && st.health_failures == 0 && st.events > 0 &&
            st.writes >= static_cast<long long>(seconds) * rate * 9 / 10;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  if (ok) std::system(("rm -rf " + dir).c_str());
  if (!ok) std::printf("server log: %s/server.log (kept)\n", dir.c_str());
  return ok ? 0 : 1;
}
