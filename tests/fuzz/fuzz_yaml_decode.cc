// libFuzzer target: YAML request bodies (yaml-cpp, scalar resolution, alias budget).
#include <cstdint>
#include <string_view>

#include "common/json.h"
#include "common/yaml_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shepherd;
  json::Document d;
  if (yamlToJson(std::string_view(reinterpret_cast<const char*>(data), size), d).ok()) (void)json::serialize(d);
  return 0;
}
