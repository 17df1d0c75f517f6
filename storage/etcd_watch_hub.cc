// The watch hub of EtcdStorage: watch(), the shared stream and its hand-out.
#include "storage/etcd_watch_hub.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "common/json.h"
#include "common/log.h"
#include "storage/etcd_codec.h"
#include "storage/etcd_storage.h"
#include "storage/etcd_transport.h"

namespace shepherd::storage {

namespace etcd_internal {
thread_local const void* t_hub_of = nullptr;
}  // namespace etcd_internal

using namespace etcd_internal;

// ---- Watch handle and stream ----

class EtcdStorage::Handle final : public WatchHandle {
 public:
  Handle(EtcdStorage* s, SubPtr sub) : s_(s), sub_(std::move(sub)) {}
  ~Handle() override { s_->unsubscribe(sub_); }

 private:
  EtcdStorage* s_;
  SubPtr sub_;
};

// One HTTP response of POST /v3/watch: newline-delimited {"result": WatchResponse} objects
// (or a final {"error": ...}), turned into callback calls on the hub thread.
class EtcdStorage::Stream {
 public:
  Stream(EtcdStorage& s, WatchState& w, CURL* curl) : s_(s), w_(w), curl_(curl) {}

  static size_t onWrite(char* ptr, size_t size, size_t n, void* userdata) {
    return static_cast<Stream*>(userdata)->onData(ptr, size * n);
  }
  // Aborts the transfer once the watch is stopped, even while no bytes arrive.
  static int onProgress(void* userdata, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return static_cast<Stream*>(userdata)->w_.stop.load() ? 1 : 0;
  }

  long status() const { return status_; }
  bool created() const { return created_; }
  bool ended() const { return ended_; }
  StreamEnd end() const { return end_; }
  const std::string& message() const { return message_; }
  const std::string& errorBody() const { return error_body_; }

 private:
  size_t onData(const char* data, size_t len) {
    if (w_.stop.load()) return 0;  // returning less than len aborts the transfer
    if (status_ == 0) curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status_);
    if (status_ != 200) {
      if (error_body_.size() < 4096) error_body_.append(data, std::min(len, 4096 - error_body_.size()));
      return len;
    }
    // libcurl's chunks need not end on a line: keep the unfinished tail for the next call.
    pending_.append(data, len);
    size_t start = 0;
    for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (!onLine(std::string_view(pending_).substr(start, nl - start))) return 0;
    }
    pending_.erase(0, start);
    return len;
  }

  // False ends the stream (see ended_ / end_).
  bool onLine(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) return true;
    json::Document d;
    d.Parse(line.data(), line.size());
    if (d.HasParseError() || !d.IsObject()) return finish(StreamEnd::Broken, "malformed watch response");
    if (json::find(d, "error")) {
      std::string why = errorText(d);
      if (contains(why, kCompactedText))
        return finish(StreamEnd::Compacted, "required revision has been compacted");
      return finish(StreamEnd::Broken, "etcd watch stream error: " + why);
    }
    const json::Value* res = json::find(d, "result");
    if (!res || !res->IsObject()) return finish(StreamEnd::Broken, "watch response without a result");

    if (int64_t c = int64Field(*res, "compact_revision"); c > 0) {
      s_.raiseCompacted(c);
      return finish(StreamEnd::Compacted, "required revision has been compacted (etcd keeps revisions from " +
                                              std::to_string(c) + ")");
    }
    if (json::getBool(*res, "canceled")) {
      return finish(StreamEnd::Canceled,
                    "etcd canceled the watch: " +
                        std::string(json::getString(*res, "cancel_reason", "no reason given")));
    }
    if (json::getBool(*res, "created")) {
      created_ = true;
      s_.markCreated(w_);
      return true;
    }

    const json::Value* evs = json::find(*res, "events");
    if (!evs || !evs->IsArray() || evs->Empty()) {
      // A progress notification. etcd sends it only to a watcher that has caught up, so
      // every event up to the header revision has already come on this stream.
      int64_t rev = headerRevision(*res);
      return rev > w_.last ? deliver({}, rev) : true;
    }
    // One response may hold several revisions (a catch-up batch): one callback per revision.
    // The batch revision is the events' own, not the header's: a catch-up response's header
    // is etcd's current revision even when etcd cut the batch short.
    std::vector<Event> batch;
    int64_t batch_rev = 0;
    int64_t tail = 0;  // the newest revision in the response, ours or not
    KeySpace ks{s_.opts_.root, s_.opts_.key_prefix};
    for (const json::Value& ev : evs->GetArray()) {
      Event e;
      Decoded d = decodeEvent(ev, ks, e);
      if (d == Decoded::Malformed) return finish(StreamEnd::Broken, "malformed watch event");
      int64_t rev = e.kv.mod_revision;
      tail = std::max(tail, rev);
      if (d == Decoded::Foreign) continue;  // the range's end reaches past the key space
      if (rev <= w_.last) continue;         // already delivered; not expected, streams resume after `last`
      if (!batch.empty() && rev < batch_rev)
        return finish(StreamEnd::Broken, "watch events out of revision order");
      if (!batch.empty() && rev != batch_rev) {
        if (!deliver(batch, batch_rev)) return false;
        batch.clear();
      }
      batch_rev = rev;
      batch.push_back(std::move(e));
    }
    if (!batch.empty() && !deliver(batch, batch_rev)) return false;
    // Revisions of foreign keys still move the watches forward.
    return tail <= w_.last || deliver({}, tail);
  }

  bool deliver(const std::vector<Event>& events, int64_t revision) {
    if (w_.stop.load()) return false;
    // Observed before it is delivered: whoever sees the event and then asks for the
    // current revision gets at least this one.
    atomicMax(s_.observed_, revision);
    // An exception must not unwind through libcurl (C code): it ends the watch instead.
    try {
      w_.callback(events, revision);
    } catch (const std::exception& e) {
      return finish(StreamEnd::Failed, std::string("watch callback threw: ") + e.what());
    } catch (...) {
      return finish(StreamEnd::Failed, "watch callback threw");
    }
    w_.last = revision;
    return !w_.stop.load();
  }

  bool finish(StreamEnd end, std::string message) {
    ended_ = true;
    end_ = end;
    message_ = std::move(message);
    return false;
  }

  EtcdStorage& s_;
  WatchState& w_;
  CURL* curl_;
  long status_ = 0;
  std::string pending_;
  std::string error_body_;
  std::string message_;
  bool created_ = false;
  bool ended_ = false;
  StreamEnd end_ = StreamEnd::Broken;
};

// ---- Watches: one hub stream, handed out to every watch ----

Outcome<std::unique_ptr<WatchHandle>> EtcdStorage::watch(const std::string& prefix, int64_t after_revision,
                                                         WatchCallback callback) {
  using Out = Outcome<std::unique_ptr<WatchHandle>>;
  if (after_revision < compacted_.load())
    return Out::failure(Code::Compacted, "required revision has been compacted");
  if (after_revision > 0) {
    // etcd reports a compacted start revision on the stream only after confirming the watch,
    // at some later time; a range read at after_revision fails the same way, at once.
    // (It is one revision stricter than the stream, and exactly as strict as SqliteStorage.)
    RangeArgs a;
    wireRange(prefix, "", a.key, a.range_end);
    a.revision = after_revision;
    a.limit = 1;
    a.keys_only = true;
    Reply r = transport_->post("/v3/kv/range", rangeBody(a), true);
    if (r.code == Code::Compacted) {
      raiseCompacted(after_revision + 1);
      return Out::failure(Code::Compacted, r.message);
    }
    // Conflict: after_revision is in the future; the hub then waits for it.
    if (!r.ok() && r.code != Code::Conflict) return Out::failure(r.code, r.message);
  }

  auto sub = std::make_shared<Subscriber>();
  sub->prefix = prefix;
  sub->callback = std::move(callback);
  sub->last = after_revision;

  UniqueMutexLock lk(wmu_);
  StreamPtr hub = hub_;
  if (!hub) {
    // The first watch starts the hub at its own revision: nothing to replay.
    hub = std::make_shared<WatchState>();
    wireRange(opts_.root, "", hub->key, hub->range_end);
    hub->callback = [this](const std::vector<Event>& evs, int64_t rev) { fanOut(evs, rev); };
    hub->last = after_revision;
    hub->multi = curl_multi_init();
    if (!hub->multi) return Out::failure(Code::Internal, "etcd: cannot create a libcurl multi handle");
    buffer_.clear();
    buffer_bytes_ = 0;
    buffer_base_ = after_revision;
    sub->joined = true;
    subs_.push_back(sub);
    hub_ = hub;
    ++hub_threads_;
    hub->thread = std::thread([this, hub] { hubLoop(hub); });
  } else {
    joining_.push_back(sub);
    curl_multi_wakeup(hub->multi);
  }
  // Answer once the watch follows a hub that etcd has confirmed, or the hub failed.
  bool settled = lk.waitFor(wcv_, std::chrono::milliseconds(opts_.request_timeout_ms), [&]() REQUIRES(wmu_) {
    return (sub->joined && hub->phase == WatchState::Phase::Running) ||
           hub->phase == WatchState::Phase::Ended;
  });
  if (settled && hub->phase == WatchState::Phase::Running) {
    lk.unlock();
    Out out;
    out.value = std::make_unique<Handle>(this, sub);
    return out;
  }
  Code code = settled ? hub->error_code : Code::Unavailable;
  std::string message =
      settled ? hub->error
              : "etcd did not confirm the watch within " + std::to_string(opts_.request_timeout_ms) + " ms";
  lk.unlock();
  unsubscribe(sub);
  return Out::failure(code == Code::Ok ? Code::Unavailable : code, message);
}

// Hands one revision to every watch, on the hub thread. The buffer keeps it for watches
// that join later.
void EtcdStorage::fanOut(const std::vector<Event>& events, int64_t revision) {
  std::vector<SubPtr> targets;
  {
    MutexLock g(wmu_);
    int64_t top = buffer_.empty() ? buffer_base_ : buffer_.back().revision;
    if (!events.empty() && revision > top) {
      size_t bytes = 0;
      for (const Event& e : events)
        bytes += e.kv.key.size() + e.kv.value.size() + (e.prev ? e.prev->value.size() : 0) + 64;
      buffer_.push_back(Batch{revision, std::make_shared<const std::vector<Event>>(events), bytes});
      buffer_bytes_ += bytes;
      while (buffer_bytes_ > opts_.watch_buffer_bytes && buffer_.size() > 1) {
        buffer_bytes_ -= buffer_.front().bytes;
        buffer_base_ = buffer_.front().revision;
        buffer_.pop_front();
      }
    }
    targets = subs_;
    ++hand_outs_started_;
  }
  // Seen, whether or not a watch wants it: currentRevision() answers from here, so it
  // moves before any watch is told (a watcher that asks next sees at least this).
  atomicMax(observed_, revision);
  std::vector<Event> some;
  for (const SubPtr& sub : targets) {
    if (sub->removed.load() || revision <= sub->last) continue;
    handTo(*sub, events, revision, some);
  }
  MutexLock g(wmu_);
  delivered_ = std::max(delivered_, revision);
  ++hand_outs_finished_;
  wcv_.notify_all();
}

namespace {

bool under(const Event& e, const std::string& prefix) {
  return e.kv.key.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

// Passes one revision to one watch: its own events only (scratch holds them when only some
// match). A callback that throws ends that watch only: it must not unwind into libcurl.
void EtcdStorage::handTo(Subscriber& sub, const std::vector<Event>& events, int64_t revision,
                         std::vector<Event>& scratch) {
  static const std::vector<Event> kNone;
  size_t matching = 0;
  for (const Event& e : events) matching += under(e, sub.prefix);
  const std::vector<Event>* mine = &events;
  if (matching == 0) {
    mine = &kNone;
  } else if (matching < events.size()) {
    scratch.clear();
    for (const Event& e : events)
      if (under(e, sub.prefix)) scratch.push_back(e);
    mine = &scratch;
  }
  try {
    sub.callback(*mine, revision);
  } catch (const std::exception& ex) {
    LOG_ERROR("etcd watch of " << sub.prefix << ": callback threw: " << ex.what()
                               << "; it delivers nothing more");
    sub.removed.store(true);
  } catch (...) {
    LOG_ERROR("etcd watch of " << sub.prefix << ": callback threw; it delivers nothing more");
    sub.removed.store(true);
  }
  sub.last = revision;
}

bool EtcdStorage::serviceJoins(WatchState& hub) {
  std::vector<SubPtr> joins;
  std::vector<Batch> replay;
  int64_t reached = hub.last;
  {
    MutexLock g(wmu_);
    if (joining_.empty()) return false;
    int64_t oldest = INT64_MAX;
    for (const SubPtr& j : joining_)
      if (j->last < buffer_base_) oldest = std::min(oldest, j->last);
    if (oldest != INT64_MAX) {
      // History older than the buffer: stream again from the oldest start asked for; every
      // watch skips the revisions it already has.
      for (SubPtr& j : joining_) {
        j->joined = true;
        subs_.push_back(std::move(j));
      }
      joining_.clear();
      buffer_.clear();
      buffer_bytes_ = 0;
      buffer_base_ = oldest;
      hub.last = oldest;
      wcv_.notify_all();
      return true;
    }
    joins.swap(joining_);
    replay.assign(buffer_.begin(), buffer_.end());
    ++hand_outs_started_;
  }
  std::vector<Event> scratch;
  for (const SubPtr& j : joins) {
    // Only the buffered revisions with this watch's events, then where the hub is.
    for (const Batch& b : replay) {
      if (b.revision <= j->last || j->removed.load()) continue;
      if (std::any_of(b.events->begin(), b.events->end(),
                      [&](const Event& e) { return under(e, j->prefix); }))
        handTo(*j, *b.events, b.revision, scratch);
    }
    if (reached > j->last && !j->removed.load()) handTo(*j, {}, reached, scratch);
  }
  MutexLock g(wmu_);
  for (SubPtr& j : joins) {
    if (j->removed.load()) continue;
    j->joined = true;
    subs_.push_back(std::move(j));
  }
  ++hand_outs_finished_;
  wcv_.notify_all();
  return false;
}

void EtcdStorage::unsubscribe(const SubPtr& sub) {
  UniqueMutexLock lk(wmu_);
  sub->removed.store(true);
  subs_.erase(std::remove(subs_.begin(), subs_.end(), sub), subs_.end());
  joining_.erase(std::remove(joining_.begin(), joining_.end(), sub), joining_.end());
  // A hand-out in progress may be inside this watch's callback: wait for it, so no callback
  // runs after the handle is gone (unless this is that callback).
  if (t_hub_of == this) return;
  uint64_t target = hand_outs_started_;
  lk.wait(wcv_, [&]() REQUIRES(wmu_) { return hand_outs_finished_ >= target; });
}

void EtcdStorage::hubLoop(const StreamPtr& w) {
  t_hub_of = this;
  const std::vector<std::string>& eps = transport_->endpoints();
  size_t next = transport_->preferred();
  size_t unconfirmed = 0;  // streams in a row that ended before etcd confirmed them
  auto backoff = std::chrono::milliseconds(100);
  Code code = Code::Ok;
  std::string message;
  while (!w->stop.load()) {
    bool created = false;
    std::string why;
    StreamEnd end = runStream(*w, eps[next % eps.size()], created, why);
    if (end == StreamEnd::Stopped) break;
    if (end == StreamEnd::Rewind) continue;
    if (end == StreamEnd::Compacted || end == StreamEnd::Canceled || end == StreamEnd::Failed) {
      code = end == StreamEnd::Compacted  ? Code::Compacted
             : end == StreamEnd::Canceled ? Code::Unavailable
                                          : Code::Internal;
      message = why;
      break;
    }
    // Broken: resume after the last delivered revision, on the next endpoint.
    ++next;
    if (created) {
      unconfirmed = 0;
      backoff = std::chrono::milliseconds(100);
    } else {
      ++unconfirmed;
    }
    bool starting;
    {
      MutexLock g(wmu_);
      starting = w->phase == WatchState::Phase::Starting;
    }
    if (starting) {
      // Before the first confirmation, try each endpoint once, then let watch() fail.
      if (unconfirmed >= eps.size()) {
        code = Code::Unavailable;
        message = why;
        break;
      }
      continue;
    }
    LOG_WARN("etcd watch: " << why << "; resuming after revision " << w->last);
    // Sleeps, unless stopHub's curl_multi_wakeup cuts it short; watches may join meanwhile.
    curl_multi_poll(w->multi, nullptr, 0, static_cast<int>(backoff.count()), nullptr);
    serviceJoins(*w);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
  }
  endHub(*w, code, message);
  t_hub_of = nullptr;
}

EtcdStorage::StreamEnd EtcdStorage::runStream(WatchState& w, const std::string& endpoint, bool& created,
                                              std::string& message) {
  CURL* curl = curl_easy_init();
  if (!curl) {
    message = "etcd: cannot create a libcurl handle";
    return StreamEnd::Failed;
  }
  std::string url = endpoint + "/v3/watch";
  // The whole request is one create_request; the gateway keeps the response open. (A
  // request body still being sent cannot be read while the answer streams over HTTP/1.1,
  // so no later cancel/progress requests: cancelling is closing the connection.)
  std::string body = watchBody(w.key, w.range_end, w.last + 1);
  Stream st(*this, w, curl);
  transport_->configure(curl);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  // No overall timeout: the stream lasts as long as the hub. Keepalive notices a dead peer.
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPIDLE, 10L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPINTVL, 5L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Stream::onWrite);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &st);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &Stream::onProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &st);

  // The multi interface so that stopHub and joining watches can interrupt the wait
  // (curl_multi_wakeup); joins are served between transfers' callbacks.
  CURLcode rc = CURLE_OK;
  std::string multi_error;
  bool rewind = false;
  curl_multi_add_handle(w.multi, curl);
  for (int running = 1; running && !w.stop.load();) {
    CURLMcode mc = curl_multi_perform(w.multi, &running);
    if (mc == CURLM_OK && running) mc = curl_multi_poll(w.multi, nullptr, 0, 1000, nullptr);
    if (mc != CURLM_OK) {
      multi_error = curl_multi_strerror(mc);
      break;
    }
    if (!st.ended() && serviceJoins(w)) {
      rewind = true;
      break;
    }
  }
  int queued = 0;
  while (CURLMsg* m = curl_multi_info_read(w.multi, &queued)) {
    if (m->msg == CURLMSG_DONE && m->easy_handle == curl) rc = m->data.result;
  }
  long status = st.status();
  if (status == 0) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_multi_remove_handle(w.multi, curl);
  curl_easy_cleanup(curl);

  created = st.created();
  if (w.stop.load()) return StreamEnd::Stopped;
  if (rewind) return StreamEnd::Rewind;
  if (st.ended()) {
    message = st.message();
    return st.end();
  }
  if (!multi_error.empty()) {
    message = "etcd watch " + url + ": " + multi_error;
    return StreamEnd::Broken;
  }
  if (status != 0 && status != 200) {
    Reply r = mapHttpError(status, st.errorBody());
    message = "etcd watch " + url + ": " + r.message;
    return r.code == Code::Compacted ? StreamEnd::Compacted : StreamEnd::Broken;
  }
  message =
      "etcd watch " + url + ": " +
      (rc != CURLE_OK ? std::string(curl_easy_strerror(rc)) : std::string("the server ended the stream"));
  return StreamEnd::Broken;
}

void EtcdStorage::markCreated(WatchState& w) {
  MutexLock g(wmu_);
  if (w.phase == WatchState::Phase::Starting) w.phase = WatchState::Phase::Running;
  wcv_.notify_all();
}

// The interface has no way to tell a watcher that its watch ended (compaction overtook a
// reconnect, etcd canceled it): it is logged, writers stop waiting, and the next watch()
// starts a new hub.
void EtcdStorage::endHub(WatchState& w, Code code, const std::string& message) {
  MutexLock g(wmu_);
  bool was_running = w.phase == WatchState::Phase::Running;
  w.error_code = code == Code::Ok ? Code::Unavailable : code;
  w.error = message.empty() ? "the watch was stopped" : message;
  w.phase = WatchState::Phase::Ended;
  if (hub_.get() == &w) {
    if (was_running && code != Code::Ok && !subs_.empty())
      LOG_ERROR("etcd watch ended after revision " << w.last << ": " << message << "; " << subs_.size()
                                                   << " watches receive nothing more");
    for (const SubPtr& sub : subs_) sub->removed.store(true);
    subs_.clear();
    joining_.clear();
    hub_.reset();
  }
  // Last touch of *this by the thread: the destructor waits for this count.
  --hub_threads_;
  wcv_.notify_all();
}

void EtcdStorage::stopHub() {
  StreamPtr hub;
  {
    MutexLock g(wmu_);
    hub = hub_;
  }
  if (hub) {
    hub->stop.store(true);
    curl_multi_wakeup(hub->multi);
    if (hub->thread.joinable()) {
      // Stopped from its own callback: the thread sees `stop` when the callback returns and
      // ends by itself; joining here would wait for ourselves.
      if (hub->thread.get_id() == std::this_thread::get_id()) {
        hub->thread.detach();
      } else {
        hub->thread.join();
      }
    }
  }
  if (t_hub_of == this) return;
  UniqueMutexLock lk(wmu_);
  lk.wait(wcv_, [&]() REQUIRES(wmu_) { return hub_threads_ == 0; });
}

}  // namespace shepherd::storage
