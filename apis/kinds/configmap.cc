// ConfigMap: keys follow the config-key rule; `immutable: true` freezes data.
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"
#include "common/base64.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

class ConfigMapStrategy final : public Strategy {
 public:
  void validate(const json::Value& obj, FieldErrors& errs) const override {
    const json::Value* data = json::find(obj, "data");
    const json::Value* bin = json::find(obj, "binaryData");
    size_t total = 0;
    for (auto [field, map] : {std::pair{"data", data}, std::pair{"binaryData", bin}}) {
      if (!map || !map->IsObject()) continue;
      for (auto& m : map->GetObject()) {
        std::string_view k = json::view(m.name);
        for (auto& e : meta::validation::configMapKey(k))
          errs.invalid(std::string(field) + "[" + std::string(k) + "]", meta::validation::quote(k), e);
        if (std::string_view(field) == "data" && bin && bin->IsObject() && json::find(*bin, k))
          errs.invalid("data[" + std::string(k) + "]", meta::validation::quote(k),
                       "duplicate of key present in binaryData");
        // binaryData counts its decoded bytes, as upstream holds them.
        if (m.value.IsString())
          total += std::string_view(field) == "binaryData"
                       ? shepherd::checkStdBase64(json::view(m.value)).decoded
                       : m.value.GetStringLength();
      }
    }
    if (total > 1024 * 1024) errs.add({"FieldValueTooLong", "Too long: must have at most 1048576 bytes", ""});
  }

  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validate(obj, errs);
    if (json::getBool(old, "immutable")) {
      if (!json::getBool(obj, "immutable"))
        errs.forbidden("immutable", "field is immutable when `immutable` is set");
      for (const char* f : {"data", "binaryData"}) {
        const json::Value* a = json::find(obj, f);
        const json::Value* b = json::find(old, f);
        bool aEmpty = !a || a->IsNull() || (a->IsObject() && a->MemberCount() == 0);
        bool bEmpty = !b || b->IsNull() || (b->IsObject() && b->MemberCount() == 0);
        if (aEmpty != bEmpty || (!aEmpty && *a != *b))
          errs.forbidden(f, "field is immutable when `immutable` is set");
      }
    }
  }

  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Data", "string", "", "Number of keys in the config map.", 0},
            {"Age", "string", "", "Time since the config map was created.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    int64_t n = 0;
    for (const char* f : {"data", "binaryData"})
      if (const json::Value* m = json::find(obj, f); m && m->IsObject()) n += m->MemberCount();
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::Value(n), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> configMapStrategy() {
  return std::make_shared<ConfigMapStrategy>();
}

}  // namespace shepherd::apis::kinds
