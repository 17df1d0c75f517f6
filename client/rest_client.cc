#include "client/rest_client.h"

#include <curl/curl.h>

#include <chrono>
#include <thread>

namespace shepherd::client {

namespace {

struct CurlInit {
  CurlInit() { curl_global_init(CURL_GLOBAL_ALL); }
};

ApiError transport(const std::string& msg) {
  return ApiError::make(0, "TransportError", msg);
}

size_t collect(char* ptr, size_t size, size_t n, void* userdata) {
  static_cast<std::string*>(userdata)->append(ptr, size * n);
  return size * n;
}

size_t headerLine(char* ptr, size_t size, size_t n, void* userdata) {
  std::string_view line(ptr, size * n);
  auto* ct = static_cast<std::string*>(userdata);
  if (line.size() > 13 && (line.substr(0, 13) == "Content-Type:" || line.substr(0, 13) == "content-type:")) {
    std::string_view v = line.substr(13);
    while (!v.empty() && (v.front() == ' ')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == '\r' || v.back() == '\n')) v.remove_suffix(1);
    *ct = std::string(v);
  }
  return size * n;
}

ApiError statusError(int code, const std::string& body) {
  json::Document d;
  d.Parse(body.data(), body.size());
  ApiError e = ApiError::make(code, "", body.substr(0, 512));
  if (!d.HasParseError() && d.IsObject() && json::getString(d, "kind") == "Status") {
    e.reason = json::getString(d, "reason");
    e.message = json::getString(d, "message");
    if (const json::Value* det = json::find(d, "details")) {
      e.name = json::getString(*det, "name");
      e.kind = json::getString(*det, "kind");
      e.group = json::getString(*det, "group");
      if (auto r = json::getInt(*det, "retryAfterSeconds")) e.retry_after_seconds = static_cast<int>(*r);
      if (const json::Value* causes = json::find(*det, "causes"); causes && causes->IsArray())
        for (auto& c : causes->GetArray())
          e.causes.push_back({std::string(json::getString(c, "reason")),
                              std::string(json::getString(c, "message")),
                              std::string(json::getString(c, "field"))});
    }
  }
  if (e.reason.empty()) {
    switch (code) {
      case 404:
        e.reason = "NotFound";
        break;
      case 409:
        e.reason = "Conflict";
        break;
      case 410:
        e.reason = "Expired";
        break;
      case 429:
        e.reason = "TooManyRequests";
        break;
      default:
        e.reason = code >= 500 ? "InternalError" : "BadRequest";
    }
  }
  return e;
}

Result<json::Document> parsed(Result<HttpResult> r) {
  if (!r) return r.error();
  if (r->status < 200 || r->status >= 300) return statusError(r->status, r->body);
  json::Document d;
  if (r->body.empty()) {
    d.SetObject();
    return d;
  }
  d.Parse(r->body.data(), r->body.size());
  if (d.HasParseError()) return ApiError::internal("the server answered with malformed JSON");
  return d;
}

}  // namespace

struct RestClient::Handle {
  CURL* curl = nullptr;
  std::string server;
};

RestClient::RestClient(ClientConfig cfg) : cfg_(std::move(cfg)) {
  static CurlInit init;
  if (cfg_.servers.empty()) cfg_.servers.push_back("http://127.0.0.1:6443");
}

RestClient::~RestClient() {
  for (Handle* h : idle_) {
    curl_easy_cleanup(h->curl);
    delete h;
  }
}

RestClient::Handle* RestClient::acquire() {
  {
    MutexLock g(mu_);
    if (!idle_.empty()) {
      Handle* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  auto* h = new Handle;
  h->curl = curl_easy_init();
  return h;
}

void RestClient::release(Handle* h) {
  MutexLock g(mu_);
  if (idle_.size() < 64) {
    idle_.push_back(h);
  } else {
    curl_easy_cleanup(h->curl);
    delete h;
  }
}

void RestClient::configure(void* c) {
  CURL* curl = static_cast<CURL*>(c);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, cfg_.user_agent.c_str());
  if (cfg_.insecure_skip_tls_verify) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!cfg_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, cfg_.ca_file.c_str());
  if (!cfg_.ca_data.empty()) {
    curl_blob b{const_cast<char*>(cfg_.ca_data.data()), cfg_.ca_data.size(), CURL_BLOB_NOCOPY};
    curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &b);
  }
  if (!cfg_.cert_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLCERT, cfg_.cert_file.c_str());
  if (!cfg_.cert_data.empty()) {
    curl_blob b{const_cast<char*>(cfg_.cert_data.data()), cfg_.cert_data.size(), CURL_BLOB_NOCOPY};
    curl_easy_setopt(curl, CURLOPT_SSLCERT_BLOB, &b);
  }
  if (!cfg_.key_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLKEY, cfg_.key_file.c_str());
  if (!cfg_.key_data.empty()) {
    curl_blob b{const_cast<char*>(cfg_.key_data.data()), cfg_.key_data.size(), CURL_BLOB_NOCOPY};
    curl_easy_setopt(curl, CURLOPT_SSLKEY_BLOB, &b);
  }
}

Result<HttpResult> RestClient::once(const std::string& server, const std::string& method,
                                    const std::string& path, const std::string& body,
                                    const std::string& content_type, int timeout_ms) {
  Handle* h = acquire();
  CURL* curl = h->curl;
  curl_easy_reset(curl);
  configure(curl);
  std::string url = server + path;
  HttpResult out;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "GET") curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  headers = curl_slist_append(headers, "Expect:");
  if (!cfg_.token.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + cfg_.token).c_str());
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH")
    headers = curl_slist_append(
        headers,
        ("Content-Type: " + (content_type.empty() ? std::string("application/json") : content_type)).c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(timeout_ms, 5000)));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, headerLine);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &out.content_type);
  CURLcode rc = curl_easy_perform(curl);
  long code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_slist_free_all(headers);
  release(h);
  if (rc != CURLE_OK) return transport(std::string(method) + " " + url + ": " + curl_easy_strerror(rc));
  out.status = static_cast<int>(code);
  return out;
}

Result<HttpResult> RestClient::request(const std::string& method, const std::string& path,
                                       const std::string& body, const std::string& content_type,
                                       RequestOptions o) {
  bool idempotent = method == "GET" || method == "HEAD";
  int attempts = o.max_attempts > 0 ? o.max_attempts : (idempotent ? 5 : 1);
  int timeout = o.timeout_ms > 0 ? o.timeout_ms : cfg_.timeout_ms;
  auto backoff = std::chrono::milliseconds(100);
  Result<HttpResult> last = transport("no attempt made");
  for (int attempt = 0; attempt < attempts; ++attempt) {
    // Fail over: try each server once per attempt, starting with the last good one.
    size_t n = cfg_.servers.size();
    size_t first = preferred_.load() % n;
    for (size_t k = 0; k < n; ++k) {
      size_t i = (first + k) % n;
      last = once(cfg_.servers[i], method, path, body, content_type, timeout);
      if (last) {
        preferred_.store(i);
        break;
      }
      // A connection that failed before the request was sent is safe to retry elsewhere;
      // for writes we only fail over when the server could not be reached at all.
      if (!idempotent && last.error().message.find("Couldn't connect") == std::string::npos &&
          last.error().message.find("Could not connect") == std::string::npos)
        break;
    }
    if (last) {
      int s = last->status;
      bool retryable = s == 429 || (idempotent && (s == 500 || s == 502 || s == 503 || s == 504));
      if (!retryable || attempt + 1 == attempts) return last;
      auto wait = backoff;
      if (s == 429) {
        auto e = statusError(s, last->body);
        if (e.retry_after_seconds) wait = std::chrono::seconds(*e.retry_after_seconds);
      }
      std::this_thread::sleep_for(wait);
    } else {
      if (attempt + 1 == attempts) return last;
      std::this_thread::sleep_for(backoff);
    }
    backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
  }
  return last;
}

Result<json::Document> RestClient::get(const std::string& path, RequestOptions o) {
  return parsed(request("GET", path, "", "", o));
}
Result<json::Document> RestClient::post(const std::string& path, const std::string& body, RequestOptions o) {
  return parsed(request("POST", path, body, "application/json", o));
}
Result<json::Document> RestClient::put(const std::string& path, const std::string& body, RequestOptions o) {
  return parsed(request("PUT", path, body, "application/json", o));
}
Result<json::Document> RestClient::patch(const std::string& path, const std::string& body,
                                         const std::string& content_type, RequestOptions o) {
  return parsed(request("PATCH", path, body, content_type, o));
}
Result<json::Document> RestClient::del(const std::string& path, const std::string& body, RequestOptions o) {
  return parsed(request("DELETE", path, body, body.empty() ? "" : "application/json", o));
}

namespace {

struct StreamState {
  const std::function<bool(std::string_view)>* on_line;
  const std::atomic<bool>* stop;
  std::string pending;
  std::string error_body;
  long status = 0;
  CURL* curl;
  bool cancelled = false;
};

size_t streamWrite(char* ptr, size_t size, size_t n, void* userdata) {
  auto* st = static_cast<StreamState*>(userdata);
  size_t len = size * n;
  if (st->status == 0) curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, &st->status);
  if (st->status != 200) {
    st->error_body.append(ptr, len);
    return len;
  }
  st->pending.append(ptr, len);
  size_t start = 0, nl;
  while ((nl = st->pending.find('\n', start)) != std::string::npos) {
    std::string_view line(st->pending.data() + start, nl - start);
    start = nl + 1;
    if (line.empty()) continue;
    if (!(*st->on_line)(line)) {
      st->cancelled = true;
      return 0;  // aborts the transfer
    }
  }
  st->pending.erase(0, start);
  return len;
}

int streamProgress(void* userdata, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* st = static_cast<StreamState*>(userdata);
  if (st->stop && st->stop->load()) {
    st->cancelled = true;
    return 1;
  }
  return 0;
}

}  // namespace

Status RestClient::stream(const std::string& path, const std::function<bool(std::string_view)>& on_line,
                          const std::atomic<bool>* stop, int idle_timeout_s) {
  size_t n = cfg_.servers.size();
  size_t first = preferred_.load() % n;
  Status result = transport("no server");
  for (size_t k = 0; k < n; ++k) {
    size_t i = (first + k) % n;
    CURL* curl = curl_easy_init();
    configure(curl);
    std::string url = cfg_.servers[i] + path;
    StreamState st{&on_line, stop, "", "", 0, curl, false};
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "Accept: application/json");
    if (!cfg_.token.empty())
      headers = curl_slist_append(headers, ("Authorization: Bearer " + cfg_.token).c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    // A silent stream (no bytes, not even bookmarks) for this long is presumed dead.
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(idle_timeout_s));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, streamWrite);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &st);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, streamProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &st);
    CURLcode rc = curl_easy_perform(curl);
    long code = st.status;
    if (code == 0) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    if (st.cancelled) return okStatus();
    if (code != 0 && code != 200) return statusError(static_cast<int>(code), st.error_body);
    if (rc == CURLE_OK) {
      preferred_.store(i);
      return okStatus();  // the server ended the watch
    }
    result = transport("watch " + url + ": " + curl_easy_strerror(rc));
    if (code == 200) return result;  // the stream broke after it started: the caller resumes
  }
  return result;
}

}  // namespace shepherd::client
