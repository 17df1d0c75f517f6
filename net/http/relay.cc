#include "net/http/relay.h"

#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <vector>

namespace shepherd::http {

namespace {

using Clock = std::chrono::steady_clock;

// Thread-safety: each direction runs on its source's strand; shared state is atomic or
// under `mu`.
class Relay : public std::enable_shared_from_this<Relay> {
 public:
  Relay(std::shared_ptr<ByteStream> a, std::shared_ptr<ByteStream> b, RelayOptions o)
      : a_(std::move(a)), b_(std::move(b)), opts_(std::move(o)), timer_(a_->executor()) {
    last_ = Clock::now().time_since_epoch().count();
  }

  void start() {
    if (opts_.activity_meter) {
      meter_ab_ = opts_.activity_meter();
      meter_ba_ = opts_.activity_meter();
    }
    pump(a_, b_, buf_ab_, meter_ab_);
    pump(b_, a_, buf_ba_, meter_ba_);
    tick();
  }

 private:
  using Meter = std::function<bool(std::string_view)>;

  void pump(std::shared_ptr<ByteStream> from, std::shared_ptr<ByteStream> to, std::vector<char>& buf,
            Meter& meter) {
    buf.resize(64 * 1024);
    from->read(buf.data(), buf.size(),
               [self = shared_from_this(), from, to, &buf, &meter](bool ok, size_t n) {
                 if (!ok) return self->directionEnded(to);
                 if (!meter || meter(std::string_view(buf.data(), n)))
                   self->last_ = Clock::now().time_since_epoch().count();
                 to->write(std::string(buf.data(), n), [self, from, to, &buf, &meter](bool ok) {
                   if (!ok) return self->end();
                   self->pump(from, to, buf, meter);
                 });
               });
  }

  void directionEnded(const std::shared_ptr<ByteStream>& to) {
    to->shutdownWrite();
    if (ended_.fetch_add(1) + 1 >= 2) return end();
    // The other side gets a short while to finish its answer, then both close.
    std::lock_guard<std::mutex> g(mu_);
    linger_until_ = Clock::now() + std::chrono::seconds(5);
  }

  void tick() {
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code&) {
      if (self->done_.load()) return;
      auto now = Clock::now();
      bool expired = false;
      {
        std::lock_guard<std::mutex> g(self->mu_);
        if (self->linger_until_ && now > *self->linger_until_) expired = true;
      }
      auto idle = now.time_since_epoch().count() - self->last_.load();
      if (self->opts_.idle_timeout_seconds > 0 &&
          idle > std::chrono::duration_cast<Clock::duration>(
                     std::chrono::seconds(self->opts_.idle_timeout_seconds))
                     .count())
        expired = true;
      if (expired || self->a_->closed() || self->b_->closed()) return self->end();
      self->tick();
    });
  }

  void end() {
    if (done_.exchange(true)) return;
    a_->close();
    b_->close();
    boost::asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
    if (opts_.on_end) opts_.on_end();
  }

  std::shared_ptr<ByteStream> a_, b_;
  RelayOptions opts_;
  boost::asio::steady_timer timer_;  // on a's strand
  std::vector<char> buf_ab_, buf_ba_;
  Meter meter_ab_, meter_ba_;  // each used by its direction only
  std::atomic<Clock::rep> last_;
  std::atomic<int> ended_{0};
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::optional<Clock::time_point> linger_until_;
};

}  // namespace

void relay(std::shared_ptr<ByteStream> a, std::shared_ptr<ByteStream> b, RelayOptions options) {
  std::make_shared<Relay>(std::move(a), std::move(b), std::move(options))->start();
}

}  // namespace shepherd::http
