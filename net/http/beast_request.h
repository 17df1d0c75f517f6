// A parsed Beast request turned into the library-independent http::Request (method,
// target, percent-decoded path and query, lower-cased headers, body). Shared by the server
// and the request-path fuzz target, so both exercise the same code.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "net/http/message.h"

namespace shepherd::http {

// Fills everything but the connection facts (remote address, TLS, client certificate).
void fillRequest(Request& out, boost::beast::http::request<boost::beast::http::string_body>&& msg);

}  // namespace shepherd::http
