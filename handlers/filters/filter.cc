#include "handlers/filters/filter.h"

namespace shepherd::handlers {

FilterChain::FilterChain(std::vector<std::unique_ptr<Filter>> filters, RequestHandler last)
    : filters_(std::move(filters)) {
  steps_.resize(filters_.size() + 1);
  steps_.back() = std::move(last);
  for (size_t i = filters_.size(); i-- > 0;) {
    const Filter* f = filters_[i].get();
    const RequestHandler* next = &steps_[i + 1];
    steps_[i] = [f, next](http::Request& req, std::shared_ptr<http::Responder> resp) {
      f->handle(req, std::move(resp), *next);
    };
  }
}

void FilterChain::handle(http::Request& req, std::shared_ptr<http::Responder> resp) const {
  steps_.front()(req, std::move(resp));
}

}  // namespace shepherd::handlers
