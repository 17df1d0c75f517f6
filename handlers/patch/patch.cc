#include "handlers/patch/patch.h"

#include "common/json_merge_patch.h"
#include "handlers/patch/json_patch.h"
#include "handlers/patch/strategic_merge.h"

namespace shepherd::handlers::patch {

Result<PatchType> patchTypeOf(const std::string& media_type) {
  if (media_type == "application/json-patch+json") return PatchType::Json;
  if (media_type == "application/merge-patch+json") return PatchType::Merge;
  if (media_type == "application/strategic-merge-patch+json") return PatchType::Strategic;
  if (media_type == "application/apply-patch+yaml" || media_type == "application/apply-patch+cbor")
    return PatchType::Apply;
  return ApiError::unsupportedMediaType(
      "the body of the request was in an unknown format - accepted media types include: "
      "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, "
      "application/strategic-merge-patch+json");
}

Status applyPatch(PatchType type, json::Document& target, const json::Value& patch,
                  const apis::SchemaNode* schema) {
  switch (type) {
    case PatchType::Json:
      return applyJsonPatch(target, patch);
    case PatchType::Merge:
      if (!patch.IsObject()) return ApiError::badRequest("the patch must be a JSON object");
      json::applyMergePatch(target, patch, target.GetAllocator());
      return okStatus();
    case PatchType::Strategic:
      return applyStrategicMergePatch(target, patch, schema, target.GetAllocator());
    case PatchType::Apply:
      break;
  }
  return ApiError::internal("apply patches are handled by server-side apply");
}

}  // namespace shepherd::handlers::patch
