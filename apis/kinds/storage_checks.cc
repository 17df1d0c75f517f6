#include "apis/kinds/storage_checks.h"

#include <set>

#include "meta/quantity.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

// helper.GetAccessModesAsString's order and abbreviations.
constexpr std::pair<const char*, const char*> kModes[] = {{"ReadWriteOnce", "RWO"},
                                                          {"ReadOnlyMany", "ROX"},
                                                          {"ReadWriteMany", "RWX"},
                                                          {"ReadWriteOncePod", "RWOP"}};

}  // namespace

void validateAccessModes(const json::Value* modes, const std::string& path,
                         const std::string& required_detail, FieldErrors& errs) {
  if (!modes || !modes->IsArray() || modes->Empty()) {
    errs.required(path, required_detail);
    return;
  }
  bool rwop = false;
  for (const auto& m : modes->GetArray()) {
    std::string_view v = m.IsString() ? json::view(m) : "";
    bool known = false;
    for (auto [name, _] : kModes) known = known || v == name;
    if (!known)
      errs.notSupported(path, std::string(v),
                        {"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"});
    rwop = rwop || v == "ReadWriteOncePod";
  }
  if (rwop && modes->Size() > 1) errs.forbidden(path, "may not use ReadWriteOncePod with other access modes");
}

void validateStorageQuantity(const json::Value& q, const std::string& path, FieldErrors& errs) {
  std::string text = meta::quantityText(q);
  long double v = meta::parseQuantity(text).value_or(0);
  if (v < 0)
    errs.invalid(path, meta::validation::quote(meta::canonicalQuantity(text)),
                 "must be greater than or equal to 0");
  if (v <= 0)
    errs.invalid(path, meta::validation::quote(meta::canonicalQuantity(text)), "must be greater than zero");
}

void validateClassName(const json::Value* name, const std::string& path, FieldErrors& errs) {
  if (!name || !name->IsString() || name->GetStringLength() == 0) return;
  std::string_view v = json::view(*name);
  for (const auto& msg : meta::validation::dns1123Subdomain(v))
    errs.invalid(path, meta::validation::quote(v), msg);
}

void validateVolumeMode(const json::Value* mode, const std::string& path, FieldErrors& errs) {
  if (!mode || mode->IsNull()) return;
  std::string_view v = mode->IsString() ? json::view(*mode) : "";
  if (v != "Block" && v != "Filesystem") errs.notSupported(path, std::string(v), {"Block", "Filesystem"});
}

std::string accessModesCell(const json::Value* modes) {
  if (!modes || !modes->IsArray()) return "";
  std::set<std::string_view> have;
  for (const auto& m : modes->GetArray())
    if (m.IsString()) have.insert(json::view(m));
  std::string out;
  for (auto [name, abbrev] : kModes)
    if (have.count(name)) out += (out.empty() ? "" : ",") + std::string(abbrev);
  return out;
}

std::string storageClassCell(const json::Value& obj) {
  if (const json::Value* ann = json::findPath(obj, {"metadata", "annotations"}); ann && ann->IsObject())
    if (const json::Value* beta = json::find(*ann, "volume.beta.kubernetes.io/storage-class");
        beta && beta->IsString())
      return std::string(json::view(*beta));
  return std::string(json::getStringPath(obj, {"spec", "storageClassName"}));
}

std::string volumeModeCell(const json::Value& obj) {
  std::string_view m = json::getStringPath(obj, {"spec", "volumeMode"});
  return m.empty() ? "<unset>" : std::string(m);
}

std::string volumeAttributesClassCell(const json::Value& obj) {
  std::string_view c = json::getStringPath(obj, {"spec", "volumeAttributesClassName"});
  return c.empty() ? "<unset>" : std::string(c);
}

std::string phaseCell(const json::Value& obj) {
  if (const json::Value* d = json::findPath(obj, {"metadata", "deletionTimestamp"}); d && !d->IsNull())
    return "Terminating";
  return std::string(json::getStringPath(obj, {"status", "phase"}));
}

}  // namespace shepherd::apis::kinds
