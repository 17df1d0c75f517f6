#include "net/http/beast_request.h"

#include <cctype>

#include "common/url.h"

namespace shepherd::http {

void fillRequest(Request& out, boost::beast::http::request<boost::beast::http::string_body>&& msg) {
  out.method = std::string(msg.method_string());
  out.target = std::string(msg.target());
  std::string_view target = msg.target();
  auto q = target.find('?');
  out.path = percentDecode(target.substr(0, q), false);
  if (q != std::string_view::npos) {
    std::string_view qs = target.substr(q + 1);
    size_t start = 0;
    while (start <= qs.size()) {
      size_t amp = qs.find('&', start);
      if (amp == std::string_view::npos) amp = qs.size();
      std::string_view part = qs.substr(start, amp - start);
      if (!part.empty()) {
        auto eq = part.find('=');
        if (eq == std::string_view::npos)
          out.query.emplace_back(percentDecode(part, true), "");
        else
          out.query.emplace_back(percentDecode(part.substr(0, eq), true),
                                 percentDecode(part.substr(eq + 1), true));
      }
      start = amp + 1;
    }
  }
  for (auto& f : msg) {
    std::string name(f.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers.emplace_back(std::move(name), std::string(f.value()));
  }
  out.body = std::move(msg.body());
}

}  // namespace shepherd::http
