// Pod: created Pending with upstream's defaults and QoS class; spec is immutable but for
// the fields upstream lets an update change.
#include <set>

#include "apis/kinds/kinds.h"
#include "apis/kinds/podspec.h"
#include "common/clock.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

std::string lastRestartAgo(const json::Value& cs, std::string& latest) {
  std::string_view fin = json::getStringPath(cs, {"lastState", "terminated", "finishedAt"});
  if (!fin.empty() && std::string(fin) > latest) latest = std::string(fin);
  return latest;
}

// validatePodMetadataAndSpec: the pod annotations with rules, then the spec.
void validatePod(const json::Value& obj, FieldErrors& errs) {
  const json::Value* spec = json::find(obj, "spec");
  static const json::Value empty(rapidjson::kObjectType);
  validatePodAnnotations(json::findPath(obj, {"metadata", "annotations"}), spec ? *spec : empty,
                         "metadata.annotations", errs);
  if (!spec) {
    errs.required("spec.containers");
    return;
  }
  validatePodSpec(*spec, "spec", errs, true);
}

class PodStrategy final : public Strategy {
 public:
  void prepareForCreate(json::Document& obj, const StrategyContext&) const override {
    auto& a = obj.GetAllocator();
    json::Value status(rapidjson::kObjectType);
    status.AddMember("phase", "Pending", a);
    const json::Value* spec = json::find(obj, "spec");
    if (spec) status.AddMember("qosClass", json::str(qosClass(*spec), a), a);
    json::set(obj, "status", std::move(status), a);
  }

  void applyDefaults(json::Value& obj, json::Allocator& a) const override {
    if (json::Value* spec = json::find(obj, "spec")) {
      defaultPodSpec(*spec, a);
      defaultPodOnly(*spec, a);
    }
  }

  void validate(const json::Value& obj, FieldErrors& errs) const override {
    validatePod(obj, errs);
    const json::Value* spec = json::find(obj, "spec");
    if (!spec) return;
    // ValidatePodCreate: ephemeral containers come through their subresource only.
    if (const json::Value* ec = json::find(*spec, "ephemeralContainers"); ec && ec->IsArray() && ec->Size())
      errs.forbidden("spec.ephemeralContainers", "cannot be set on create");
    const json::Value* gates = json::find(*spec, "schedulingGates");
    if (!json::getString(*spec, "nodeName").empty() && gates && gates->IsArray() && gates->Size())
      errs.forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared");
  }

  void validateUpdate(const json::Value& obj, const json::Value& old, FieldErrors& errs) const override {
    // ValidatePodUpdate: the create-time rules, then what an update may change.
    validatePod(obj, errs);
    static const json::Value empty(rapidjson::kObjectType);
    const json::Value* specp = json::find(obj, "spec");
    const json::Value* oldp = json::find(old, "spec");
    const json::Value& spec = specp ? *specp : empty;
    const json::Value& oldSpec = oldp ? *oldp : empty;
    for (const char* list : {"containers", "initContainers"}) {
      const json::Value* cs = json::find(spec, list);
      const json::Value* ocs = json::find(oldSpec, list);
      size_t n = cs && cs->IsArray() ? cs->Size() : 0, on = ocs && ocs->IsArray() ? ocs->Size() : 0;
      std::string path = std::string("spec.") + list;
      if (n != on) {
        errs.forbidden(path, "pod updates may not add or remove containers");
        return;
      }
      for (rapidjson::SizeType i = 0; i < n; ++i) {
        std::string_view image = json::getString((*cs)[i], "image");
        std::string ip = path + "[" + std::to_string(i) + "].image";
        if (image.empty()) errs.required(ip);
        size_t b = image.find_first_not_of(" \t\n\v\f\r"), e = image.find_last_not_of(" \t\n\v\f\r");
        if (!image.empty() && (b != 0 || e != image.size() - 1))
          errs.invalid(ip, meta::validation::quote(image), "must not have leading or trailing whitespace");
      }
    }
    // activeDeadlineSeconds: set from nothing, or lowered.
    auto deadline = json::getInt(spec, "activeDeadlineSeconds");
    auto oldDeadline = json::getInt(oldSpec, "activeDeadlineSeconds");
    if (deadline) {
      if (*deadline < 0 || *deadline > 2147483647) {
        errs.invalid("spec.activeDeadlineSeconds", std::to_string(*deadline),
                     meta::validation::inclusiveRange(0, 2147483647));
        return;
      }
      if (oldDeadline && *oldDeadline < *deadline) {
        errs.invalid("spec.activeDeadlineSeconds", std::to_string(*deadline),
                     "must be less than or equal to previous value");
        return;
      }
    } else if (oldDeadline) {
      errs.invalid("spec.activeDeadlineSeconds", "\"null\"",
                   "must not update from a positive integer to nil value");
    }
    validateOnlyAddedTolerations(json::find(spec, "tolerations"), json::find(oldSpec, "tolerations"),
                                 "spec.tolerations", errs);
    // Scheduling gates may only be removed.
    if (const json::Value* gates = json::find(spec, "schedulingGates"); gates && gates->IsArray()) {
      std::set<std::string> before;
      if (const json::Value* og = json::find(oldSpec, "schedulingGates"); og && og->IsArray())
        for (auto& g : og->GetArray()) before.insert(std::string(json::getString(g, "name")));
      for (rapidjson::SizeType i = 0; i < gates->Size(); ++i) {
        std::string name(json::getString((*gates)[i], "name"));
        if (!before.count(name))
          errs.forbidden("spec.schedulingGates[" + std::to_string(i) + "].name",
                         "only deletion is allowed, but found new scheduling gate '" + name + "'");
      }
    }
    if (!specp || !oldp) return;
    // Everything else must be unchanged: compare with the updatable fields taken from
    // the old spec.
    json::Document munged;
    munged.CopyFrom(spec, munged.GetAllocator());
    auto& a = munged.GetAllocator();
    for (const char* list : {"containers", "initContainers"}) {
      json::Value* cs = json::find(munged, list);
      const json::Value* ocs = json::find(oldSpec, list);
      if (cs && cs->IsArray() && ocs && ocs->IsArray())
        for (rapidjson::SizeType i = 0; i < cs->Size() && i < ocs->Size(); ++i) {
          if (const json::Value* img = json::find((*ocs)[i], "image"))
            json::set((*cs)[i], "image", json::Value(*img, a), a);
          else
            json::remove((*cs)[i], "image");
        }
    }
    for (const char* f : {"activeDeadlineSeconds", "schedulingGates", "tolerations"}) {
      if (const json::Value* v = json::find(oldSpec, f))
        json::set(munged, f, json::Value(*v, a), a);
      else
        json::remove(munged, f);
    }
    // terminationGracePeriodSeconds may go from negative to 1.
    auto oldGrace = json::getInt(oldSpec, "terminationGracePeriodSeconds");
    if (oldGrace && *oldGrace < 0 && json::getInt(munged, "terminationGracePeriodSeconds") == 1)
      json::set(munged, "terminationGracePeriodSeconds", json::Value(*oldGrace), a);
    if (munged != oldSpec)
      errs.forbidden("spec",
                     "pod updates may not change fields other than `spec.containers[*].image`,"
                     "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                     "`spec.tolerations` (only additions to existing tolerations),"
                     "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
                     "previously negative)");
  }

  int64_t gracePeriod(const json::Value& obj, std::optional<int64_t> requested) const override {
    // Unscheduled and finished pods have no kubelet to wait for.
    if (json::getStringPath(obj, {"spec", "nodeName"}).empty()) return 0;
    std::string_view phase = json::getStringPath(obj, {"status", "phase"});
    if (phase == "Succeeded" || phase == "Failed") return 0;
    int64_t g = 30;
    if (requested) {
      g = *requested;
    } else if (const json::Value* spec = json::find(obj, "spec")) {
      if (auto t = json::getInt(*spec, "terminationGracePeriodSeconds")) g = *t;
    }
    return g < 0 ? 1 : g;
  }

  std::vector<std::string> selectableFieldNames() const override {
    return {"spec.nodeName",           "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
            "spec.hostNetwork",        "status.phase",       "status.podIP",       "status.podIPs",
            "status.nominatedNodeName"};
  }

  std::vector<std::string> indexedFieldNames() const override { return {"spec.nodeName"}; }

  void selectableFields(const json::Value& obj, meta::StringPairs& out) const override {
    out.emplace_back("spec.nodeName", json::getStringPath(obj, {"spec", "nodeName"}));
    out.emplace_back("spec.restartPolicy", json::getStringPath(obj, {"spec", "restartPolicy"}));
    out.emplace_back("spec.schedulerName", json::getStringPath(obj, {"spec", "schedulerName"}));
    out.emplace_back("spec.serviceAccountName", json::getStringPath(obj, {"spec", "serviceAccountName"}));
    const json::Value* hn = json::findPath(obj, {"spec", "hostNetwork"});
    out.emplace_back("spec.hostNetwork", hn && hn->IsBool() && hn->GetBool() ? "true" : "false");
    out.emplace_back("status.phase", json::getStringPath(obj, {"status", "phase"}));
    out.emplace_back("status.podIP", json::getStringPath(obj, {"status", "podIP"}));
    std::string ips;
    if (const json::Value* p = json::findPath(obj, {"status", "podIPs"}); p && p->IsArray())
      for (auto& ip : p->GetArray()) ips += (ips.empty() ? "" : ",") + std::string(json::getString(ip, "ip"));
    out.emplace_back("status.podIPs", ips);
    out.emplace_back("status.nominatedNodeName", json::getStringPath(obj, {"status", "nominatedNodeName"}));
  }

  std::vector<TableColumn> tableColumns() const override {
    return {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
            {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0},
            {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
            {"Restarts", "string", "",
             "The number of times the containers in this pod have been restarted and when the last container "
             "in this pod has restarted.",
             0},
            {"Age", "string", "", "Time since the pod was created.", 0},
            {"IP", "string", "", "IP address allocated to the pod.", 1},
            {"Node", "string", "", "Name of the node the pod is assigned to.", 1},
            {"Nominated Node", "string", "", "Name of the node where the pod is nominated to run.", 1},
            {"Readiness Gates", "string", "", "Readiness gates of the pod and how many are true.", 1}};
  }

  void tableRow(const json::Value& obj, json::Value& cells, json::Allocator& a) const override {
    const json::Value* spec = json::find(obj, "spec");
    const json::Value* status = json::find(obj, "status");
    static const json::Value empty(rapidjson::kObjectType);
    if (!spec) spec = &empty;
    if (!status) status = &empty;
    int64_t restarts = 0;
    int total = 0, ready = 0;
    if (const json::Value* cs = json::find(*spec, "containers"); cs && cs->IsArray())
      total = static_cast<int>(cs->Size());
    std::string latest;
    std::string reason(json::getString(*status, "phase"));
    if (!json::getString(*status, "reason").empty()) reason = json::getString(*status, "reason");

    bool initializing = false;
    int initCount = 0;
    // Sidecars (init containers with restartPolicy Always) count as containers, as upstream's
    // printer: in the total, ready once started and ready, and their restarts.
    std::set<std::string_view> sidecars;
    if (const json::Value* ic = json::find(*spec, "initContainers"); ic && ic->IsArray()) {
      initCount = static_cast<int>(ic->Size());
      for (auto& c : ic->GetArray())
        if (json::getString(c, "restartPolicy") == "Always") sidecars.insert(json::getString(c, "name"));
    }
    total += static_cast<int>(sidecars.size());
    const json::Value* ics = json::find(*status, "initContainerStatuses");
    if (ics && !ics->IsArray()) ics = nullptr;
    if (ics)
      for (auto& c : ics->GetArray())
        if (sidecars.count(json::getString(c, "name")) && json::getBool(c, "started") &&
            json::getBool(c, "ready"))
          ++ready;
    if (ics) {
      for (rapidjson::SizeType i = 0; i < ics->Size(); ++i) {
        const json::Value& c = (*ics)[i];
        restarts += json::getInt(c, "restartCount").value_or(0);
        lastRestartAgo(c, latest);
        if (sidecars.count(json::getString(c, "name")) && json::getBool(c, "started")) continue;
        const json::Value* term = json::findPath(c, {"state", "terminated"});
        const json::Value* wait = json::findPath(c, {"state", "waiting"});
        if (term && json::getInt(*term, "exitCode").value_or(0) == 0) continue;
        if (term) {
          std::string_view r = json::getString(*term, "reason");
          if (r.empty()) {
            auto sig = json::getInt(*term, "signal").value_or(0);
            reason = sig ? "Init:Signal:" + std::to_string(sig)
                         : "Init:ExitCode:" + std::to_string(json::getInt(*term, "exitCode").value_or(0));
          } else {
            reason = "Init:" + std::string(r);
          }
        } else if (wait && !json::getString(*wait, "reason").empty() &&
                   json::getString(*wait, "reason") != "PodInitializing") {
          reason = "Init:" + std::string(json::getString(*wait, "reason"));
        } else {
          reason = "Init:" + std::to_string(i) + "/" + std::to_string(initCount);
        }
        initializing = true;
        break;
      }
    }
    bool initializedTrue = false, readyCond = false;
    if (const json::Value* conds = json::find(*status, "conditions"); conds && conds->IsArray())
      for (auto& c : conds->GetArray()) {
        if (json::getString(c, "type") == "Initialized" && json::getString(c, "status") == "True")
          initializedTrue = true;
        if (json::getString(c, "type") == "Ready" && json::getString(c, "status") == "True") readyCond = true;
      }
    if (!initializing || initializedTrue) {
      restarts = 0;
      if (ics)
        for (auto& c : ics->GetArray())
          if (sidecars.count(json::getString(c, "name"))) {
            restarts += json::getInt(c, "restartCount").value_or(0);
            lastRestartAgo(c, latest);
          }
      bool hasRunning = false;
      if (const json::Value* css = json::find(*status, "containerStatuses"); css && css->IsArray()) {
        for (int i = static_cast<int>(css->Size()) - 1; i >= 0; --i) {
          const json::Value& c = (*css)[static_cast<rapidjson::SizeType>(i)];
          restarts += json::getInt(c, "restartCount").value_or(0);
          lastRestartAgo(c, latest);
          const json::Value* term = json::findPath(c, {"state", "terminated"});
          const json::Value* wait = json::findPath(c, {"state", "waiting"});
          const json::Value* run = json::findPath(c, {"state", "running"});
          if (wait && !json::getString(*wait, "reason").empty()) {
            reason = json::getString(*wait, "reason");
          } else if (term && !json::getString(*term, "reason").empty()) {
            reason = json::getString(*term, "reason");
          } else if (term) {
            auto sig = json::getInt(*term, "signal").value_or(0);
            reason = sig ? "Signal:" + std::to_string(sig)
                         : "ExitCode:" + std::to_string(json::getInt(*term, "exitCode").value_or(0));
          } else if (run && json::getBool(c, "ready")) {
            hasRunning = true;
            ++ready;
          }
        }
      }
      if (reason == "Completed" && hasRunning) reason = readyCond ? "Running" : "NotReady";
    }
    if (json::findPath(obj, {"metadata", "deletionTimestamp"})) {
      reason = json::getString(*status, "reason") == "NodeLost" ? "Unknown" : "Terminating";
    }
    std::string restartStr = std::to_string(restarts);
    if (!latest.empty()) restartStr += " (" + humanAgeSince(latest) + " ago)";
    auto none = [](std::string_view s) { return s.empty() ? std::string("<none>") : std::string(s); };
    std::string gates = "<none>";
    if (const json::Value* rg = json::find(*spec, "readinessGates"); rg && rg->IsArray() && rg->Size()) {
      int trueCount = 0;
      if (const json::Value* conds = json::find(*status, "conditions"); conds && conds->IsArray())
        for (auto& g : rg->GetArray())
          for (auto& c : conds->GetArray())
            if (json::getString(c, "type") == json::getString(g, "conditionType") &&
                json::getString(c, "status") == "True")
              ++trueCount;
      gates = std::to_string(trueCount) + "/" + std::to_string(rg->Size());
    }
    cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
    cells.PushBack(json::str(std::to_string(ready) + "/" + std::to_string(total), a), a);
    cells.PushBack(json::str(reason, a), a);
    cells.PushBack(json::str(restartStr, a), a);
    cells.PushBack(json::str(ageCell(obj), a), a);
    cells.PushBack(json::str(none(json::getString(*status, "podIP")), a), a);
    cells.PushBack(json::str(none(json::getString(*spec, "nodeName")), a), a);
    cells.PushBack(json::str(none(json::getString(*status, "nominatedNodeName")), a), a);
    cells.PushBack(json::str(gates, a), a);
  }
};

}  // namespace

std::shared_ptr<const Strategy> podStrategy() {
  return std::make_shared<PodStrategy>();
}

}  // namespace shepherd::apis::kinds
