// Namespace lifecycle controller: a namespace with a deletionTimestamp is emptied (see
// NamespacedContentDeleter), its progress reported in status.conditions, and once nothing
// is left, the `kubernetes` finalizer is removed through /finalize so the API server can
// delete it. Requeued after half the estimate while content is still going away.
#pragma once

#include "client/shared_informers.h"
#include "controllers/manager/controller.h"
#include "controllers/namespace/content_deleter.h"

namespace shepherd::controllers {

// Thread-safety: as Controller; the informer handlers only add keys to the queue.
class NamespaceController : public Controller {
 public:
  NamespaceController(client::Client& c, client::SharedInformers& informers);

 protected:
  Result<SyncResult> sync(const std::string& key) override;

 private:
  // The namespace as it is after the update (or unchanged).
  Result<json::Document> updateConditions(const json::Value& ns, const ContentDeletionReport& report);
  Status finalize(const json::Value& ns);

  client::Client& client_;
  NamespacedContentDeleter deleter_;
};

}  // namespace shepherd::controllers
