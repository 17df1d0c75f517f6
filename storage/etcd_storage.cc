#include "storage/etcd_storage.h"

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <exception>
#include <string_view>
#include <thread>
#include <utility>

#include "common/base64.h"
#include "common/json.h"
#include "common/log.h"

namespace shepherd::storage {

namespace etcd_internal {

// One gateway call: Ok with the parsed answer, or an error already mapped to a Storage code.
struct Reply {
  Code code = Code::Ok;
  std::string message;
  json::Document doc;
  bool ok() const { return code == Code::Ok; }
};

// Unary JSON requests over a small pool of libcurl easy handles (their connections stay
// alive between requests), with fail-over between endpoints.
class Transport {
 public:
  explicit Transport(const EtcdOptions& opts);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // POSTs body to path. A request that never reached a server moves on to the next
  // endpoint; an idempotent one also does on any transport error or a 503.
  Reply post(const char* path, const std::string& body, bool idempotent);
  // Options shared by unary requests and watch streams (signals, headers, TLS).
  void configure(CURL* curl) const;
  const std::vector<std::string>& endpoints() const { return endpoints_; }
  size_t preferred() const { return preferred_.load(); }

 private:
  CURL* acquire();
  void release(CURL* curl);

  std::vector<std::string> endpoints_;
  std::string ca_file_;
  std::string cert_file_;
  std::string key_file_;
  int timeout_ms_;
  curl_slist* headers_ = nullptr;
  std::atomic<size_t> preferred_{0};
  std::mutex mu_;
  std::vector<CURL*> idle_;
};

// One etcd watch stream: the hub's (shared by EtcdStorage::hub_ and its thread, which keeps
// it alive until the thread is done).
struct WatchState {
  enum class Phase { Starting, Running, Ended };

  std::string key;  // the range on the wire
  std::string range_end;
  WatchCallback callback;
  CURLM* multi = nullptr;  // drives the stream; curl_multi_wakeup interrupts its waits
  std::thread thread;
  std::atomic<bool> stop{false};

  // Touched only by the hub thread (set before it starts): every event at or below this
  // revision has been passed to callback. A broken stream resumes at last + 1.
  int64_t last = 0;

  // Under EtcdStorage::wmu_.
  Phase phase = Phase::Starting;
  Code error_code = Code::Ok;
  std::string error;

  ~WatchState() {
    if (multi) curl_multi_cleanup(multi);
  }
};

// One Storage::watch: a prefix and a callback fed by the hub.
struct Subscriber {
  std::string prefix;
  WatchCallback callback;
  // Hub thread only (set by watch() before the sub is handed over): the last revision
  // passed to callback.
  int64_t last = 0;
  std::atomic<bool> removed{false};
  bool joined = false;  // under wmu_: following the hub
};

// One revision's events, kept for watches that start in the past.
struct Batch {
  int64_t revision = 0;
  std::shared_ptr<const std::vector<Event>> events;
  size_t bytes = 0;
};

}  // namespace etcd_internal

namespace {

using etcd_internal::Batch;
using etcd_internal::Reply;
using etcd_internal::Subscriber;
using etcd_internal::WatchState;
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr std::string_view kCompactedText = "required revision has been compacted";
constexpr std::string_view kFutureText = "required revision is a future revision";

// The EtcdStorage whose hub runs on this thread, if any: a write made from inside a
// callback must not wait for the hub to deliver it (it would wait for itself).
thread_local const void* t_hub_of = nullptr;

void globalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_ALL); });
}

size_t collect(char* ptr, size_t size, size_t n, void* userdata) {
  static_cast<std::string*>(userdata)->append(ptr, size * n);
  return size * n;
}

void atomicMax(std::atomic<int64_t>& a, int64_t v) {
  int64_t cur = a.load();
  while (cur < v && !a.compare_exchange_weak(cur, v)) {
  }
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

Reply failed(Code code, std::string message) {
  Reply r;
  r.code = code;
  r.message = std::move(message);
  return r;
}

// int64 fields arrive as JSON strings ("42") and are left out when zero.
int64_t asInt64(const json::Value* v) {
  if (!v) return 0;
  if (v->IsInt64()) return v->GetInt64();
  if (!v->IsString()) return 0;
  std::string_view s = json::view(*v);
  int64_t out = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() ? out : 0;
}
int64_t int64Field(const json::Value& obj, std::string_view name) {
  return asInt64(json::find(obj, name));
}
int64_t headerRevision(const json::Value& obj) {
  return asInt64(json::findPath(obj, {"header", "revision"}));
}

// The first element of obj[list], or nullptr (absent lists are how the gateway says "empty").
const json::Value* firstOf(const json::Value* obj, std::string_view list) {
  if (!obj) return nullptr;
  const json::Value* a = json::find(*obj, list);
  if (!a || !a->IsArray() || a->Empty()) return nullptr;
  return a->Begin();
}

// responses[0].<kind> of a txn answer.
const json::Value* firstResponse(const json::Value& txn, std::string_view kind) {
  const json::Value* op = firstOf(&txn, "responses");
  return op ? json::find(*op, kind) : nullptr;
}

// The text of a gateway error: {"error": "...", "code": 11, "message": "..."} for unary
// calls (grpc-gateway v1; older builds lack "message"), {"error": {"message": ...}} on a stream.
std::string errorText(const json::Value& body) {
  std::string_view m = json::getString(body, "message");
  if (m.empty()) m = json::getString(body, "error");
  if (m.empty()) {
    if (const json::Value* e = json::find(body, "error"); e && e->IsObject())
      m = json::getString(*e, "message");
  }
  return std::string(m);
}

// Maps a non-200 answer. The message text is what is stable across grpc-gateway versions
// (the HTTP status for a gRPC code changed between them), so it is matched first.
Reply mapHttpError(long status, const std::string& body) {
  json::Document d;
  d.Parse(body.data(), body.size());
  std::string text;
  int64_t grpc = -1;
  if (!d.HasParseError() && d.IsObject()) {
    text = errorText(d);
    if (auto c = json::getInt(d, "code")) grpc = *c;
  }
  if (text.empty()) text = body.substr(0, 256);
  // Same messages and codes as SqliteStorage::list.
  if (contains(text, kCompactedText)) return failed(Code::Compacted, "required revision has been compacted");
  if (contains(text, kFutureText)) return failed(Code::Conflict, "revision is in the future");
  std::string msg = "etcd: HTTP " + std::to_string(status) + ": " + text;
  // gRPC Unavailable (no leader), DeadlineExceeded and "too many requests" are transient.
  if (grpc == 14 || grpc == 4 || status == 503 || status == 408 || status == 429)
    return failed(Code::Unavailable, msg);
  return failed(Code::Internal, msg);
}

// JSON writing: bytes fields are standard base64, int64 fields are strings.
void putBytes(JsonWriter& w, const char* name, std::string_view bytes) {
  std::string b = base64Encode(bytes);
  w.Key(name);
  w.String(b.data(), static_cast<rapidjson::SizeType>(b.size()), true);
}
void putInt(JsonWriter& w, const char* name, int64_t v) {
  std::string s = std::to_string(v);
  w.Key(name);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()), true);
}
void putTrue(JsonWriter& w, const char* name) {
  w.Key(name);
  w.Bool(true);
}
void putName(JsonWriter& w, const char* name, const char* value) {
  w.Key(name);
  w.String(value);
}
std::string text(const rapidjson::StringBuffer& sb) {
  return std::string(sb.GetString(), sb.GetSize());
}

struct RangeArgs {
  std::string key;
  std::string range_end;  // empty: the single key
  int64_t limit = 0;
  int64_t revision = 0;  // 0: the current one
  bool keys_only = false;
};

std::string rangeBody(const RangeArgs& a) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  putBytes(w, "key", a.key);
  if (!a.range_end.empty()) putBytes(w, "range_end", a.range_end);
  if (a.limit > 0) putInt(w, "limit", a.limit);
  if (a.revision > 0) putInt(w, "revision", a.revision);
  if (a.keys_only) putTrue(w, "keys_only");
  w.EndObject();
  return text(sb);
}

enum class Then { Put, Delete };

// A txn on one key: if <field>(key) <result> revision, put or delete (returning the deleted
// value); otherwise read the key, so a failed compare tells the key's current state (the
// failure branch kube-apiserver uses).
std::string txnBody(const std::string& key, const char* target, const char* field, const char* result,
                    int64_t revision, Then then, std::string_view value) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("compare");
  w.StartArray();
  w.StartObject();
  putBytes(w, "key", key);
  putName(w, "target", target);
  putName(w, "result", result);
  putInt(w, field, revision);
  w.EndObject();
  w.EndArray();

  w.Key("success");
  w.StartArray();
  w.StartObject();
  if (then == Then::Put) {
    w.Key("request_put");
    w.StartObject();
    putBytes(w, "key", key);
    putBytes(w, "value", value);
    w.EndObject();
  } else {
    w.Key("request_delete_range");
    w.StartObject();
    putBytes(w, "key", key);
    putTrue(w, "prev_kv");
    w.EndObject();
  }
  w.EndObject();
  w.EndArray();

  w.Key("failure");
  w.StartArray();
  w.StartObject();
  w.Key("request_range");
  w.StartObject();
  putBytes(w, "key", key);
  w.EndObject();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return text(sb);
}

std::string compactionBody(int64_t revision) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  putInt(w, "revision", revision);
  putTrue(w, "physical");  // answer only once the old revisions are really gone
  w.EndObject();
  return text(sb);
}

std::string watchBody(const std::string& key, const std::string& range_end, int64_t start_revision) {
  rapidjson::StringBuffer sb;
  JsonWriter w(sb);
  w.StartObject();
  w.Key("create_request");
  w.StartObject();
  putBytes(w, "key", key);
  putBytes(w, "range_end", range_end);
  putInt(w, "start_revision", start_revision);  // inclusive
  putTrue(w, "prev_kv");
  putTrue(w, "progress_notify");
  w.EndObject();
  w.EndObject();
  return text(sb);
}

// How keys map between the caller's space and the wire: `root` there is `wire` here.
struct KeySpace {
  std::string_view root;
  std::string_view wire;
  bool local(std::string_view w, std::string& key) const {
    if (w.compare(0, wire.size(), wire) != 0) return false;
    key.assign(root);
    key.append(w.substr(wire.size()));
    return true;
  }
};

enum class Decoded { Ok, Foreign, Malformed };

// An etcd KeyValue in the caller's key space; Foreign for a key outside it.
Decoded decodeKv(const json::Value& o, const KeySpace& ks, KeyValue& kv) {
  auto key = base64Decode(json::getString(o, "key"));
  auto value = base64Decode(json::getString(o, "value"));
  if (!key || !value) return Decoded::Malformed;
  if (!ks.local(*key, kv.key)) return Decoded::Foreign;
  kv.value = std::move(*value);
  kv.create_revision = int64Field(o, "create_revision");
  kv.mod_revision = int64Field(o, "mod_revision");
  return Decoded::Ok;
}

// A watch event. A DELETE's kv has only the key and the deletion's revision; prev_kv (asked
// for with prev_kv) gives the deleted value and the incarnation's create_revision.
Decoded decodeEvent(const json::Value& ev, const KeySpace& ks, Event& e) {
  const json::Value* kv = json::find(ev, "kv");
  if (!kv || !kv->IsObject()) return Decoded::Malformed;
  if (Decoded d = decodeKv(*kv, ks, e.kv); d != Decoded::Ok) return d;
  const json::Value* type = json::find(ev, "type");  // absent for PUT (enum value 0)
  bool del =
      type && ((type->IsString() && json::view(*type) == "DELETE") || (type->IsInt() && type->GetInt() == 1));
  e.type = del ? Event::Type::Delete : Event::Type::Put;
  if (!del) return Decoded::Ok;
  e.kv.value.clear();
  if (const json::Value* prev = json::find(ev, "prev_kv"); prev && prev->IsObject()) {
    KeyValue p;
    if (decodeKv(*prev, ks, p) != Decoded::Ok) return Decoded::Malformed;
    e.kv.create_revision = p.create_revision;
    e.prev = std::move(p);
  }
  return Decoded::Ok;
}

}  // namespace

// ---- Transport ----

namespace etcd_internal {

Transport::Transport(const EtcdOptions& o)
    : ca_file_(o.ca_file), cert_file_(o.cert_file), key_file_(o.key_file), timeout_ms_(o.request_timeout_ms) {
  globalInit();
  for (std::string e : o.endpoints) {
    while (!e.empty() && e.back() == '/') e.pop_back();
    endpoints_.push_back(std::move(e));
  }
  headers_ = curl_slist_append(headers_, "Content-Type: application/json");
  headers_ = curl_slist_append(headers_, "Accept: application/json");
  headers_ = curl_slist_append(headers_, "Expect:");  // no 100-continue round trip for large bodies
}

Transport::~Transport() {
  for (CURL* c : idle_) curl_easy_cleanup(c);
  curl_slist_free_all(headers_);
}

CURL* Transport::acquire() {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!idle_.empty()) {
      CURL* c = idle_.back();
      idle_.pop_back();
      return c;
    }
  }
  return curl_easy_init();
}

void Transport::release(CURL* curl) {
  std::lock_guard<std::mutex> g(mu_);
  if (idle_.size() < 16) {
    idle_.push_back(curl);
  } else {
    curl_easy_cleanup(curl);
  }
}

void Transport::configure(CURL* curl) const {
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers_);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(timeout_ms_, 3000)));
  // TODO(tls): untested; etcd's gateway refuses client certificates that carry a CN.
  if (!ca_file_.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file_.c_str());
  if (!cert_file_.empty()) curl_easy_setopt(curl, CURLOPT_SSLCERT, cert_file_.c_str());
  if (!key_file_.empty()) curl_easy_setopt(curl, CURLOPT_SSLKEY, key_file_.c_str());
}

Reply Transport::post(const char* path, const std::string& body, bool idempotent) {
  size_t n = endpoints_.size();
  size_t first = preferred_.load() % n;
  std::string last_error = "etcd: no endpoint";
  for (size_t k = 0; k < n; ++k) {
    size_t i = (first + k) % n;
    std::string url = endpoints_[i] + path;
    CURL* curl = acquire();
    if (!curl) return failed(Code::Internal, "etcd: cannot create a libcurl handle");
    std::string answer;
    curl_easy_reset(curl);  // keeps the handle's live connections
    configure(curl);
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms_));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
    CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    release(curl);

    if (rc != CURLE_OK) {
      last_error = "etcd " + url + ": " + curl_easy_strerror(rc);
      bool unsent = rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
                    rc == CURLE_COULDNT_RESOLVE_PROXY;
      if (unsent || idempotent) continue;
      // A write that may have reached etcd is not repeated elsewhere: its outcome is unknown.
      return failed(Code::Unavailable, last_error + " (the write may or may not have been applied)");
    }
    if (status == 503 && idempotent && k + 1 < n) {
      last_error = "etcd " + url + ": HTTP 503";
      continue;
    }
    preferred_.store(i);
    if (status != 200) return mapHttpError(status, answer);
    Reply r;
    r.doc.Parse(answer.data(), answer.size());
    if (r.doc.HasParseError() || !r.doc.IsObject())
      return failed(Code::Internal, "etcd " + url + ": the answer is not a JSON object");
    return r;
  }
  return failed(Code::Unavailable, last_error);
}

}  // namespace etcd_internal

// ---- Write admission (shutdown) ----

class EtcdStorage::WriteScope {
 public:
  explicit WriteScope(EtcdStorage& s) : s_(s) {
    std::lock_guard<std::mutex> g(s_.write_mu_);
    admitted_ = !s_.stopping_;
    if (admitted_) ++s_.writes_in_flight_;
  }
  ~WriteScope() {
    if (!admitted_) return;
    std::lock_guard<std::mutex> g(s_.write_mu_);
    if (--s_.writes_in_flight_ == 0) s_.write_cv_.notify_all();
  }
  WriteScope(const WriteScope&) = delete;
  WriteScope& operator=(const WriteScope&) = delete;
  explicit operator bool() const { return admitted_; }

 private:
  EtcdStorage& s_;
  bool admitted_ = false;
};

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
    // An exception must not unwind through libcurl (C code): it ends the watch instead.
    try {
      w_.callback(events, revision);
    } catch (const std::exception& e) {
      return finish(StreamEnd::Failed, std::string("watch callback threw: ") + e.what());
    } catch (...) {
      return finish(StreamEnd::Failed, "watch callback threw");
    }
    w_.last = revision;
    atomicMax(s_.observed_, revision);
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

// ---- EtcdStorage ----

EtcdStorage::EtcdStorage(EtcdOptions opts)
    : opts_(std::move(opts)), transport_(std::make_unique<etcd_internal::Transport>(opts_)) {}

Outcome<std::unique_ptr<EtcdStorage>> EtcdStorage::open(const EtcdOptions& opts) {
  using Out = Outcome<std::unique_ptr<EtcdStorage>>;
  if (opts.endpoints.empty()) return Out::failure(Code::Internal, "etcd: no endpoints given");
  for (const std::string& e : opts.endpoints) {
    if (e.rfind("http://", 0) != 0 && e.rfind("https://", 0) != 0)
      return Out::failure(Code::Internal, "etcd: endpoint " + e + " is not an http:// or https:// URL");
  }
  if (opts.request_timeout_ms <= 0)
    return Out::failure(Code::Internal, "etcd: request_timeout_ms must be positive");
  std::unique_ptr<EtcdStorage> s(new EtcdStorage(opts));
  // Reach etcd once, so a wrong endpoint fails here rather than on the first request.
  int64_t rev = 0;
  Reply r;
  if (!s->fetchRevision(rev, r)) return Out::failure(r.code, r.message);
  s->observed_.store(rev);
  Out out;
  out.value = std::move(s);
  return out;
}

EtcdStorage::~EtcdStorage() {
  shutdown();
  size_t left;
  {
    std::lock_guard<std::mutex> g(wmu_);
    left = subs_.size() + joining_.size();
  }
  if (left) LOG_WARN("etcd storage destroyed with " << left << " live watches");
  stopHub();
}

void EtcdStorage::shutdown() {
  std::unique_lock<std::mutex> lk(write_mu_);
  stopping_ = true;
  // Each write in flight ends within the request timeout plus the delivery wait.
  write_cv_.wait(lk, [&] { return writes_in_flight_ == 0; });
}

std::string EtcdStorage::wireKey(const std::string& key) const {
  if (key.compare(0, opts_.root.size(), opts_.root) == 0)
    return opts_.key_prefix + key.substr(opts_.root.size());
  return opts_.key_prefix + key;  // outside root (a caller's mistake): kept apart, never read back
}

bool EtcdStorage::localKey(const std::string& wire, std::string& key) const {
  return KeySpace{opts_.root, opts_.key_prefix}.local(wire, key);
}

std::string EtcdStorage::wirePrefix(const std::string& prefix) const {
  // A prefix of root ("" or "/reg") covers the whole key space.
  if (prefix.size() < opts_.root.size() && opts_.root.compare(0, prefix.size(), prefix) == 0)
    return opts_.key_prefix;
  return wireKey(prefix);
}

void EtcdStorage::wireRange(const std::string& prefix, const std::string& start_after, std::string& key,
                            std::string& range_end) const {
  std::string wp = wirePrefix(prefix);
  // start_after is exclusive: the next possible key is start_after + "\0".
  key = start_after.empty() || start_after < prefix ? wp : std::max(wp, wireKey(start_after) + '\0');
  range_end = prefixEnd(wp);
  if (key.empty()) key.assign(1, '\0');              // etcd refuses an empty key; "\0" is the smallest
  if (range_end.empty()) range_end.assign(1, '\0');  // range_end "\0" means "no upper bound"
}

bool EtcdStorage::fetchRevision(int64_t& revision, Reply& reply) {
  RangeArgs a;
  a.key = opts_.key_prefix.empty() ? std::string(1, '\0') : opts_.key_prefix;
  a.keys_only = true;
  reply = transport_->post("/v3/kv/range", rangeBody(a), true);
  if (!reply.ok()) return false;
  revision = headerRevision(reply.doc);
  if (revision > 0) return true;
  reply = failed(Code::Internal, "etcd: range answer without a header revision");
  return false;
}

void EtcdStorage::raiseCompacted(int64_t revision) {
  atomicMax(compacted_, revision);
}

// Read-your-writes. SqliteStorage delivers a batch to every watch before it answers the
// writers; here etcd delivers on the hub's connection, so the writer waits until the hub
// has handed the write's revision to every watch. The wait is bounded by the request
// timeout; past it the write is answered anyway (it did commit) and logged.
void EtcdStorage::awaitDelivery(int64_t revision) {
  if (t_hub_of == this) return;
  std::unique_lock<std::mutex> lk(wmu_);
  StreamPtr hub = hub_;
  if (!hub) return;
  bool ok = wcv_.wait_for(lk, std::chrono::milliseconds(opts_.request_timeout_ms),
                          [&] { return delivered_ >= revision || hub->phase == WatchState::Phase::Ended; });
  lk.unlock();
  if (!ok)
    LOG_WARN("etcd: watches had not been handed revision "
             << revision << " after " << opts_.request_timeout_ms << " ms; answering the write anyway");
}

namespace {

// One write txn on a key. create: the key must not exist; otherwise its mod_revision must
// equal `expected` (0: any, but the key must exist, as in SqliteStorage). Gives the
// txn's revision (the reply is kept for the caller), or what the failure branch's read
// says: Exists, NotFound or Conflict with the key's current revision.
Outcome<int64_t> writeTxn(etcd_internal::Transport& transport, const std::string& wire_key, bool create,
                          int64_t expected, Then then, std::string_view value, Reply& r) {
  using Out = Outcome<int64_t>;
  std::string body = create ? txnBody(wire_key, "CREATE", "create_revision", "EQUAL", 0, then, value)
                            : txnBody(wire_key, "MOD", "mod_revision", expected ? "EQUAL" : "GREATER",
                                      expected, then, value);
  r = transport.post("/v3/kv/txn", body, false);
  if (!r.ok()) return Out::failure(r.code, r.message);
  if (!json::getBool(r.doc, "succeeded")) {  // absent when false
    const json::Value* cur = firstOf(firstResponse(r.doc, "response_range"), "kvs");
    int64_t current = cur ? int64Field(*cur, "mod_revision") : 0;
    if (create) return Out::failure(Code::Exists, "key exists", current);
    if (!cur) return Out::failure(Code::NotFound, "key not found");
    return Out::failure(Code::Conflict, "revision mismatch", current);
  }
  int64_t rev = headerRevision(r.doc);
  if (rev <= 0) return Out::failure(Code::Internal, "etcd: txn answer without a header revision");
  Out out;
  out.value = rev;
  return out;
}

}  // namespace

Outcome<int64_t> EtcdStorage::create(const std::string& key, std::string value) {
  WriteScope scope(*this);
  if (!scope) return Outcome<int64_t>::failure(Code::Unavailable, "storage is shutting down");
  Reply r;
  auto out = writeTxn(*transport_, wireKey(key), true, 0, Then::Put, value, r);
  if (out.ok()) awaitDelivery(out.value);
  return out;
}

Outcome<int64_t> EtcdStorage::update(const std::string& key, std::string value,
                                     int64_t expected_mod_revision) {
  WriteScope scope(*this);
  if (!scope) return Outcome<int64_t>::failure(Code::Unavailable, "storage is shutting down");
  Reply r;
  auto out = writeTxn(*transport_, wireKey(key), false, expected_mod_revision, Then::Put, value, r);
  if (out.ok()) awaitDelivery(out.value);
  return out;
}

Outcome<KeyValue> EtcdStorage::remove(const std::string& key, int64_t expected_mod_revision) {
  using Out = Outcome<KeyValue>;
  WriteScope scope(*this);
  if (!scope) return Out::failure(Code::Unavailable, "storage is shutting down");
  Reply r;
  auto txn = writeTxn(*transport_, wireKey(key), false, expected_mod_revision, Then::Delete, "", r);
  if (!txn.ok()) return Out::failure(txn.code, txn.message, txn.current_revision);
  const json::Value* prev = firstOf(firstResponse(r.doc, "response_delete_range"), "prev_kvs");
  KeyValue old;
  if (!prev || decodeKv(*prev, KeySpace{opts_.root, opts_.key_prefix}, old) != Decoded::Ok)
    return Out::failure(Code::Internal, "etcd: delete answer without the deleted value");
  awaitDelivery(txn.value);
  // As SqliteStorage: the deleted value, its incarnation's create_revision, the deletion's revision.
  Out out;
  out.value = KeyValue{key, std::move(old.value), old.create_revision, txn.value};
  return out;
}

Outcome<KeyValue> EtcdStorage::get(const std::string& key) {
  using Out = Outcome<KeyValue>;
  RangeArgs a;
  a.key = wireKey(key);
  if (a.key.empty()) return Out::failure(Code::NotFound, "key not found");
  Reply r = transport_->post("/v3/kv/range", rangeBody(a), true);
  if (!r.ok()) return Out::failure(r.code, r.message);
  const json::Value* kv = firstOf(&r.doc, "kvs");
  if (!kv) return Out::failure(Code::NotFound, "key not found");
  Out out;
  if (decodeKv(*kv, KeySpace{opts_.root, opts_.key_prefix}, out.value) != Decoded::Ok)
    return Out::failure(Code::Internal, "etcd: malformed key-value in a range answer");
  return out;
}

Outcome<ListResponse> EtcdStorage::list(const ListRequest& req) {
  using Out = Outcome<ListResponse>;
  RangeArgs a;
  wireRange(req.prefix, req.start_after, a.key, a.range_end);
  a.limit = req.limit;
  a.revision = req.revision;
  Reply r = transport_->post("/v3/kv/range", rangeBody(a), true);
  if (r.code == Code::Compacted) raiseCompacted(req.revision + 1);  // etcd compacted past it
  if (!r.ok()) return Out::failure(r.code, r.message);
  Out out;
  // etcd's header carries its current revision even for a read at an older one.
  out.value.revision = req.revision ? req.revision : headerRevision(r.doc);
  if (const json::Value* kvs = json::find(r.doc, "kvs"); kvs && kvs->IsArray()) {
    out.value.kvs.reserve(kvs->Size());
    for (const json::Value& o : kvs->GetArray()) {
      KeyValue kv;
      if (decodeKv(o, KeySpace{opts_.root, opts_.key_prefix}, kv) != Decoded::Ok)
        return Out::failure(Code::Internal, "etcd: malformed key-value in a range answer");
      out.value.kvs.push_back(std::move(kv));
    }
  }
  // count is every key of the range at that revision, whatever the limit: exact.
  out.value.remaining =
      std::max<int64_t>(0, int64Field(r.doc, "count") - static_cast<int64_t>(out.value.kvs.size()));
  return out;
}

int64_t EtcdStorage::currentRevision() {
  {
    std::lock_guard<std::mutex> g(wmu_);
    if (hub_ && hub_->phase == WatchState::Phase::Running) return observed_.load();
  }
  int64_t rev = 0;
  Reply r;
  if (fetchRevision(rev, r)) atomicMax(observed_, rev);
  return observed_.load();
}

Outcome<int64_t> EtcdStorage::consistentRevision() {
  int64_t rev = 0;
  Reply r;
  if (!fetchRevision(rev, r)) return Outcome<int64_t>::failure(r.code, r.message);
  atomicMax(observed_, rev);
  Outcome<int64_t> out;
  out.value = rev;
  return out;
}

Outcome<int64_t> EtcdStorage::compact(int64_t revision) {
  using Out = Outcome<int64_t>;
  WriteScope scope(*this);
  if (!scope) return Out::failure(Code::Unavailable, "storage is shutting down");
  Out out;
  out.value = compacted_.load();
  if (revision <= out.value) return out;
  Reply r = transport_->post("/v3/kv/compaction", compactionBody(revision), true);
  if (r.code == Code::Conflict) {
    // Beyond etcd's revision: compact to the current one instead, as SqliteStorage does.
    int64_t current = 0;
    Reply f;
    if (!fetchRevision(current, f)) return Out::failure(f.code, "compaction failed: " + f.message);
    if (current <= out.value) return out;
    revision = current;
    r = transport_->post("/v3/kv/compaction", compactionBody(revision), true);
  }
  if (r.code == Code::Compacted) {
    // etcd was compacted at or past this revision already (another client, or a retry).
    raiseCompacted(revision);
    out.value = compacted_.load();
    return out;
  }
  if (!r.ok()) return Out::failure(r.code, "compaction failed: " + r.message);
  raiseCompacted(revision);
  out.value = compacted_.load();
  return out;
}

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

  std::unique_lock<std::mutex> lk(wmu_);
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
  bool settled = wcv_.wait_for(lk, std::chrono::milliseconds(opts_.request_timeout_ms), [&] {
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
    std::lock_guard<std::mutex> g(wmu_);
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
  std::vector<Event> some;
  for (const SubPtr& sub : targets) {
    if (sub->removed.load() || revision <= sub->last) continue;
    handTo(*sub, events, revision, some);
  }
  std::lock_guard<std::mutex> g(wmu_);
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
    std::lock_guard<std::mutex> g(wmu_);
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
  std::lock_guard<std::mutex> g(wmu_);
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
  std::unique_lock<std::mutex> lk(wmu_);
  sub->removed.store(true);
  subs_.erase(std::remove(subs_.begin(), subs_.end(), sub), subs_.end());
  joining_.erase(std::remove(joining_.begin(), joining_.end(), sub), joining_.end());
  // A hand-out in progress may be inside this watch's callback: wait for it, so no callback
  // runs after the handle is gone (unless this is that callback).
  if (t_hub_of == this) return;
  uint64_t target = hand_outs_started_;
  wcv_.wait(lk, [&] { return hand_outs_finished_ >= target; });
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
      std::lock_guard<std::mutex> g(wmu_);
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
  std::lock_guard<std::mutex> g(wmu_);
  if (w.phase == WatchState::Phase::Starting) w.phase = WatchState::Phase::Running;
  wcv_.notify_all();
}

// The interface has no way to tell a watcher that its watch ended (compaction overtook a
// reconnect, etcd canceled it): it is logged, writers stop waiting, and the next watch()
// starts a new hub.
void EtcdStorage::endHub(WatchState& w, Code code, const std::string& message) {
  std::lock_guard<std::mutex> g(wmu_);
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
    std::lock_guard<std::mutex> g(wmu_);
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
  std::unique_lock<std::mutex> lk(wmu_);
  wcv_.wait(lk, [&] { return hub_threads_ == 0; });
}

}  // namespace shepherd::storage
