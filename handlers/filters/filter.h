// The request pipeline: an ordered list of filters in front of the router, as
// kube-apiserver's handler chain (request info → audit → authentication → impersonation →
// authorization → routing). In-flight limits come before all of them, in the HTTP server
// (ServerOptions::max_requests_inflight), which answers 429 before a worker is taken.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "net/http/message.h"

namespace shepherd::handlers {

using RequestHandler = std::function<void(http::Request&, std::shared_ptr<http::Responder>)>;

class Filter {
 public:
  virtual ~Filter() = default;
  // Answers the request (and stops), or calls `next` with it (and a responder, possibly
  // wrapped).
  virtual void handle(http::Request& req, std::shared_ptr<http::Responder> resp,
                      const RequestHandler& next) const = 0;
};

// Thread-safety: immutable after construction; handle() is called concurrently.
class FilterChain {
 public:
  FilterChain(std::vector<std::unique_ptr<Filter>> filters, RequestHandler last);
  void handle(http::Request& req, std::shared_ptr<http::Responder> resp) const;

 private:
  std::vector<std::unique_ptr<Filter>> filters_;
  std::vector<RequestHandler> steps_;  // steps_[i] runs filters_[i], then steps_[i + 1]
};

}  // namespace shepherd::handlers
