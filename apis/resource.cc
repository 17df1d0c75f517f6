#include "apis/resource.h"

#include <algorithm>

#include "common/clock.h"
#include "meta/validation.h"

namespace shepherd::apis {

void FieldErrors::required(const std::string& field, const std::string& detail) {
  causes_.push_back(
      {"FieldValueRequired", detail.empty() ? "Required value" : "Required value: " + detail, field});
}

void FieldErrors::invalid(const std::string& field, const std::string& value_repr,
                          const std::string& detail) {
  std::string msg = "Invalid value: " + value_repr;
  if (!detail.empty()) msg += ": " + detail;
  causes_.push_back({"FieldValueInvalid", msg, field});
}

void FieldErrors::invalidOmitValue(const std::string& field, const std::string& detail) {
  causes_.push_back({"FieldValueInvalid", "Invalid value: " + detail, field});
}

void FieldErrors::notSupported(const std::string& field, const std::string& value,
                               const std::vector<std::string>& supported) {
  std::string msg = "Unsupported value: " + meta::validation::quote(value);
  if (!supported.empty()) {
    msg += ": supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i) msg += ", ";
      msg += meta::validation::quote(supported[i]);
    }
  }
  causes_.push_back({"FieldValueNotSupported", msg, field});
}

void FieldErrors::duplicate(const std::string& field, const std::string& value_repr) {
  causes_.push_back({"FieldValueDuplicate", "Duplicate value: " + value_repr, field});
}

void FieldErrors::notFound(const std::string& field, const std::string& value_repr) {
  causes_.push_back({"FieldValueNotFound", "Not found: " + value_repr, field});
}

void FieldErrors::forbidden(const std::string& field, const std::string& detail) {
  causes_.push_back({"FieldValueForbidden", "Forbidden: " + detail, field});
}

void FieldErrors::tooLong(const std::string& field, size_t max) {
  causes_.push_back(
      {"FieldValueTooLong", "Too long: may not be more than " + std::to_string(max) + " bytes", field});
}

void FieldErrors::tooMany(const std::string& field, size_t actual, size_t max) {
  causes_.push_back(
      {"FieldValueTooMany",
       "Too many: " + std::to_string(actual) + ": must have at most " + std::to_string(max) + " items",
       field});
}

void Strategy::prepareForCreate(json::Document&, const StrategyContext&) const {}
void Strategy::prepareForUpdate(json::Document&, const json::Value&, const StrategyContext&) const {}
void Strategy::prepareForStatusUpdate(json::Document&, const json::Value&) const {}
void Strategy::applyDefaults(json::Value&, json::Allocator&) const {}
void Strategy::validate(const json::Value&, FieldErrors&) const {}
void Strategy::validateUpdate(const json::Value& obj, const json::Value&, FieldErrors& errs) const {
  validate(obj, errs);
}
int64_t Strategy::gracePeriod(const json::Value&, std::optional<int64_t>) const {
  return 0;
}

bool Strategy::hasPendingFinalizers(const json::Value& obj) const {
  const json::Value* f = json::findPath(obj, {"metadata", "finalizers"});
  return f && f->IsArray() && f->Size() > 0;
}

void Strategy::selectableFields(const json::Value&, meta::StringPairs&) const {}

std::vector<TableColumn> Strategy::tableColumns() const {
  return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
          {"Created At", "date", "", "The time the object was created.", 0}};
}

void Strategy::tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const {
  cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
  cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "creationTimestamp"}), a), a);
}

bool Resource::hasSubresource(const std::string& s) const {
  return std::find(subresources.begin(), subresources.end(), s) != subresources.end();
}

std::string Resource::key(const std::string& ns, const std::string& name) const {
  return namespaced ? storage_prefix + ns + "/" + name : storage_prefix + name;
}

std::string Resource::prefixFor(const std::string& ns) const {
  return namespaced && !ns.empty() ? storage_prefix + ns + "/" : storage_prefix;
}

const json::Value* metadata(const json::Value& obj) {
  return json::find(obj, "metadata");
}

std::string humanAgeSince(std::string_view rfc3339) {
  auto t = clock::parseRfc3339(rfc3339);
  if (!t) return "<unknown>";
  auto d = std::chrono::duration_cast<std::chrono::seconds>(clock::now() - *t);
  return clock::humanDuration(d);
}

std::string ageCell(const json::Value& obj) {
  std::string_view ts = json::getStringPath(obj, {"metadata", "creationTimestamp"});
  if (ts.empty()) return "<unknown>";
  return humanAgeSince(ts);
}

}  // namespace shepherd::apis
