// Lease (coordination.k8s.io/v1): holder identity and renew time, nothing derived.
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"

namespace shepherd::apis::kinds {

namespace {

class LeaseStrategy final : public Strategy {
 public:
  bool allowCreateOnUpdate() const override { return true; }
  void validate(const json::Value& obj, FieldErrors& errs) const override {
    const json::Value* spec = json::find(obj, "spec");
    if (!spec) return;
    if (auto d = json::getInt(*spec, "leaseDurationSeconds"); d && *d <= 0)
      errs.invalid("spec.leaseDurationSeconds", std::to_string(*d), "must be greater than 0");
    if (auto t = json::getInt(*spec, "leaseTransitions"); t && *t < 0)
      errs.invalid("spec.leaseTransitions", std::to_string(*t), "must be greater than or equal to 0");
  }
  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Holder", "string", "", "The holder of the lease.", 0},
            {"Age", "string", "", "Time since the lease was created.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(json::getStringPath(obj, {"spec", "holderIdentity"}), a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> leaseStrategy() {
  return std::make_shared<LeaseStrategy>();
}

}  // namespace shepherd::apis::kinds
