// A process that dials a TLS upgrade through the shared dial pool and then exits, as the
// API server does at shutdown after a streaming session. Run by stream_test under the
// sanitizers: the pool's threads hold per-thread OpenSSL state (the TLS handshake draws
// random bytes on them), and if they were let go while the process exits, LeakSanitizer
// reports that state (a race the API server's shutdown once lost now and then).
#include <boost/asio/ssl/context.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "handlers/http/server.h"
#include "handlers/http/upgrade_dialer.h"
#include "pki/certificate_authority.h"
#include "pki/certificates.h"

using namespace shepherd;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  std::filesystem::create_directories(dir);
  auto ca = pki::ensureCertificateAuthority(dir + "/ca.crt", dir + "/ca.key", "probe-ca");
  auto caKey = pki::readFile(dir + "/ca.key");
  if (!ca || !caKey) return 3;
  pki::CertificateRequest req;
  req.common_name = "probe";
  req.ip_addresses = {"127.0.0.1"};
  req.server = true;
  auto serving = pki::issueCertificate(ca.value(), caKey.value(), req);
  if (!serving || !pki::writeFileAtomically(dir + "/tls.crt", serving->cert_pem, 0600) ||
      !pki::writeFileAtomically(dir + "/tls.key", serving->key_pem, 0600))
    return 3;

  http::ServerOptions o;
  o.tls = http::TlsOptions{dir + "/tls.crt", dir + "/tls.key", ""};
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
