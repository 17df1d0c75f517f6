// Root CA publisher: every active namespace has the ConfigMap `kube-root-ca.crt` whose
// `ca.crt` is the cluster's CA bundle, recreated when deleted and repaired when edited,
// as upstream's root-ca-cert-publisher.
#pragma once

#include "client/shared_informers.h"
#include "controllers/manager/controller.h"

namespace shepherd::controllers {

// Thread-safety: as Controller.
class RootCaPublisher : public Controller {
 public:
  RootCaPublisher(client::Client& c, client::SharedInformers& informers, std::string ca_pem);

 protected:
  Result<SyncResult> sync(const std::string& ns) override;

 private:
  client::Client& client_;
  client::Informer& namespaces_;
  client::Informer& configmaps_;
  std::string ca_pem_;
};

}  // namespace shepherd::controllers
