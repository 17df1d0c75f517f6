#include "net/http/tls_context.h"

#include <openssl/x509.h>

#include <vector>

namespace shepherd::http {

namespace net = boost::asio;

std::shared_ptr<const Request::ClientCertificate> peerCertificate(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert) return nullptr;
  auto out = std::make_shared<Request::ClientCertificate>();
  long result = SSL_get_verify_result(ssl);
  out->verified = result == X509_V_OK;
  if (!out->verified) out->error = X509_verify_cert_error_string(result);
  X509_NAME* subject = X509_get_subject_name(cert);
  auto entry = [&](int nid, std::vector<std::string>& into) {
    for (int i = X509_NAME_get_index_by_NID(subject, nid, -1); i >= 0;
         i = X509_NAME_get_index_by_NID(subject, nid, i)) {
      ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i));
      unsigned char* utf8 = nullptr;
      int n = ASN1_STRING_to_UTF8(&utf8, data);
      if (n >= 0) into.emplace_back(reinterpret_cast<char*>(utf8), static_cast<size_t>(n));
      OPENSSL_free(utf8);
    }
  };
  std::vector<std::string> cn;
  entry(NID_commonName, cn);
  if (!cn.empty()) out->common_name = cn.front();
  entry(NID_organizationName, out->organizations);
  X509_free(cert);
  return out;
}

std::string makeSslContext(const TlsOptions& tls, std::optional<net::ssl::context>& out) {
  out.emplace(net::ssl::context::tls_server);
  auto& ctx = *out;
  boost::system::error_code ec;
  ctx.set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                      net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                      net::ssl::context::no_tlsv1_1,
                  ec);
  ctx.use_certificate_chain_file(tls.cert_file, ec);
  if (ec) return "cannot load the serving certificate " + tls.cert_file + ": " + ec.message();
  ctx.use_private_key_file(tls.key_file, net::ssl::context::pem, ec);
  if (ec) return "cannot load the serving key " + tls.key_file + ": " + ec.message();
  if (!tls.client_ca_file.empty()) {
    ctx.load_verify_file(tls.client_ca_file, ec);
    if (ec) return "cannot load the client CA " + tls.client_ca_file + ": " + ec.message();
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(tls.client_ca_file.c_str());
    if (!names) return "no certificate in the client CA file " + tls.client_ca_file;
    SSL_CTX_set_client_CA_list(ctx.native_handle(), names);
    ctx.set_verify_mode(net::ssl::verify_peer, ec);
    ctx.set_verify_callback([](bool, net::ssl::verify_context&) { return true; }, ec);
    static const unsigned char kSessionContext[] = "shepherd";
    SSL_CTX_set_session_id_context(ctx.native_handle(), kSessionContext, sizeof kSessionContext - 1);
  }
  return "";
}

}  // namespace shepherd::http
