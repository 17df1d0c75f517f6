// StorageClass (storage.k8s.io/v1, cluster-scoped): a provisioner and its parameters for
// claims that name the class. Provisioner, parameters, reclaim policy and binding mode
// never change; the "is-default-class" annotation marks the class unnamed claims get.
#include <algorithm>

#include "apis/kinds/kinds.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

constexpr size_t kMaxProvisionerLength = 63;
constexpr size_t kMaxParametersSize = 256 * 1024;

void validateClass(const json::Value& obj, FieldErrors& errs) {
  std::string_view prov = json::getString(obj, "provisioner");
  if (prov.empty()) {
    errs.required("provisioner");
  } else {
    if (prov.size() > kMaxProvisionerLength) errs.tooLong("provisioner", kMaxProvisionerLength);
    std::string lower(prov);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    for (const auto& msg : meta::validation::qualifiedName(lower))
      errs.invalid("provisioner", meta::validation::quote(prov), msg);
  }
  if (const json::Value* params = json::find(obj, "parameters"); params && params->IsObject()) {
    size_t total = 0;
    for (const auto& m : params->GetObject()) {
      std::string_view k = json::view(m.name);
      if (k.empty()) errs.invalid("parameters", "\"\"", "field can not be empty.");
      total += k.size() + (m.value.IsString() ? m.value.GetStringLength() : 0);
    }
    if (total > kMaxParametersSize) errs.tooLong("parameters", kMaxParametersSize);
  }
  if (const json::Value* p = json::find(obj, "reclaimPolicy"); p && !p->IsNull()) {
    std::string_view v = p->IsString() ? json::view(*p) : "";
    if (v != "Delete" && v != "Retain")
      errs.notSupported("reclaimPolicy", std::string(v), {"Delete", "Retain"});
  }
  const json::Value* mode = json::find(obj, "volumeBindingMode");
  if (!mode || mode->IsNull()) {
    errs.required("volumeBindingMode");
  } else {
    std::string_view v = mode->IsString() ? json::view(*mode) : "";
    if (v != "Immediate" && v != "WaitForFirstConsumer")
      errs.notSupported("volumeBindingMode", std::string(v), {"Immediate", "WaitForFirstConsumer"});
  }
}

bool same(const json::Value& a, const json::Value& b, const char* key) {
  const json::Value* x = json::find(a, key);
  const json::Value* y = json::find(b, key);
  bool xe = !x || x->IsNull() || (x->IsObject() && x->MemberCount() == 0);
  bool ye = !y || y->IsNull() || (y->IsObject() && y->MemberCount() == 0);
  return xe || ye ? xe == ye : *x == *y;
}

class StorageClassStrategy final : public Strategy {
 public:
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    if (json::getString(obj, "reclaimPolicy").empty()) json::setString(obj, "reclaimPolicy", "Delete", a);
    if (json::getString(obj, "volumeBindingMode").empty())
      json::setString(obj, "volumeBindingMode", "Immediate", a);
  }
  void validate(const json::Value& obj, FieldErrors& errs) const override { validateClass(obj, errs); }
  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validateClass(obj, errs);
    if (!same(obj, old, "parameters")) errs.forbidden("parameters", "updates to parameters are forbidden.");
    if (!same(obj, old, "provisioner"))
      errs.forbidden("provisioner", "updates to provisioner are forbidden.");
    if (!same(obj, old, "reclaimPolicy"))
      errs.forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden.");
    if (!same(obj, old, "volumeBindingMode"))
      errs.invalid("volumeBindingMode", meta::validation::quote(json::getString(obj, "volumeBindingMode")),
                   "field is immutable");
  }
  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Provisioner", "string", "", "The provisioner that makes volumes of this class.", 0},
            {"ReclaimPolicy", "string", "", "What happens to a volume of this class when its claim goes.", 0},
            {"VolumeBindingMode", "string", "", "When claims of this class are bound and provisioned.", 0},
            {"AllowVolumeExpansion", "string", "", "Whether claims of this class may grow.", 0},
            {"Age", "string", "", "Time since the class was created.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    std::string name(json::getStringPath(obj, {"metadata", "name"}));
    if (isDefaultStorageClass(obj)) name += " (default)";
    cells.PushBack(json::str(name, a), a);
    cells.PushBack(json::str(json::getString(obj, "provisioner"), a), a);
    cells.PushBack(json::str(json::getString(obj, "reclaimPolicy", "Delete"), a), a);
    cells.PushBack(json::str(json::getString(obj, "volumeBindingMode", "Immediate"), a), a);
    cells.PushBack(json::Value(json::getBool(obj, "allowVolumeExpansion")), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
  }
};

}  // namespace

bool isDefaultStorageClass(const json::Value& obj) {
  const json::Value* ann = json::findPath(obj, {"metadata", "annotations"});
  if (!ann || !ann->IsObject()) return false;
  for (const char* key :
       {"storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"})
    if (json::getString(*ann, key) == "true") return true;
  return false;
}

std::shared_ptr<const Strategy> storageClassStrategy() {
  return std::make_shared<StorageClassStrategy>();
}

}  // namespace shepherd::apis::kinds
