#include "plugins/admission/priority.h"

#include "plugins/admission/pod_defaults.h"

namespace shepherd::plugins::admission {

using shepherd::admission::Attributes;
using shepherd::admission::Operation;

namespace {

ApiError forbidden(const Attributes& a, const json::Value& obj, const std::string& why) {
  std::string name(json::getStringPath(obj, {"metadata", "name"}));
  return ApiError::forbidden(a.resource->group, a.resource->plural, name.empty() ? "Unknown" : name, why);
}

registry::Store* classStore(registry::Registry* r) {
  return r ? r->store("scheduling.k8s.io", "v1", "priorityclasses") : nullptr;
}

bool isPriorityClass(const Attributes& a) {
  return a.resource && a.resource->group == "scheduling.k8s.io" && a.resource->plural == "priorityclasses" &&
         a.subresource.empty();
}

void copyIfMissing(json::Value& spec, const json::Value* old_spec, const char* field, json::Allocator& a) {
  if (json::find(spec, field) || !old_spec) return;
  if (const json::Value* v = json::find(*old_spec, field)) json::set(spec, field, json::Value(*v, a), a);
}

}  // namespace

Result<json::Document> Priority::defaultClass() const {
  json::Document best;
  registry::Store* s = classStore(registry_);
  if (!s) return best;
  auto page = s->list(registry::ListOptions{});
  if (!page) return page.error();
  for (const auto& o : page.value().items) {
    json::Document d;
    if (auto st = json::parse(o->json, d); !st) return st.error();
    if (!json::getBool(d, "globalDefault")) continue;
    if (best.IsObject() && json::getInt(best, "value").value_or(0) <= json::getInt(d, "value").value_or(0))
      continue;
    best.Swap(d);
  }
  return best;
}

Status Priority::admit(const Attributes& a, json::Document& obj, const json::Value* old) const {
  if (!isPod(a) || a.operation == Operation::Delete) return okStatus();
  json::Value* spec = json::find(obj, "spec");
  if (!spec || !spec->IsObject()) return okStatus();
  auto& al = obj.GetAllocator();
  if (a.operation == Operation::Update) {
    // Set on create; validation keeps them from changing.
    const json::Value* oldSpec = old ? json::find(*old, "spec") : nullptr;
    copyIfMissing(*spec, oldSpec, "priority", al);
    copyIfMissing(*spec, oldSpec, "preemptionPolicy", al);
    return okStatus();
  }
  std::string className(json::getString(*spec, "priorityClassName"));
  int64_t priority = 0;
  std::string policy = "PreemptLowerPriority";
  if (className.empty()) {
    auto d = defaultClass();
    if (!d) return ApiError::internal("failed to get default priority class: " + d.error().message);
    if (d.value().IsObject()) {
      className = json::getStringPath(d.value(), {"metadata", "name"});
      priority = json::getInt(d.value(), "value").value_or(0);
      policy = json::getString(d.value(), "preemptionPolicy", "PreemptLowerPriority");
      json::setString(*spec, "priorityClassName", className, al);
    }
  } else {
    registry::Store* s = classStore(registry_);
    auto pc = s ? s->get("", className) : Result<registry::ObjectPtr>(ApiError::notFound("", "", className));
    if (!pc) {
      if (pc.error().code == 404)
        return forbidden(a, obj, "no PriorityClass with name " + className + " was found");
      return ApiError::internal("failed to get PriorityClass with name " + className + ": " +
                                pc.error().message);
    }
    json::Document d;
    if (auto st = json::parse(pc.value()->json, d); !st) return st.error();
    priority = json::getInt(d, "value").value_or(0);
    policy = json::getString(d, "preemptionPolicy", "PreemptLowerPriority");
  }
  if (auto p = json::getInt(*spec, "priority"); p && *p != priority)
    return forbidden(a, obj,
                     "the integer value of priority (" + std::to_string(*p) +
                         ") must not be provided in pod spec; priority admission controller computed " +
                         std::to_string(priority) + " from the given PriorityClass name");
  json::set(*spec, "priority", json::Value(priority), al);
  if (const json::Value* p = json::find(*spec, "preemptionPolicy");
      p && p->IsString() && json::view(*p) != policy)
    return forbidden(a, obj,
                     "the string value of PreemptionPolicy (" + std::string(json::view(*p)) +
                         ") must not be provided in pod spec; priority admission controller computed " +
                         policy + " from the given PriorityClass name");
  json::setString(*spec, "preemptionPolicy", policy, al);
  return okStatus();
}

Status Priority::validate(const Attributes& a, const json::Value& obj, const json::Value*) const {
  if (!isPriorityClass(a) || a.operation == Operation::Delete || !json::getBool(obj, "globalDefault"))
    return okStatus();
  auto d = defaultClass();
  if (!d) return ApiError::internal("failed to get default priority class: " + d.error().message);
  if (!d.value().IsObject()) return okStatus();
  std::string current(json::getStringPath(d.value(), {"metadata", "name"}));
  if (a.operation == Operation::Create || current != json::getStringPath(obj, {"metadata", "name"}))
    return forbidden(
        a, obj, "PriorityClass " + current + " is already marked as default. Only one default can exist");
  return okStatus();
}

}  // namespace shepherd::plugins::admission
