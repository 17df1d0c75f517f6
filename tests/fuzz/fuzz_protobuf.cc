// libFuzzer target: protobuf request bodies (k8s envelope + field tables).
#include <cstdint>
#include <string>

#include "apis/protobuf_decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shepherd;
  // Most inputs get the magic prefix so the fuzzer explores the decoder, not the check.
  std::string body(reinterpret_cast<const char*>(data), size);
  if (size > 0 && data[0] & 1) body = std::string("k8s\0", 4) + body.substr(1);
  json::Document d;
  if (apis::decodeProtobufEnvelope(body, d).ok()) (void)json::serialize(d);
  return 0;
}
