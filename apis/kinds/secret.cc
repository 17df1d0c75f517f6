// Secret: `stringData` is folded into base64 `data` on write; the type is fixed at
// creation and type-specific keys are required; `immutable: true` freezes data.
#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"
#include "common/base64.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

class SecretStrategy final : public Strategy {
 public:
  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    const json::Value* type = json::find(obj, "type");
    if (!type || !type->IsString() || type->GetStringLength() == 0) json::setString(obj, "type", "Opaque", a);
    if (json::Value* sd = json::find(obj, "stringData"); sd && sd->IsObject()) {
      json::Value& data = json::ensureObject(obj, "data", a);
      for (auto& m : sd->GetObject())
        if (m.value.IsString())
          json::setString(data, json::view(m.name), shepherd::base64Encode(json::view(m.value)), a);
      json::remove(obj, "stringData");
    }
  }

  void validate(const json::Value& obj, FieldErrors& errs) const override {
    const json::Value* data = json::find(obj, "data");
    size_t total = 0;
    if (data && data->IsObject()) {
      for (auto& m : data->GetObject()) {
        std::string_view k = json::view(m.name);
        for (auto& e : meta::validation::configMapKey(k))
          errs.invalid("data[" + std::string(k) + "]", meta::validation::quote(k), e);
        // Base64 the decoder refuses never gets here (a 400 before validation); the
        // limit counts decoded bytes.
        if (m.value.IsString()) total += shepherd::checkStdBase64(json::view(m.value)).decoded;
      }
    }
    if (total > 1024 * 1024)
      errs.add({"FieldValueTooLong", "Too long: must have at most 1048576 bytes", "data"});
    std::string_view type = json::getString(obj, "type");
    auto has = [&](const char* key) { return data && data->IsObject() && json::find(*data, key); };
    auto need = [&](const char* key) {
      if (!has(key)) errs.required("data[" + std::string(key) + "]");
    };
    if (type == "kubernetes.io/service-account-token") {
      if (json::getStringPath(obj, {"metadata", "annotations", "kubernetes.io/service-account.name"}).empty())
        errs.required("metadata.annotations[kubernetes.io/service-account.name]");
    } else if (type == "kubernetes.io/dockercfg") {
      need(".dockercfg");
    } else if (type == "kubernetes.io/dockerconfigjson") {
      need(".dockerconfigjson");
    } else if (type == "kubernetes.io/basic-auth") {
      if (!has("username") && !has("password")) {
        errs.required("data[username]");
        errs.required("data[password]");
      }
    } else if (type == "kubernetes.io/ssh-auth") {
      // Present is not enough: the key must have content.
      const json::Value* key = has("ssh-privatekey") ? json::find(*data, "ssh-privatekey") : nullptr;
      if (!key || !key->IsString() || shepherd::checkStdBase64(json::view(*key)).decoded == 0)
        errs.required("data[ssh-privatekey]");
    } else if (type == "kubernetes.io/tls") {
      need("tls.crt");
      need("tls.key");
    }
  }

  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validate(obj, errs);
    if (json::getString(obj, "type") != json::getString(old, "type"))
      errs.invalid("type", meta::validation::quote(json::getString(obj, "type")), "field is immutable");
    if (json::getBool(old, "immutable")) {
      if (!json::getBool(obj, "immutable"))
        errs.forbidden("immutable", "field is immutable when `immutable` is set");
      const json::Value* a = json::find(obj, "data");
      const json::Value* b = json::find(old, "data");
      bool aEmpty = !a || a->IsNull() || (a->IsObject() && a->MemberCount() == 0);
      bool bEmpty = !b || b->IsNull() || (b->IsObject() && b->MemberCount() == 0);
      if (aEmpty != bEmpty || (!aEmpty && *a != *b))
        errs.forbidden("data", "field is immutable when `immutable` is set");
    }
  }

  std::vector<std::string> selectableFieldNames() const override { return {"type"}; }
  void selectableFields(const json::Value& obj, meta::StringPairs& out) const override {
    out.emplace_back("type", json::getString(obj, "type"));
  }

  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Type", "string", "", "The type of the secret.", 0},
            {"Data", "string", "", "Number of keys in the secret.", 0},
            {"Age", "string", "", "Time since the secret was created.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    int64_t n = 0;
    if (const json::Value* m = json::find(obj, "data"); m && m->IsObject()) n = m->MemberCount();
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(json::getString(obj, "type"), a), a);
    cells.PushBack(json::Value(n), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> secretStrategy() {
  return std::make_shared<SecretStrategy>();
}

}  // namespace shepherd::apis::kinds
