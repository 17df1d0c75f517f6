// The API server's storage backend from its options: the embedded SQLite store in the data
// directory, or etcd (--etcd-servers) with keys under --etcd-prefix, as upstream's layout.
#pragma once

#include <memory>

#include "apiserver/options.h"
#include "storage/storage.h"

namespace shepherd::apiserver {

Result<std::unique_ptr<storage::Storage>> openStorage(const Options& o);

}  // namespace shepherd::apiserver
