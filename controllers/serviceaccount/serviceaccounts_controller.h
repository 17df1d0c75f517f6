// ServiceAccounts controller: every active namespace has the ServiceAccount `default`
// (recreated when deleted), as upstream's serviceaccounts-controller.
#pragma once

#include "client/shared_informers.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers {

// Thread-safety: as Controller.
class ServiceAccountsController : public Controller {
 public:
  ServiceAccountsController(client::Client& c, client::SharedInformers& informers);

 protected:
  Result<SyncResult> sync(const std::string& ns) override;

 private:
  client::Client& client_;
  client::Informer& namespaces_;
  client::Informer& accounts_;
};

}  // namespace shepherd::controllers
