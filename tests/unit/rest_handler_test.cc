// The REST handler's dispatch: every subresource the catalog declares is answered.
#include "handlers/rest_handler.h"

#include <gtest/gtest.h>

#include "apis/catalog.h"
#include "registry/registry.h"
#include "storage/sqlite_storage.h"
#include "test_util.h"

using namespace shepherd;

TEST(RestHandler, EveryDeclaredSubresourceAndCreateOnlyResourceHasAHandler) {
  testutil::TempDir dir;
  storage::SqliteOptions o;
  o.path = dir.path() + "/db";
  auto storage = std::move(storage::SqliteStorage::open(o).value);
  auto reg = std::move(registry::Registry::start(*storage, registry::RegistryOptions{}).value());
  handlers::WatchRegistry watches;
  handlers::RestHandler rest(watches, *reg);
  for (const auto& r : apis::Catalog::instance().resources()) {
    for (const auto& sub : r->subresources) {
      if (sub == "status" || sub == "finalize") continue;  // the store's generic parts
      EXPECT_TRUE(rest.subresourceHandler(*r, sub)) << r->plural << "/" << sub;
    }
    if (!r->stored) {
      EXPECT_TRUE(rest.subresourceHandler(*r, "")) << r->plural << " (create-only)";
    }
  }
}
