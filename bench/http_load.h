// A load generator for the benchmarks: many keep-alive HTTP/1.1 connections driven by one
// Asio thread (C++20 coroutines), so the generator itself costs little of the 2 cores it
// shares with the server under test. Closed loop (each connection sends its next request
// when the previous answer has arrived) or paced (request i is sent no earlier than
// start + i / rate).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace shepherd::bench {

struct LoadOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  int connections = 1;
  int64_t requests = 0;      // total over all connections
  double rate = 0;           // requests per second over all connections; 0 = closed loop
  double max_seconds = 0;    // stop sending after this long; 0 = no limit
  bool keep_bodies = false;  // keep response bodies (LoadResult::bodies), else only sizes
  bool quiet = false;        // do not print connection failures (e.g. polling for readiness)
};

struct LoadResult {
  std::vector<double> latencies_ms;  // of answered requests, in completion order
  std::map<int, int64_t> statuses;   // HTTP status -> count
  int64_t errors = 0;                // connection or protocol failures
  int64_t answered = 0;
  double seconds = 0;                // first send to last answer
  uint64_t response_bytes = 0;       // bodies only
  std::vector<std::string> bodies;   // with keep_bodies, indexed by request number

  // Successful (2xx) answers per second.
  double perSecond() const;
  int64_t count(int status) const {
    auto it = statuses.find(status);
    return it == statuses.end() ? 0 : it->second;
  }
  // "12,345 req/s  p50 1.2 ms  p99 3.4 ms  p99.9 5.6 ms  (201: 20000)"
  std::string summary() const;
};

// Builds the complete text of request i (request line, headers, body).
using RequestFactory = std::function<std::string(int64_t i)>;
// Called on the load thread when request i has been answered.
using AnswerObserver =
    std::function<void(int64_t i, int status, std::chrono::steady_clock::time_point at)>;

LoadResult runLoad(const LoadOptions& opts, const RequestFactory& make,
                   const AnswerObserver& observe = {});

// `count` GETs one after another on one keep-alive connection through libcurl (for large
// answers such as a 50 MB LIST, where the Asio/Beast client above cost more than the
// server it measures); latencies and body sizes as in runLoad.
LoadResult sequentialGets(int port, const std::string& target, const std::string& accept, int count);

// Request text helpers.
std::string httpGet(const std::string& target, const std::string& accept = "application/json");
std::string httpPost(const std::string& target, const std::string& body,
                     const std::string& content_type = "application/json");

}  // namespace shepherd::bench
