#include "registry/continue_token.h"

#include "common/base64.h"
#include "common/json.h"

namespace shepherd::registry {

std::string encodeContinue(const ContinueToken& t) {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  d.AddMember("v", "meta.k8s.io/v1", a);
  d.AddMember("rv", json::Value(static_cast<int64_t>(t.revision)), a);
  d.AddMember("start", json::str(t.start_after + std::string(1, '\0'), a), a);
  return base64Encode(json::serialize(d), true);
}

std::optional<ContinueToken> decodeContinue(const std::string& token) {
  auto raw = base64Decode(token);
  if (!raw) return std::nullopt;
  json::Document d;
  d.Parse(raw->data(), raw->size());
  if (d.HasParseError() || !d.IsObject()) return std::nullopt;
  if (json::getString(d, "v") != "meta.k8s.io/v1") return std::nullopt;
  auto rv = json::getInt(d, "rv");
  const json::Value* start = json::find(d, "start");
  if (!rv || *rv <= 0 || !start || !start->IsString()) return std::nullopt;
  ContinueToken t;
  t.revision = *rv;
  t.start_after = std::string(json::view(*start));
  // The token names the next key to read: "<last>\0".
  if (!t.start_after.empty() && t.start_after.back() == '\0') t.start_after.pop_back();
  if (t.start_after.find("..") != std::string::npos) return std::nullopt;
  return t;
}

}  // namespace shepherd::registry
