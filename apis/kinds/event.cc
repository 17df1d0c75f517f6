// Events: one set of stored objects (core/v1 shape) served as core/v1 Event and as
// events.k8s.io/v1 Event, which renames fields (regarding, note, deprecated*).
#include <algorithm>
#include <cctype>

#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"

namespace shepherd::apis::kinds {

namespace {

// core/v1 name -> events.k8s.io/v1 name.
const std::pair<const char*, const char*> kRenames[] = {
    {"involvedObject", "regarding"},
    {"message", "note"},
    {"source", "deprecatedSource"},
    {"firstTimestamp", "deprecatedFirstTimestamp"},
    {"lastTimestamp", "deprecatedLastTimestamp"},
    {"count", "deprecatedCount"},
    {"reportingComponent", "reportingController"},
};

void rename(json::Value& obj, const char* from, const char* to, json::Allocator& a) {
  json::Value* v = json::find(obj, from);
  if (!v) return;
  json::Value moved(std::move(*v));
  json::remove(obj, from);
  if (!moved.IsNull()) json::set(obj, to, std::move(moved), a);
}

std::string since(const json::Value& obj, std::string_view field) {
  std::string_view ts = json::getString(obj, field);
  return ts.empty() ? "<unknown>" : humanAgeSince(ts);
}

class CoreEventStrategy : public Strategy {
 public:
  bool allowCreateOnUpdate() const override { return true; }
  NameRule nameRule() const override { return NameRule::Subdomain; }

  void validate(const json::Value& obj, FieldErrors& errs) const override {
    std::string_view ns = json::getStringPath(obj, {"metadata", "namespace"});
    std::string_view ions = json::getStringPath(obj, {"involvedObject", "namespace"});
    // An event about a cluster-scoped object lives in "default" (as upstream allows).
    bool mismatch = ions.empty() ? !ns.empty() && ns != "default" : ions != ns;
    if (mismatch)
      errs.invalid("involvedObject.namespace", "\"" + std::string(ions) + "\"",
                   "does not match event.namespace");
  }

  std::vector<std::string> selectableFieldNames() const override {
    return {"involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type"};
  }
  void selectableFields(const json::Value& obj, meta::StringPairs& out) const override {
    for (const char* f : {"kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"})
      out.emplace_back(std::string("involvedObject.") + f, json::getStringPath(obj, {"involvedObject", f}));
    out.emplace_back("reason", json::getString(obj, "reason"));
    out.emplace_back("reportingComponent", json::getString(obj, "reportingComponent"));
    // Upstream falls back to reportingComponent when source.component is empty.
    std::string_view source = json::getStringPath(obj, {"source", "component"});
    if (source.empty()) source = json::getString(obj, "reportingComponent");
    out.emplace_back("source", source);
    out.emplace_back("type", json::getString(obj, "type"));
  }

  std::vector<TableColumn> tableColumns() const override {
    return {{"Last Seen", "string", "", "Time since the event was last observed.", 0},
            {"Type", "string", "", "Type of this event (Normal, Warning).", 0},
            {"Reason", "string", "",
             "Short, machine understandable string that gives the reason for the event.", 0},
            {"Object", "string", "", "The object this event is about.", 0},
            {"Subobject", "string", "", "The part of the object this event is about.", 1},
            {"Source", "string", "", "The component reporting this event.", 1},
            {"Message", "string", "", "A human-readable description of the status of this operation.", 0},
            {"First Seen", "string", "", "Time since the event was first observed.", 1},
            {"Count", "string", "", "The number of times this event has occurred.", 1},
            {"Name", "string", "name", "Name must be unique within a namespace.", 1}};
  }

  // Rows are computed from the core/v1 shape.
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    std::string first = since(obj, "firstTimestamp");
    if (json::getString(obj, "firstTimestamp").empty()) first = since(obj, "eventTime");
    std::string last = since(obj, "lastTimestamp");
    if (json::getString(obj, "lastTimestamp").empty()) last = first;
    int64_t count = json::getInt(obj, "count").value_or(0);
    if (const json::Value* series = json::find(obj, "series"); series && series->IsObject()) {
      last = since(*series, "lastObservedTime");
      count = json::getInt(*series, "count").value_or(0);
    } else if (count == 0) {
      count = 1;
    }
    std::string kind(json::getStringPath(obj, {"involvedObject", "kind"}));
    std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string_view ioName = json::getStringPath(obj, {"involvedObject", "name"});
    std::string target = ioName.empty() ? kind : kind + "/" + std::string(ioName);
    std::string source(json::getStringPath(obj, {"source", "component"}));
    std::string_view host = json::getStringPath(obj, {"source", "host"});
    if (!host.empty()) source += ", " + std::string(host);
    if (source.empty()) {
      source = json::getString(obj, "reportingComponent");
      std::string_view inst = json::getString(obj, "reportingInstance");
      if (!inst.empty()) source += ", " + std::string(inst);
    }
    std::string msg(json::getString(obj, "message"));
    while (!msg.empty() && std::isspace(static_cast<unsigned char>(msg.back()))) msg.pop_back();
    while (!msg.empty() && std::isspace(static_cast<unsigned char>(msg.front()))) msg.erase(0, 1);
    cells.PushBack(json::str(last, a), a);
    cells.PushBack(json::str(json::getString(obj, "type"), a), a);
    cells.PushBack(json::str(json::getString(obj, "reason"), a), a);
    cells.PushBack(json::str(target, a), a);
    cells.PushBack(json::str(json::getStringPath(obj, {"involvedObject", "fieldPath"}), a), a);
    cells.PushBack(json::str(source, a), a);
    cells.PushBack(json::str(msg, a), a);
    cells.PushBack(json::str(first, a), a);
    cells.PushBack(json::Value(count), a);
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
  }
};

class EventsV1EventStrategy final : public CoreEventStrategy {
 public:
  bool convertsForStorage() const override { return true; }
  void toStorage(json::Value& obj, json::Allocator& a) const override {
    for (auto& [core, v1] : kRenames) rename(obj, v1, core, a);
    json::setString(obj, "apiVersion", "v1", a);
  }
  void fromStorage(json::Value& obj, json::Allocator& a) const override {
    for (auto& [core, v1] : kRenames) rename(obj, core, v1, a);
    json::setString(obj, "apiVersion", "events.k8s.io/v1", a);
  }
  void validate(const json::Value& obj, FieldErrors& errs) const override {
    // Called on the events.k8s.io shape.
    std::string_view ns = json::getStringPath(obj, {"metadata", "namespace"});
    std::string_view rns = json::getStringPath(obj, {"regarding", "namespace"});
    if (!rns.empty() && rns != ns)
      errs.invalid("regarding.namespace", "\"" + std::string(rns) + "\"", "does not match event.namespace");
  }
  std::vector<std::string> selectableFieldNames() const override {
    return {"regarding.kind",       "regarding.namespace",
            "regarding.name",       "regarding.uid",
            "regarding.apiVersion", "regarding.resourceVersion",
            "regarding.fieldPath",  "reason",
            "reportingController",  "type"};
  }
  // Attributes are computed on the events.k8s.io shape.
  void selectableFields(const json::Value& obj, meta::StringPairs& out) const override {
    for (const char* f : {"kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"})
      out.emplace_back(std::string("regarding.") + f, json::getStringPath(obj, {"regarding", f}));
    out.emplace_back("reason", json::getString(obj, "reason"));
    out.emplace_back("reportingController", json::getString(obj, "reportingController"));
    out.emplace_back("type", json::getString(obj, "type"));
  }
  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    json::Document core;
    core.CopyFrom(obj, core.GetAllocator());
    toStorage(core, core.GetAllocator());
    CoreEventStrategy::tableRow(core, cells, a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> coreEventStrategy() {
  return std::make_shared<CoreEventStrategy>();
}
std::shared_ptr<const Strategy> eventsV1EventStrategy() {
  return std::make_shared<EventsV1EventStrategy>();
}

}  // namespace shepherd::apis::kinds
