// A process that dials a TLS upgrade through the shared dial pool and then exits, as the
// API server does at shutdown after a streaming session. Run by stream_test under the
// sanitizers: the pool's threads hold per-thread OpenSSL state (the TLS handshake draws
// random bytes on them), and if they were let go while the process exits, LeakSanitizer
// reports that state (a race the API server's shutdown once lost now and then).
#include <boost/asio/ssl/context.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "net/http/server.h"
#include "net/http/upgrade_dialer.h"
#include "pki/cluster_pki.h"

using namespace shepherd;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PKI_DIR\n", argv[0]);
    return 2;
  }
  // Created by the first run and reused by the next (the serving certificate names 127.0.0.1).
  const std::string dir = argv[1];
  if (!pki::ensureClusterPki({dir, "", {}, {}})) return 3;

  http::ServerOptions o;
  o.tls = http::TlsOptions{dir + "/apiserver.crt", dir + "/apiserver.key", ""};
  http::Server server(o, [](http::Request&, std::shared_ptr<http::Responder> resp) {
    resp->upgrade(http::Response{101, {{"Connection", "Upgrade"}, {"Upgrade", "probe/1"}}, ""},
                  [](std::shared_ptr<http::ByteStream> s) { s->close(); });
  });
  auto port = server.start();
  if (!port) return 4;

  auto tls = std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_client);
  tls->set_verify_mode(boost::asio::ssl::verify_peer);
  tls->load_verify_file(dir + "/ca.crt");
  http::UpgradeRequest up;
  up.host = "127.0.0.1";
  up.port = port.value();
  up.tls = tls;
  up.target = "/up";
  up.headers = {{"Connection", "Upgrade"}, {"Upgrade", "probe/1"}};
  auto r = http::dialUpgrade(up);
  if (!r || r->response.status != 101 || !r->stream) {
    std::fprintf(stderr, "dial: %s\n", r ? "no upgrade" : r.error().message.c_str());
    return 5;
  }
  r->stream->close();
  server.stop(0);
  return 0;
}
