// Authorization, as kube-apiserver's: each authorizer allows, denies or has no opinion;
// a union asks them in order and the first allow or deny wins, after a privileged check
// that lets system:masters do everything. A request nobody allows is answered 403 with
// upstream's message (forbiddenError).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "auth/request_info.h"
#include "common/api_error.h"
#include "meta/user_info.h"

namespace shepherd::auth {

struct Decision {
  enum class Kind { Allow, Deny, NoOpinion };
  Kind kind = Kind::NoOpinion;
  std::string reason;
  bool allowed() const { return kind == Kind::Allow; }
};

// Thread-safety: authorize() is called concurrently from request workers.
class Authorizer {
 public:
  virtual ~Authorizer() = default;
  virtual Decision authorize(const meta::UserInfo& user, const RequestInfo& request) const = 0;
};

class AlwaysAllowAuthorizer final : public Authorizer {
 public:
  Decision authorize(const meta::UserInfo&, const RequestInfo&) const override {
    return {Decision::Kind::Allow, ""};
  }
};

// system:masters first, then `chain` in order; the reasons of authorizers without an
// opinion are joined by newlines.
class UnionAuthorizer final : public Authorizer {
 public:
  explicit UnionAuthorizer(std::vector<std::shared_ptr<const Authorizer>> chain) : chain_(std::move(chain)) {}
  Decision authorize(const meta::UserInfo& user, const RequestInfo& request) const override;

 private:
  std::vector<std::shared_ptr<const Authorizer>> chain_;
};

// 403 Forbidden for a request that was not allowed (`reason` appended after ": ").
ApiError forbiddenError(const meta::UserInfo& user, const RequestInfo& request, const std::string& reason);

}  // namespace shepherd::auth
