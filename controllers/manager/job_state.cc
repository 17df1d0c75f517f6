#include "controllers/manager/job_state.h"

namespace shepherd::controllers {

const json::Value* finishedJobCondition(const json::Value& job) {
  const json::Value* conds = json::findPath(job, {"status", "conditions"});
  if (!conds || !conds->IsArray()) return nullptr;
  for (auto& c : conds->GetArray()) {
    std::string_view t = json::getString(c, "type");
    if ((t == "Complete" || t == "Failed") && json::getString(c, "status") == "True") return &c;
  }
  return nullptr;
}

std::string jobFinishedType(const json::Value& job) {
  const json::Value* c = finishedJobCondition(job);
  return c ? std::string(json::getString(*c, "type")) : "";
}

std::optional<clock::TimePoint> jobFinishedAt(const json::Value& job) {
  const json::Value* c = finishedJobCondition(job);
  return c ? clock::parseRfc3339(json::getString(*c, "lastTransitionTime")) : std::nullopt;
}

}  // namespace shepherd::controllers
