#include "launcher/probes.h"

#include <openssl/bio.h>
#include <openssl/ssl.h>

#include <cstring>
#include <string>

namespace shepherd::launcher {

bool etcdHealthy(int port) {
  std::string host = "127.0.0.1:" + std::to_string(port);
  BIO* bio = BIO_new_connect(host.c_str());
  bool ok = false;
  if (bio && BIO_do_connect(bio) == 1) {
    const char req[] = "GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n";
    if (BIO_write(bio, req, sizeof req - 1) == static_cast<int>(sizeof req - 1)) {
      std::string answer;
      char buf[256];
      for (int n; (n = BIO_read(bio, buf, sizeof buf)) > 0;) answer.append(buf, n);
      ok = answer.find("\"health\":\"true\"") != std::string::npos;
    }
  }
  if (bio) BIO_free_all(bio);
  return ok;
}

bool apiServerReady(int port) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) return false;
  BIO* bio = BIO_new_ssl_connect(ctx);
  bool ok = false;
  if (bio) {
    std::string host = "127.0.0.1:" + std::to_string(port);
    BIO_set_conn_hostname(bio, host.c_str());
    if (BIO_do_connect(bio) == 1 && BIO_do_handshake(bio) == 1) {
      const char req[] = "GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
      if (BIO_write(bio, req, sizeof req - 1) == static_cast<int>(sizeof req - 1)) {
        char buf[64] = {0};
        int n = BIO_read(bio, buf, sizeof buf - 1);
        ok = n > 12 && std::strncmp(buf + 9, "200", 3) == 0;
      }
    }
    BIO_free_all(bio);
  }
  SSL_CTX_free(ctx);
  return ok;
}

}  // namespace shepherd::launcher
