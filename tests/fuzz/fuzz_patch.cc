// libFuzzer target: the patch engines. The input is "<target JSON>\0<patch JSON>"; the
// first byte selects JSON patch, merge patch or strategic merge patch (Pod schema).
#include <cstdint>
#include <string_view>

#include "apis/schema.h"
#include "common/json.h"
#include "common/json_merge_patch.h"
#include "handlers/patch/json_patch.h"
#include "handlers/patch/strategic_merge.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shepherd;
  if (size < 2) return 0;
  int engine = data[0] % 3;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  auto nul = rest.find('\0');
  if (nul == std::string_view::npos) return 0;
  json::Document target, patch;
  if (!json::parse(rest.substr(0, nul), target).ok()) return 0;
  if (!json::parse(rest.substr(nul + 1), patch).ok()) return 0;
  switch (engine) {
    case 0:
      (void)handlers::patch::applyJsonPatch(target, patch);
      break;
    case 1:
      if (patch.IsObject()) json::applyMergePatch(target, patch, target.GetAllocator());
      break;
    case 2: {
      const apis::SchemaNode* pod = apis::SchemaRegistry::instance().definition("io.k8s.api.core.v1.Pod");
      (void)handlers::patch::applyStrategicMergePatch(target, patch, pod, target.GetAllocator());
      break;
    }
  }
  (void)json::serialize(target);
  return 0;
}
