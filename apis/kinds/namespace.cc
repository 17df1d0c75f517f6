// Namespace: created Active with the `kubernetes` finalizer, which the namespace
// controller removes through /finalize once the namespace is empty.
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"

namespace shepherd::apis::kinds {

namespace {

class NamespaceStrategy final : public Strategy {
 public:
  NameRule nameRule() const override { return NameRule::Label; }

  void prepareForCreate(json::Document& obj, const StrategyContext&) const override {
    auto& a = obj.GetAllocator();
    json::Value status(rapidjson::kObjectType);
    status.AddMember("phase", "Active", a);
    json::set(obj, "status", std::move(status), a);
    json::Value& spec = json::ensureObject(obj, "spec", a);
    json::Value fin(rapidjson::kArrayType);
    fin.PushBack("kubernetes", a);
    json::set(spec, "finalizers", std::move(fin), a);
  }

  void prepareForUpdate(json::Document& obj, const json::Value& old, const StrategyContext&) const override {
    // spec.finalizers change only through /finalize.
    auto& a = obj.GetAllocator();
    if (const json::Value* spec = json::find(old, "spec"))
      json::set(obj, "spec", json::Value(*spec, a), a);
    else
      json::remove(obj, "spec");
  }

  bool hasPendingFinalizers(const json::Value& obj) const override {
    const json::Value* f = json::findPath(obj, {"spec", "finalizers"});
    return (f && f->IsArray() && f->Size() > 0) || Strategy::hasPendingFinalizers(obj);
  }

  void prepareForDelete(json::Value& obj, json::Allocator& a) const override {
    json::Value& status = json::ensureObject(obj, "status", a);
    json::setString(status, "phase", "Terminating", a);
  }

  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    // Upstream labels every namespace with its own name.
    std::string name(json::getStringPath(obj, {"metadata", "name"}));
    if (name.empty()) return;
    json::Value& meta = json::ensureObject(obj, "metadata", a);
    json::Value& labels = json::ensureObject(meta, "labels", a);
    json::setString(labels, "kubernetes.io/metadata.name", name, a);
  }

  std::vector<std::string> selectableFieldNames() const override { return {"status.phase"}; }
  void selectableFields(const json::Value& obj, meta::StringPairs& out) const override {
    out.emplace_back("status.phase", json::getStringPath(obj, {"status", "phase"}));
  }

  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Status", "string", "", "The status of the namespace", 0},
            {"Age", "string", "", "Time since the namespace was created.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(json::getStringPath(obj, {"status", "phase"}), a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> namespaceStrategy() {
  return std::make_shared<NamespaceStrategy>();
}

}  // namespace shepherd::apis::kinds
