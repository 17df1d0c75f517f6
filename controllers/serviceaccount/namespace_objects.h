// Helpers shared by the controllers that keep one object in every active namespace.
#pragma once

#include <string>

#include "client/informer.h"
#include "client/workqueue.h"

namespace shepherd::controllers {

// True if the namespace exists in the cache and is not being deleted.
bool namespaceActive(const client::Informer& namespaces, const std::string& ns);

// Handlers that queue a namespace when it appears or changes, and when the object named
// `name` in it is changed or deleted.
void queueNamespaceOf(client::Informer& namespaces, client::Informer& objects, client::WorkQueue& queue);

}  // namespace shepherd::controllers
