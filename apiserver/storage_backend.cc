#include "apiserver/storage_backend.h"

#include "common/log.h"
#include "storage/etcd_storage.h"
#include "storage/sqlite_storage.h"

namespace shepherd::apiserver {

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : ",") + e;
  return s;
}

}  // namespace

Result<std::unique_ptr<storage::Storage>> openStorage(const Options& o) {
  if (o.embeddedStore()) {
    storage::SqliteOptions so;
    so.path = o.data_dir + "/state.db";
    auto opened = storage::SqliteStorage::open(so);
    if (!opened.ok()) return ApiError::internal(opened.message);
    return std::unique_ptr<storage::Storage>(std::move(opened.value));
  }
  storage::EtcdOptions eo;
  eo.endpoints = o.etcd_servers;
  // Our keys start with /registry; etcd holds them under --etcd-prefix, as upstream does.
  eo.root = "/registry";
  eo.key_prefix = o.etcd_prefix;
  eo.ca_file = o.etcd_ca_file;
  eo.cert_file = o.etcd_cert_file;
  eo.key_file = o.etcd_key_file;
  auto opened = storage::EtcdStorage::open(eo);
  if (!opened.ok())
    return ApiError::internal("cannot reach etcd at " + joined(o.etcd_servers) + ": " + opened.message);
  LOG_INFO("storage: etcd at " << joined(o.etcd_servers) << ", keys under " << eo.key_prefix);
  return std::unique_ptr<storage::Storage>(std::move(opened.value));
}

}  // namespace shepherd::apiserver
