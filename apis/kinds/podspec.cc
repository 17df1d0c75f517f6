#include "apis/kinds/podspec.h"

#include <atomic>
#include <set>
#include <tuple>

#include "meta/quantity.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

void setIfMissing(json::Value& obj, std::string_view key, json::Value v, json::Allocator& a) {
  const json::Value* cur = json::find(obj, key);
  if (!cur || cur->IsNull()) json::set(obj, key, std::move(v), a);
}

std::string imageTag(std::string_view image) {
  // Strip a digest; the tag follows the last ':' after the last '/'.
  auto at = image.find('@');
  if (at != std::string_view::npos) return "@digest";
  auto slash = image.rfind('/');
  auto colon = image.rfind(':');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash)) return "";
  return std::string(image.substr(colon + 1));
}

void defaultContainer(json::Value& c, json::Allocator& a) {
  if (!c.IsObject()) return;
  std::string_view image = json::getString(c, "image");
  std::string tag = imageTag(image);
  setIfMissing(c, "imagePullPolicy",
               json::str((tag.empty() || tag == "latest") ? "Always" : "IfNotPresent", a), a);
  setIfMissing(c, "terminationMessagePath", json::str("/dev/termination-log", a), a);
  setIfMissing(c, "terminationMessagePolicy", json::str("File", a), a);
  setIfMissing(c, "resources", json::Value(rapidjson::kObjectType), a);
  if (json::Value* res = json::find(c, "resources"); res && res->IsObject()) {
    // Requests default to limits for every resource that has a limit.
    const json::Value* limits = json::find(*res, "limits");
    if (limits && limits->IsObject() && limits->MemberCount() > 0) {
      json::Value& requests = json::ensureObject(*res, "requests", a);
      for (auto& m : limits->GetObject())
        if (!json::find(requests, json::view(m.name)))
          requests.AddMember(json::Value(m.name, a), json::Value(m.value, a), a);
    }
  }
  if (json::Value* ports = json::find(c, "ports"); ports && ports->IsArray())
    for (auto& p : ports->GetArray())
      if (p.IsObject()) setIfMissing(p, "protocol", json::str("TCP", a), a);
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    json::Value* pr = json::find(c, probe);
    if (!pr || !pr->IsObject()) continue;
    setIfMissing(*pr, "timeoutSeconds", json::Value(1), a);
    setIfMissing(*pr, "periodSeconds", json::Value(10), a);
    setIfMissing(*pr, "successThreshold", json::Value(1), a);
    setIfMissing(*pr, "failureThreshold", json::Value(3), a);
    if (json::Value* hg = json::find(*pr, "httpGet"); hg && hg->IsObject()) {
      setIfMissing(*hg, "path", json::str("/", a), a);
      setIfMissing(*hg, "scheme", json::str("HTTP", a), a);
    }
  }
}

void validateContainer(const json::Value& c, const std::string& path, FieldErrors& errs,
                       std::set<std::string>& names) {
  std::string_view name = json::getString(c, "name");
  if (name.empty()) {
    errs.required(path + ".name");
  } else {
    for (auto& e : meta::validation::dns1123Label(name))
      errs.invalid(path + ".name", meta::validation::quote(name), e);
    if (!names.insert(std::string(name)).second)
      errs.duplicate(path + ".name", meta::validation::quote(name));
  }
  if (json::getString(c, "image").empty()) errs.required(path + ".image");
  std::string_view pull = json::getString(c, "imagePullPolicy");
  if (!pull.empty() && pull != "Always" && pull != "IfNotPresent" && pull != "Never")
    errs.notSupported(path + ".imagePullPolicy", std::string(pull), {"Always", "IfNotPresent", "Never"});
  if (const json::Value* ports = json::find(c, "ports"); ports && ports->IsArray()) {
    for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
      const json::Value& p = (*ports)[i];
      std::string pp = path + ".ports[" + std::to_string(i) + "]";
      auto port = json::getInt(p, "containerPort");
      if (!port)
        errs.required(pp + ".containerPort");
      else if (*port < 1 || *port > 65535)
        errs.invalid(pp + ".containerPort", std::to_string(*port), "must be between 1 and 65535, inclusive");
      std::string_view proto = json::getString(p, "protocol", "TCP");
      if (proto != "TCP" && proto != "UDP" && proto != "SCTP")
        errs.notSupported(pp + ".protocol", std::string(proto), {"SCTP", "TCP", "UDP"});
    }
  }
  if (const json::Value* res = json::find(c, "resources"); res && res->IsObject()) {
    for (const char* kind : {"limits", "requests"}) {
      const json::Value* list = json::find(*res, kind);
      if (!list || !list->IsObject()) continue;
      for (auto& m : list->GetObject()) {
        std::string field = path + ".resources." + kind + "[" + std::string(json::view(m.name)) + "]";
        auto q = meta::quantityValue(m.value);
        if (!q)
          errs.invalid(
              field, meta::validation::quote(m.value.IsString() ? json::view(m.value) : ""),
              "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
        else if (*q < 0)
          errs.invalid(field, json::serialize(m.value), "must be greater than or equal to 0");
      }
    }
  }
}

}  // namespace

void defaultPodSpec(json::Value& spec, json::Allocator& a) {
  if (!spec.IsObject()) return;
  setIfMissing(spec, "restartPolicy", json::str("Always", a), a);
  setIfMissing(spec, "dnsPolicy", json::str("ClusterFirst", a), a);
  setIfMissing(spec, "terminationGracePeriodSeconds", json::Value(30), a);
  setIfMissing(spec, "schedulerName", json::str("default-scheduler", a), a);
  setIfMissing(spec, "securityContext", json::Value(rapidjson::kObjectType), a);
  for (const char* list : {"containers", "initContainers"}) {
    json::Value* cs = json::find(spec, list);
    if (cs && cs->IsArray())
      for (auto& c : cs->GetArray()) defaultContainer(c, a);
  }
  if (json::Value* vols = json::find(spec, "volumes"); vols && vols->IsArray()) {
    for (auto& v : vols->GetArray()) {
      if (!v.IsObject()) continue;
      for (const char* src : {"configMap", "secret"}) {
        json::Value* s = json::find(v, src);
        if (s && s->IsObject()) setIfMissing(*s, "defaultMode", json::Value(420), a);
      }
      if (json::Value* s = json::find(v, "emptyDir"); s && s->IsNull()) s->SetObject();
      if (json::Value* s = json::find(v, "downwardAPI"); s && s->IsObject())
        setIfMissing(*s, "defaultMode", json::Value(420), a);
      if (json::Value* s = json::find(v, "projected"); s && s->IsObject())
        setIfMissing(*s, "defaultMode", json::Value(420), a);
      if (json::Value* s = json::find(v, "hostPath"); s && s->IsObject())
        setIfMissing(*s, "type", json::str("", a), a);
    }
  }
}

namespace {
std::atomic<int64_t> notReadyTolerationSeconds{300}, unreachableTolerationSeconds{300};
}  // namespace

void setDefaultTolerationSeconds(int64_t not_ready, int64_t unreachable) {
  notReadyTolerationSeconds = not_ready;
  unreachableTolerationSeconds = unreachable;
}

void admitPodSpec(json::Value& spec, json::Allocator& a) {
  if (!spec.IsObject()) return;
  // DefaultTolerationSeconds admission: unless the pod already tolerates them, the
  // not-ready and unreachable NoExecute taints are tolerated for a while.
  bool notReady = false, unreachable = false;
  if (const json::Value* ts = json::find(spec, "tolerations"); ts && ts->IsArray())
    for (auto& t : ts->GetArray()) {
      std::string_view key = json::getString(t, "key"), effect = json::getString(t, "effect");
      bool noExecute = effect.empty() || effect == "NoExecute";
      if (noExecute && (key.empty() || key == "node.kubernetes.io/not-ready")) notReady = true;
      if (noExecute && (key.empty() || key == "node.kubernetes.io/unreachable")) unreachable = true;
    }
  if (!notReady || !unreachable) {
    json::Value* ts = json::find(spec, "tolerations");
    if (!ts || !ts->IsArray()) {
      json::set(spec, "tolerations", json::Value(rapidjson::kArrayType), a);
      ts = json::find(spec, "tolerations");
    }
    for (auto [needed, key, seconds] :
         {std::tuple<bool, const char*, int64_t>{!notReady, "node.kubernetes.io/not-ready",
                                                 notReadyTolerationSeconds},
          {!unreachable, "node.kubernetes.io/unreachable", unreachableTolerationSeconds}}) {
      if (!needed) continue;
      json::Value t(rapidjson::kObjectType);
      json::setString(t, "key", key, a);
      json::setString(t, "operator", "Exists", a);
      json::setString(t, "effect", "NoExecute", a);
      json::set(t, "tolerationSeconds", json::Value(seconds), a);
      ts->PushBack(std::move(t), a);
    }
  }
  // A Pod default only (SetDefaults_Pod), not a template's.
  setIfMissing(spec, "enableServiceLinks", json::Value(true), a);
  // Priority admission: no priority class means priority 0.
  if (!json::find(spec, "priorityClassName")) {
    setIfMissing(spec, "priority", json::Value(0), a);
    setIfMissing(spec, "preemptionPolicy", json::str("PreemptLowerPriority", a), a);
  }
  // ServiceAccount admission: the default account when none is named.
  std::string_view sa = json::getString(spec, "serviceAccountName");
  if (sa.empty()) sa = json::getString(spec, "serviceAccount");
  if (sa.empty()) sa = "default";
  std::string sa_copy(sa);
  setIfMissing(spec, "serviceAccountName", json::str(sa_copy, a), a);
  setIfMissing(spec, "serviceAccount", json::str(sa_copy, a), a);
}

void validatePodSpec(const json::Value& spec, const std::string& path, FieldErrors& errs) {
  if (!spec.IsObject()) {
    errs.required(path);
    return;
  }
  std::set<std::string> names;
  const json::Value* cs = json::find(spec, "containers");
  if (!cs || !cs->IsArray() || cs->Size() == 0) {
    errs.required(path + ".containers");
  } else {
    for (rapidjson::SizeType i = 0; i < cs->Size(); ++i)
      validateContainer((*cs)[i], path + ".containers[" + std::to_string(i) + "]", errs, names);
  }
  if (const json::Value* ics = json::find(spec, "initContainers"); ics && ics->IsArray())
    for (rapidjson::SizeType i = 0; i < ics->Size(); ++i)
      validateContainer((*ics)[i], path + ".initContainers[" + std::to_string(i) + "]", errs, names);
  std::string_view rp = json::getString(spec, "restartPolicy");
  if (!rp.empty() && rp != "Always" && rp != "OnFailure" && rp != "Never")
    errs.notSupported(path + ".restartPolicy", std::string(rp), {"Always", "OnFailure", "Never"});
  std::string_view dns = json::getString(spec, "dnsPolicy");
  if (!dns.empty() && dns != "ClusterFirstWithHostNet" && dns != "ClusterFirst" && dns != "Default" &&
      dns != "None")
    errs.notSupported(path + ".dnsPolicy", std::string(dns),
                      {"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"});
  if (auto g = json::getInt(spec, "terminationGracePeriodSeconds"); g && *g < 0)
    errs.invalid(path + ".terminationGracePeriodSeconds", std::to_string(*g),
                 "must be greater than or equal to 0");
  if (auto d = json::getInt(spec, "activeDeadlineSeconds"); d && *d <= 0)
    errs.invalid(path + ".activeDeadlineSeconds", std::to_string(*d),
                 "must be between 1 and 2147483647, inclusive");
  if (const json::Value* vols = json::find(spec, "volumes"); vols && vols->IsArray()) {
    std::set<std::string> vnames;
    for (rapidjson::SizeType i = 0; i < vols->Size(); ++i) {
      std::string vp = path + ".volumes[" + std::to_string(i) + "]";
      std::string_view vn = json::getString((*vols)[i], "name");
      if (vn.empty()) {
        errs.required(vp + ".name");
        continue;
      }
      for (auto& e : meta::validation::dns1123Label(vn))
        errs.invalid(vp + ".name", meta::validation::quote(vn), e);
      if (!vnames.insert(std::string(vn)).second) errs.duplicate(vp + ".name", meta::validation::quote(vn));
    }
  }
  if (const json::Value* sel = json::find(spec, "nodeSelector"); sel && sel->IsObject()) {
    for (auto& m : sel->GetObject()) {
      std::string_view k = json::view(m.name);
      for (auto& e : meta::validation::qualifiedName(k))
        errs.invalid(path + ".nodeSelector", meta::validation::quote(k), e);
    }
  }
}

void validateObjectLabels(const json::Value& meta, const std::string& path, FieldErrors& errs) {
  const json::Value* labels = json::find(meta, "labels");
  if (!labels || !labels->IsObject()) return;
  for (auto& m : labels->GetObject()) {
    std::string_view k = json::view(m.name);
    for (auto& e : meta::validation::qualifiedName(k))
      errs.invalid(path + ".labels", meta::validation::quote(k), e);
    if (!m.value.IsString()) continue;
    std::string_view v = json::view(m.value);
    for (auto& e : meta::validation::labelValue(v))
      errs.invalid(path + ".labels", meta::validation::quote(v), e);
  }
}

std::string qosClass(const json::Value& spec) {
  bool any = false;
  bool guaranteed = true;
  auto scan = [&](const json::Value* cs) {
    if (!cs || !cs->IsArray()) return;
    for (auto& c : cs->GetArray()) {
      const json::Value* res = json::find(c, "resources");
      const json::Value* req = res ? json::find(*res, "requests") : nullptr;
      const json::Value* lim = res ? json::find(*res, "limits") : nullptr;
      for (const char* r : {"cpu", "memory"}) {
        const json::Value* q = req ? json::find(*req, r) : nullptr;
        const json::Value* l = lim ? json::find(*lim, r) : nullptr;
        long double qv = 0, lv = 0;
        bool hasQ = false, hasL = false;
        if (q)
          if (auto x = meta::quantityValue(*q)) {
            qv = *x;
            hasQ = true;
          }
        if (l)
          if (auto x = meta::quantityValue(*l)) {
            lv = *x;
            hasL = true;
          }
        if ((hasQ && qv != 0) || (hasL && lv != 0)) any = true;
        if (!hasL) {
          guaranteed = false;
          continue;
        }
        if (hasQ && qv != lv) guaranteed = false;
      }
    }
  };
  scan(json::find(spec, "containers"));
  scan(json::find(spec, "initContainers"));
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

std::string containerNames(const json::Value& spec) {
  std::string out;
  if (const json::Value* cs = json::find(spec, "containers"); cs && cs->IsArray())
    for (auto& c : cs->GetArray()) {
      if (!out.empty()) out += ",";
      out += json::getString(c, "name");
    }
  return out;
}

std::string containerImages(const json::Value& spec) {
  std::string out;
  if (const json::Value* cs = json::find(spec, "containers"); cs && cs->IsArray())
    for (auto& c : cs->GetArray()) {
      if (!out.empty()) out += ",";
      out += json::getString(c, "image");
    }
  return out;
}

std::string formatLabels(const json::Value* labels) {
  if (!labels || !labels->IsObject() || labels->MemberCount() == 0) return "<none>";
  std::vector<std::string> parts;
  for (auto& m : labels->GetObject())
    parts.push_back(std::string(json::view(m.name)) + "=" + std::string(json::view(m.value)));
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

std::string formatLabelSelector(const json::Value* sel) {
  if (!sel || !sel->IsObject()) return "<none>";
  std::vector<std::string> parts;
  if (const json::Value* ml = json::find(*sel, "matchLabels"); ml && ml->IsObject())
    for (auto& m : ml->GetObject())
      parts.push_back(std::string(json::view(m.name)) + "=" + std::string(json::view(m.value)));
  std::sort(parts.begin(), parts.end());
  if (const json::Value* me = json::find(*sel, "matchExpressions"); me && me->IsArray()) {
    for (auto& e : me->GetArray()) {
      std::string key(json::getString(e, "key"));
      std::string op(json::getString(e, "operator"));
      std::string values;
      if (const json::Value* vs = json::find(e, "values"); vs && vs->IsArray())
        for (auto& v : vs->GetArray()) values += (values.empty() ? "" : ",") + std::string(json::view(v));
      if (op == "In")
        parts.push_back(key + " in (" + values + ")");
      else if (op == "NotIn")
        parts.push_back(key + " notin (" + values + ")");
      else if (op == "Exists")
        parts.push_back(key);
      else if (op == "DoesNotExist")
        parts.push_back("!" + key);
    }
  }
  if (parts.empty()) return "<none>";
  std::string out;
  for (auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

std::vector<TableColumn> templateWideColumns() {
  return {{"Containers", "string", "", "Names of each container in the template.", 1},
          {"Images", "string", "", "Images referenced by each container in the template.", 1},
          {"Selector", "string", "", "Label selector for pods.", 1}};
}

void templateWideCells(const json::Value& obj, const std::string& selector, json::Value& cells,
                       json::Allocator& a) {
  const json::Value* ps = json::findPath(obj, {"spec", "template", "spec"});
  cells.PushBack(json::str(ps ? containerNames(*ps) : "", a), a);
  cells.PushBack(json::str(ps ? containerImages(*ps) : "", a), a);
  cells.PushBack(json::str(selector, a), a);
}

std::vector<TableColumn> replicaTableColumns() {
  std::vector<TableColumn> cols = {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
                                   {"Desired", "integer", "", "Number of desired pods.", 0},
                                   {"Current", "integer", "", "Number of actual pods.", 0},
                                   {"Ready", "integer", "", "Number of pods ready.", 0},
                                   {"Age", "string", "", "Time since the object was created.", 0}};
  for (auto& c : templateWideColumns()) cols.push_back(c);
  return cols;
}

void replicaTableRow(const json::Value& obj, const std::string& selector, json::Value& cells,
                     json::Allocator& a) {
  static const json::Value empty(rapidjson::kObjectType);
  const json::Value* spec = json::find(obj, "spec");
  if (!spec) spec = &empty;
  const json::Value* status = json::find(obj, "status");
  if (!status) status = &empty;
  cells.PushBack(json::str(json::getStringPath(obj, {"metadata", "name"}), a), a);
  cells.PushBack(json::Value(json::getInt(*spec, "replicas").value_or(0)), a);
  cells.PushBack(json::Value(json::getInt(*status, "replicas").value_or(0)), a);
  cells.PushBack(json::Value(json::getInt(*status, "readyReplicas").value_or(0)), a);
  cells.PushBack(json::str(ageCell(obj), a), a);
  templateWideCells(obj, selector, cells, a);
}

void validateSelectorMatchesTemplate(const json::Value* selector, const json::Value* template_labels,
                                     const std::string& path, FieldErrors& errs, bool map_selector) {
  if (!selector || !selector->IsObject() || selector->MemberCount() == 0) {
    errs.required(path);
    return;
  }
  auto labelOf = [&](std::string_view k) -> const json::Value* {
    return template_labels && template_labels->IsObject() ? json::find(*template_labels, k) : nullptr;
  };
  bool matches = true;
  const json::Value* ml = map_selector ? selector : json::find(*selector, "matchLabels");
  if (ml && ml->IsObject()) {
    for (auto& m : ml->GetObject()) {
      const json::Value* v = labelOf(json::view(m.name));
      if (!v || !v->IsString() || json::view(*v) != json::view(m.value)) matches = false;
    }
  }
  if (!map_selector) {
    const json::Value* me = json::find(*selector, "matchExpressions");
    if ((!ml || !ml->IsObject() || ml->MemberCount() == 0) && (!me || !me->IsArray() || me->Size() == 0)) {
      errs.invalid(path, "{}", "empty selector is invalid for deployment");
      return;
    }
    if (me && me->IsArray()) {
      for (auto& e : me->GetArray()) {
        std::string_view op = json::getString(e, "operator");
        const json::Value* v = labelOf(json::getString(e, "key"));
        const json::Value* vs = json::find(e, "values");
        auto in = [&] {
          if (!v || !vs || !vs->IsArray()) return false;
          for (auto& x : vs->GetArray())
            if (x.IsString() && v->IsString() && json::view(x) == json::view(*v)) return true;
          return false;
        };
        if (op == "In" && !in())
          matches = false;
        else if (op == "NotIn" && in())
          matches = false;
        else if (op == "Exists" && !v)
          matches = false;
        else if (op == "DoesNotExist" && v)
          matches = false;
        else if (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist")
          errs.notSupported(path + ".matchExpressions.operator", std::string(op),
                            {"In", "NotIn", "Exists", "DoesNotExist"});
      }
    }
  }
  if (!matches) {
    std::string tl = formatLabels(template_labels);
    std::string repr = "map[string]string{";
    if (template_labels && template_labels->IsObject()) {
      std::vector<std::string> kv;
      for (auto& m : template_labels->GetObject())
        kv.push_back(meta::validation::quote(json::view(m.name)) + ":" +
                     meta::validation::quote(json::view(m.value)));
      std::sort(kv.begin(), kv.end());
      for (size_t i = 0; i < kv.size(); ++i) repr += (i ? ", " : "") + kv[i];
    }
    repr += "}";
    std::string tpath = path.substr(0, path.rfind('.')) + ".template.metadata.labels";
    errs.invalid(tpath, repr, "`selector` does not match template `labels`");
  }
}

}  // namespace shepherd::apis::kinds
