// ServiceAccount: plain metadata plus referenced secrets.
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"

namespace shepherd::apis::kinds {

namespace {

class ServiceAccountStrategy final : public Strategy {
 public:
  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Secrets", "string", "", "Number of secrets referenced by the service account.", 0},
            {"Age", "string", "", "Time since the service account was created.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    int64_t n = 0;
    if (const json::Value* s = json::find(obj, "secrets"); s && s->IsArray()) n = s->Size();
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::Value(n), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> serviceAccountStrategy() {
  return std::make_shared<ServiceAccountStrategy>();
}

}  // namespace shepherd::apis::kinds
