// The server side of TLS: the serving context, and who a peer's certificate names.
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/ssl.hpp>
#include <memory>
#include <optional>
#include <string>

#include "net/http/server.h"

namespace shepherd::http {

// TLS 1.2 and later; client certificates requested (not required) and checked against
// the client CA after the handshake (see TlsOptions). Empty on success, else the reason.
std::string makeSslContext(const TlsOptions& tls, std::optional<boost::asio::ssl::context>& out);

// The subject of a TLS peer's certificate, and whether it verified against the client CA.
std::shared_ptr<const Request::ClientCertificate> peerCertificate(SSL* ssl);

}  // namespace shepherd::http
