// ControllerRevision (apps/v1): an immutable snapshot (data) of a DaemonSet's or
// StatefulSet's template with its revision number.
#include <cctype>

#include "apis/kinds/kinds.h"

namespace shepherd::apis::kinds {

namespace {

class ControllerRevisionStrategy final : public Strategy {
 public:
  void validate(const json::Value& obj, FieldErrors& errs) const override {
    const json::Value* data = json::find(obj, "data");
    if (!data || data->IsNull()) errs.required("data", "data is mandatory");
    if (auto r = json::getInt(obj, "revision"); r && *r < 0)
      errs.invalid("revision", std::to_string(*r), "must be greater than or equal to 0");
  }
  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    validate(obj, errs);
    const json::Value* a = json::find(obj, "data");
    const json::Value* b = json::find(old, "data");
    if ((a == nullptr) != (b == nullptr) || (a && *a != *b))
      errs.invalid("data", a ? json::serialize(*a) : "null", "field is immutable");
  }
  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Controller", "string", "", "Controller of the object.", 0},
            {"Revision", "number", "", "Revision represents the revision of the data.", 0},
            {"Age", "string", "", "Time since the revision was created.", 0}};
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    std::string controller = "<none>";
    if (const json::Value* refs = json::findPath(obj, {"metadata", "ownerReferences"});
        refs && refs->IsArray())
      for (auto& r : refs->GetArray())
        if (json::getBool(r, "controller")) {
          std::string_view api = json::getString(r, "apiVersion");
          size_t slash = api.find('/');
          std::string kind(json::getString(r, "kind"));
          for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          std::string group = slash == std::string_view::npos ? "" : std::string(api.substr(0, slash));
          controller =
              kind + (group.empty() ? "" : "." + group) + "/" + std::string(json::getString(r, "name"));
        }
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(controller, a), a);
    cells.PushBack(json::Value(json::getInt(obj, "revision").value_or(0)), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> controllerRevisionStrategy() {
  return std::make_shared<ControllerRevisionStrategy>();
}

}  // namespace shepherd::apis::kinds
