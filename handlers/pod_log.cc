// pods/log (GET .../pods/{name}/log): validates PodLogOptions, picks the container as
// upstream does, and relays the response of the node's kubelet port
// (/containerLogs/{ns}/{pod}/{container}) — streaming, so `kubectl logs -f` follows.
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "common/clock.h"
#include "common/url.h"
#include "handlers/pod_target.h"
#include "handlers/rest_handler.h"
#include "handlers/status.h"
#include "net/stream/websocket_responder.h"

namespace shepherd::handlers {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;

namespace {

struct LogRequest {
  std::string container;
  std::string query;  // forwarded to the kubelet
};

// PodLogOptions from the query, validated as upstream's ValidatePodLogOptions.
Result<LogRequest> parseLogOptions(const http::Request& req, const std::string& pod) {
  LogRequest out;
  out.container = req.queryValue("container");
  std::vector<StatusCause> causes;
  auto number = [&](const char* key) -> Result<std::optional<int64_t>> {
    if (!req.hasQuery(key)) return std::optional<int64_t>();
    std::string text(req.queryValue(key));
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE)
      return ApiError::badRequest("unable to parse the query parameter " + std::string(key) + ": \"" + text +
                                  "\" is not an integer");
    return std::optional<int64_t>(v);
  };
  auto tail = number("tailLines");
  if (!tail) return tail.error();
  auto limit = number("limitBytes");
  if (!limit) return limit.error();
  auto since = number("sinceSeconds");
  if (!since) return since.error();
  if (*tail && **tail < 0)
    causes.push_back({"FieldValueInvalid",
                      "Invalid value: " + std::to_string(**tail) + ": must be greater than or equal to 0",
                      "tailLines"});
  if (*limit && **limit < 1)
    causes.push_back({"FieldValueInvalid",
                      "Invalid value: " + std::to_string(**limit) + ": must be greater than 0",
                      "limitBytes"});
  if (*since && req.hasQuery("sinceTime"))
    causes.push_back({"FieldValueForbidden",
                      "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified", ""});
  else if (*since && **since < 1)
    causes.push_back({"FieldValueInvalid",
                      "Invalid value: " + std::to_string(**since) + ": must be greater than 0",
                      "sinceSeconds"});
  if (req.hasQuery("sinceTime") && !clock::parseRfc3339(req.queryValue("sinceTime")))
    return ApiError::badRequest("unable to parse the query parameter sinceTime: \"" +
                                std::string(req.queryValue("sinceTime")) + "\" is not an RFC 3339 time");
  if (!causes.empty()) return ApiError::invalid("", "PodLogOptions", pod, causes);
  for (const char* key : {"follow", "previous", "timestamps"})
    if (req.queryBool(key)) out.query += std::string(out.query.empty() ? "?" : "&") + key + "=true";
  if (*tail) out.query += std::string(out.query.empty() ? "?" : "&") + "tailLines=" + std::to_string(**tail);
  if (*limit)
    out.query += std::string(out.query.empty() ? "?" : "&") + "limitBytes=" + std::to_string(**limit);
  if (*since)
    out.query += std::string(out.query.empty() ? "?" : "&") + "sinceSeconds=" + std::to_string(**since);
  if (req.hasQuery("sinceTime"))
    out.query +=
        std::string(out.query.empty() ? "?" : "&") + "sinceTime=" + urlEncode(req.queryValue("sinceTime"));
  return out;
}

bool tlsPending(beast::tcp_stream&) {
  return false;
}
bool tlsPending(beast::ssl_stream<beast::tcp_stream&>& s) {
  return SSL_pending(s.native_handle()) > 0;
}

// Sends GET `target` on `stream` (plain or TLS) and relays the kubelet's answer. The
// socket is polled so a client that goes away ends the relay even while the kubelet has
// nothing to send (a quiet `logs -f`); bytes TLS has already decrypted are read first.
template <class Stream>
void relayKubeletLogs(Stream& stream, const std::string& host, const std::string& target,
                      const std::string& nodeName, const std::string& pod,
                      const std::shared_ptr<http::Responder>& resp) {
  beast::tcp_stream& tcp = beast::get_lowest_layer(stream);
  beast::error_code ec;
  bhttp::request<bhttp::empty_body> out(bhttp::verb::get, target, 11);
  out.set(bhttp::field::host, host);
  out.set(bhttp::field::connection, "close");
  bhttp::write(stream, out, ec);
  beast::flat_buffer buf;
  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.body_limit(boost::none);
  if (!ec) bhttp::read_header(stream, buf, parser, ec);
  if (ec)
    return resp->send(errorResponse(ApiError::make(
        503, "ServiceUnavailable", "reading logs from node " + nodeName + " failed: " + ec.message())));
  int code = parser.get().result_int();
  char piece[16384];
  auto readPiece = [&](size_t& got) {
    parser.get().body().data = piece;
    parser.get().body().size = sizeof piece;
    bhttp::read_some(stream, buf, parser, ec);
    if (ec == bhttp::error::need_buffer) ec = {};
    got = sizeof piece - parser.get().body().size;
  };
  if (code != 200) {
    std::string body;
    while (!parser.is_done() && !ec && body.size() < 50 * 1024) {
      size_t got = 0;
      readPiece(got);
      body.append(piece, got);
    }
    return resp->send(errorResponse(kubeletError(code, body, "pods/log", pod)));
  }
  auto writer = resp->startStream(200, {{"Content-Type", "text/plain"}});
  if (!writer) return;  // the client is gone
  int fd = tcp.socket().native_handle();
  while (!parser.is_done() && !writer->closed()) {
    if (buf.size() == 0 && !tlsPending(stream)) {
      pollfd p{fd, POLLIN, 0};
      int r = ::poll(&p, 1, 250);
      if (r == 0) continue;
      if (r < 0 && errno != EINTR) break;
    }
    size_t got = 0;
    readPiece(got);
    if (got > 0) {
      http::Chunk c;
      c.data.assign(piece, got);
      if (!writer->write(std::move(c))) break;
    }
    if (ec) break;
  }
  writer->finish();
}

}  // namespace

std::shared_ptr<net::ssl::context> kubeletClientTls(const KubeletClientTls& o, std::string& error) {
  auto ctx = std::make_shared<net::ssl::context>(net::ssl::context::tls_client);
  beast::error_code ec;
  ctx->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                   net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 | net::ssl::context::no_tlsv1_1);
  ctx->use_certificate_chain_file(o.cert_file, ec);
  if (!ec) ctx->use_private_key_file(o.key_file, net::ssl::context::pem, ec);
  if (ec) {
    error = "kubelet client certificate " + o.cert_file + ": " + ec.message();
    return nullptr;
  }
  // As kube-apiserver without --kubelet-certificate-authority, the kubelet's serving
  // certificate (self-signed by default) is not verified; with it, it must chain to it.
  if (!o.ca_file.empty()) {
    ctx->load_verify_file(o.ca_file, ec);
    if (ec) {
      error = "kubelet certificate authority " + o.ca_file + ": " + ec.message();
      return nullptr;
    }
    ctx->set_verify_mode(net::ssl::verify_peer);
  } else {
    ctx->set_verify_mode(net::ssl::verify_none);
  }
  return ctx;
}

void RestHandler::podLog(http::Request& req, const std::shared_ptr<http::Responder>& httpResp,
                         const RequestScope& s) {
  // A WebSocket client (binary.k8s.io) gets the same answer as messages.
  std::shared_ptr<http::Responder> resp = httpResp;
  if (stream::isWebSocketUpgrade(req)) {
    std::string error;
    resp = stream::websocketStreamResponder(req, httpResp, error);
    if (!resp) return httpResp->send(errorResponse(ApiError::badRequest(error)));
  }
  if (req.method != "GET")
    return resp->send(errorResponse(ApiError::methodNotSupported("", "pods/log", req.method)));
  auto opts = parseLogOptions(req, s.name);
  if (!opts) return resp->send(errorResponse(opts.error()));
  auto obj = s.store->get(s.ns, s.name);
  if (!obj) return resp->send(errorResponse(obj.error()));
  json::Document pod;
  pod.Parse(obj.value()->json.data(), obj.value()->json.size());
  auto chosen = podContainer(pod, opts->container, s.name);
  if (!chosen) return resp->send(errorResponse(chosen.error()));
  std::string container = *chosen;
  http::Headers textHeaders{{"Content-Type", "text/plain"}};
  std::string nodeName(json::getStringPath(pod, {"spec", "nodeName"}));
  if (nodeName.empty()) {  // not scheduled: no logs yet
    http::Response r;
    r.headers = textHeaders;
    return resp->send(std::move(r));
  }
  auto endpoint = kubeletEndpoint(registry_, nodeName);
  if (!endpoint) return resp->send(errorResponse(endpoint.error()));
  const std::string& host = endpoint->host;

  std::string target = "/containerLogs/" + urlEncode(s.ns) + "/" + urlEncode(s.name) + "/" +
                       urlEncode(container) + opts->query;
  net::io_context ioc;
  beast::tcp_stream tcp(ioc);
  beast::error_code ec;
  net::ip::tcp::resolver resolver(ioc);
  auto endpoints = resolver.resolve(host, std::to_string(endpoint->port), ec);
  if (!ec) {
    // Beast's timeouts apply to asynchronous operations only: connect that way, then bound
    // every blocking read and write on the socket itself, so a node that names an address
    // which never answers cannot hold a worker thread.
    tcp.expires_after(std::chrono::seconds(5));
    tcp.async_connect(endpoints, [&ec](beast::error_code e, const net::ip::tcp::endpoint&) { ec = e; });
    ioc.run();
    ioc.restart();
  }
  if (!ec) {
    tcp.expires_never();
    timeval rcv{60, 0}, snd{10, 0};
    int fd = tcp.socket().native_handle();
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof rcv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof snd);
  }
  if (ec)
    return resp->send(errorResponse(ApiError::make(
        503, "ServiceUnavailable", "the kubelet of node " + nodeName + " is unreachable: " + ec.message())));
  if (!kubelet_tls_) return relayKubeletLogs(tcp, host, target, nodeName, s.name, resp);
  // HTTPS with the API server's kubelet-client certificate, as kube-apiserver talks to kubelets.
  beast::ssl_stream<beast::tcp_stream&> tls(tcp, *kubelet_tls_);
  SSL_set_tlsext_host_name(tls.native_handle(), host.c_str());
  // With --kubelet-certificate-authority the certificate must also name the node's address.
  beast::error_code addrEc;
  net::ip::make_address(host, addrEc);
  if (!addrEc)
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(tls.native_handle()), host.c_str());
  else
    SSL_set1_host(tls.native_handle(), host.c_str());
  tls.handshake(net::ssl::stream_base::client, ec);
  if (ec)
    return resp->send(errorResponse(ApiError::make(
        503, "ServiceUnavailable", "TLS with the kubelet of node " + nodeName + " failed: " + ec.message())));
  relayKubeletLogs(tls, host, target, nodeName, s.name, resp);
}

}  // namespace shepherd::handlers
