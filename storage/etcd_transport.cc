#include "storage/etcd_transport.h"

#include <utility>

#include "common/log.h"

namespace shepherd::storage::etcd_internal {

namespace {

void globalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_ALL); });
}

size_t collect(char* ptr, size_t size, size_t n, void* userdata) {
  static_cast<std::string*>(userdata)->append(ptr, size * n);
  return size * n;
}

}  // namespace

Reply failed(Code code, std::string message) {
  Reply r;
  r.code = code;
  r.message = std::move(message);
  return r;
}

std::string errorText(const json::Value& body) {
  std::string_view m = json::getString(body, "message");
  if (m.empty()) m = json::getString(body, "error");
  if (m.empty()) {
    if (const json::Value* e = json::find(body, "error"); e && e->IsObject())
      m = json::getString(*e, "message");
  }
  return std::string(m);
}

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
    MutexLock g(mu_);
    if (!idle_.empty()) {
      CURL* c = idle_.back();
      idle_.pop_back();
      return c;
    }
  }
  return curl_easy_init();
}

void Transport::release(CURL* curl) {
  MutexLock g(mu_);
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

}  // namespace shepherd::storage::etcd_internal
