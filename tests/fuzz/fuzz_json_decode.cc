// libFuzzer target: request-body decoding as the API server does it — JSON parse, schema
// type/unknown-field check and pruning for a Pod, and YAML output of the result.
#include <cstdint>
#include <string_view>
#include <vector>

#include "apis/schema.h"
#include "common/json.h"
#include "common/yaml_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shepherd;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  json::Document d;
  if (!json::parse(text, d).ok()) return 0;
  const auto& schemas = apis::SchemaRegistry::instance();
  const apis::SchemaNode* pod = schemas.definition("io.k8s.api.core.v1.Pod");
  std::vector<apis::SchemaFinding> findings;
  schemas.check(d, pod, findings);
  schemas.prune(d, pod);
  (void)jsonToYaml(d);
  return 0;
}
