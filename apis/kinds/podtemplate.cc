// PodTemplate: a stored pod template; its spec gets the same defaults as a pod's.
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"

namespace shepherd::apis::kinds {

namespace {

class PodTemplateStrategy final : public Strategy {
 public:
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    if (json::Value* spec = json::findPath(obj, {"template", "spec"})) defaultPodSpec(*spec, a);
  }
  void validate(const json::Value& obj, FieldErrors& errs) const override {
    static const json::Value empty(rapidjson::kObjectType);
    const json::Value* tmpl = json::find(obj, "template");
    validatePodTemplate(tmpl && tmpl->IsObject() ? *tmpl : empty, "template", errs);
  }

  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Containers", "string", "", "Names of each container in the template.", 0},
            {"Images", "string", "", "Images referenced by each container in the template.", 0},
            {"Pod Labels", "string", "", "The labels for the pod template.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    static const json::Value empty(rapidjson::kObjectType);
    const json::Value* spec = json::findPath(obj, {"template", "spec"});
    if (!spec) spec = &empty;
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(containerNames(*spec), a), a);
    cells.PushBack(json::str(containerImages(*spec), a), a);
    cells.PushBack(json::str(formatLabels(json::findPath(obj, {"template", "metadata", "labels"})), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> podTemplateStrategy() {
  return std::make_shared<PodTemplateStrategy>();
}

}  // namespace shepherd::apis::kinds
