// ServiceAccount tokens for the API server: the issuer and authenticator from the
// --service-account-* options; tokens are checked against the live ServiceAccounts, Pods
// and Secrets of the registry.
#pragma once

#include <memory>

#include "apiserver/options.h"
#include "auth/service_account_token.h"
#include "registry/registry.h"

namespace shepherd::apiserver {

Result<std::unique_ptr<auth::ServiceAccountTokens>> serviceAccountTokens(const Options& options,
                                                                         registry::Registry& reg);

}  // namespace shepherd::apiserver
