// libFuzzer target: the API server's request path end to end. The input is raw bytes on a
// connection: Beast's parser with the server's limits, the conversion to http::Request,
// then the whole ApiHandler — authentication (bearer tokens: one admin, one plain user, or
// garbage), impersonation headers, RBAC with the bootstrap policy, routing, decoding (JSON,
// YAML, protobuf), validation, patches, and the store on a throwaway SQLite database.
// Every request must be answered exactly once, with a status code in 200..599.
#include <unistd.h>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "auth/authenticator.h"
#include "auth/rbac_authorizer.h"
#include "auth/service_account_token.h"
#include "handlers/api_handler.h"
#include "net/http/beast_request.h"
#include "pki/jwt.h"
#include "pki/openssl_util.h"
#include "registry/rbac_policy_source.h"
#include "registry/registry.h"
#include "storage/sqlite_storage.h"

using namespace shepherd;
namespace bhttp = boost::beast::http;

namespace {

class CapturingResponder final : public http::Responder {
 public:
  int answers = 0;
  int status = 0;
  void send(http::Response r) override {
    ++answers;
    status = r.status;
  }
  std::shared_ptr<http::StreamWriter> startStream(int s, http::Headers) override {
    ++answers;
    status = s;
    return nullptr;  // handlers treat a null writer as a client already gone
  }
  void upgrade(http::Response r, std::function<void(std::shared_ptr<http::ByteStream>)> fn) override {
    ++answers;
    status = r.status;
    fn(nullptr);  // as a client that went away before the switch
  }
};

struct World {
  std::unique_ptr<storage::SqliteStorage> store;
  std::unique_ptr<registry::Registry> reg;
  std::unique_ptr<auth::Authenticator> authn;
  std::unique_ptr<auth::ServiceAccountTokens> tokens;
  std::unique_ptr<auth::UnionAuthorizer> authz;
  std::unique_ptr<handlers::ApiHandler> api;

  World() {
    char dir[] = "/tmp/shepherd-fuzz-XXXXXX";
    if (!mkdtemp(dir)) std::abort();
    std::string tokenFile = std::string(dir) + "/tokens.csv";
    if (FILE* f = std::fopen(tokenFile.c_str(), "w")) {
      std::fputs("admin-token,admin,1,system:masters\nuser-token,alice,2,devs\n", f);
      std::fclose(f);
    }
    storage::SqliteOptions so;
    so.path = std::string(dir) + "/state.db";
    so.fsync = false;  // throwaway
    auto opened = storage::SqliteStorage::open(so);
    if (!opened.ok()) std::abort();
    store = std::move(opened.value);
    auto r = registry::Registry::start(*store, {});
    if (!r) std::abort();
    reg = std::move(*r);
    if (!reg->bootstrap(6443)) std::abort();
    auth::AuthenticatorOptions ao;
    ao.token_file = tokenFile;
    auto a = auth::Authenticator::create(ao);
    if (!a) std::abort();
    authn = std::move(*a);
    auto policy = std::make_shared<registry::RbacPolicySource>(*reg);
    std::vector<std::shared_ptr<const auth::Authorizer>> chain{
        std::make_shared<auth::RbacAuthorizer>(policy)};
    authz = std::make_unique<auth::UnionAuthorizer>(std::move(chain));
    // ServiceAccount tokens: issued by serviceaccounts/token, accepted as bearer tokens.
    pki::KeyPtr key(EVP_EC_gen("P-256"));
    std::string pem = pki::pemOf([&](BIO* b) {
      return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    });
    pki::JwtVerifier verifier;
    if (!verifier.addKeys(pem)) std::abort();
    auth::ServiceAccountTokenOptions to;
    to.issuers = {"https://kubernetes.default.svc.cluster.local"};
    auth::ObjectLookup lookup = [this](std::string_view resource, const std::string& ns,
                                       const std::string& name) -> std::optional<auth::LiveObject> {
      registry::Store* st = reg->store("", "v1", std::string(resource));
      if (!st || !st->get(ns, name)) return std::nullopt;
      return auth::LiveObject{};
    };
    tokens =
        std::make_unique<auth::ServiceAccountTokens>(to, *pki::JwtSigner::fromPem(pem), verifier, lookup);
    const auth::ServiceAccountTokens* t = tokens.get();
    authn->addTokenAuthenticator([t](const std::string& token) -> std::optional<meta::UserInfo> {
      auto r = t->authenticate(token, 1'800'000'000);
      if (!r || !*r) return std::nullopt;
      return r->value();
    });
    handlers::ApiHandlerOptions ho;
    ho.service_account_tokens = tokens.get();
    ho.authenticator = authn.get();
    ho.authorizer = authz.get();
    ho.rbac_policy = policy;
    api = std::make_unique<handlers::ApiHandler>(*reg, ho);
    api->setReady();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World world;
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(64 * 1024);  // the server's limits
  parser.body_limit(3 * 1024 * 1024);
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (ec || !parser.is_done()) return 0;  // the server answers 400/413/431 or waits for more
  http::Request req;
  http::fillRequest(req, parser.release());
  // pods/log connects to the address a Node reports: fuzzed nodes could name any address,
  // and this target must not reach beyond loopback.
  if (req.path.find("/log") != std::string::npos) return 0;
  req.remote = "127.0.0.1:40000";
  auto resp = std::make_shared<CapturingResponder>();
  world.api->handle(req, resp);
  if (resp->answers != 1 || resp->status < 200 || resp->status > 599) std::abort();
  return 0;
}
