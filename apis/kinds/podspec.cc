#include "apis/kinds/podspec.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "apis/kinds/podspec_checks.h"
#include "meta/quantity.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

void setIfMissing(json::Value& obj, std::string_view key, json::Value v, json::Allocator& a) {
  const json::Value* cur = json::find(obj, key);
  if (!cur || cur->IsNull()) json::set(obj, key, std::move(v), a);
}

// Go's defaulting cannot tell an empty string or a zero from an unset field: both get
// the default.
void setIfEmpty(json::Value& obj, std::string_view key, json::Value v, json::Allocator& a) {
  const json::Value* cur = json::find(obj, key);
  if (!cur || cur->IsNull() || (cur->IsString() && cur->GetStringLength() == 0) ||
      (cur->IsNumber() && cur->GetDouble() == 0))
    json::set(obj, key, std::move(v), a);
}

// The volume sources v1 knows; a volume naming none of them gets an emptyDir.
const char* const kVolumeSources[] = {"emptyDir",
                                      "hostPath",
                                      "gitRepo",
                                      "gcePersistentDisk",
                                      "awsElasticBlockStore",
                                      "secret",
                                      "nfs",
                                      "iscsi",
                                      "glusterfs",
                                      "flocker",
                                      "persistentVolumeClaim",
                                      "rbd",
                                      "cinder",
                                      "cephfs",
                                      "quobyte",
                                      "downwardAPI",
                                      "fc",
                                      "flexVolume",
                                      "configMap",
                                      "azureFile",
                                      "vsphereVolume",
                                      "photonPersistentDisk",
                                      "portworxVolume",
                                      "azureDisk",
                                      "storageos",
                                      "projected",
                                      "scaleIO",
                                      "csi",
                                      "ephemeral",
                                      "image"};

void defaultFieldRef(json::Value* holder, json::Allocator& a) {
  if (!holder || !holder->IsObject()) return;
  if (json::Value* ref = json::find(*holder, "fieldRef"); ref && ref->IsObject())
    setIfEmpty(*ref, "apiVersion", json::str("v1", a), a);
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
  setIfEmpty(c, "imagePullPolicy", json::str((tag.empty() || tag == "latest") ? "Always" : "IfNotPresent", a),
             a);
  setIfEmpty(c, "terminationMessagePath", json::str("/dev/termination-log", a), a);
  setIfEmpty(c, "terminationMessagePolicy", json::str("File", a), a);
  if (json::Value* env = json::find(c, "env"); env && env->IsArray())
    for (auto& e : env->GetArray()) defaultFieldRef(json::find(e, "valueFrom"), a);
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
      if (p.IsObject()) setIfEmpty(p, "protocol", json::str("TCP", a), a);
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    json::Value* pr = json::find(c, probe);
    if (!pr || !pr->IsObject()) continue;
    setIfEmpty(*pr, "timeoutSeconds", json::Value(1), a);
    setIfEmpty(*pr, "periodSeconds", json::Value(10), a);
    setIfEmpty(*pr, "successThreshold", json::Value(1), a);
    setIfEmpty(*pr, "failureThreshold", json::Value(3), a);
  }
  auto defaultHttpGet = [&a](json::Value* handler) {
    if (json::Value* hg = handler ? json::find(*handler, "httpGet") : nullptr; hg && hg->IsObject()) {
      setIfEmpty(*hg, "path", json::str("/", a), a);
      setIfEmpty(*hg, "scheme", json::str("HTTP", a), a);
    }
  };
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"})
    defaultHttpGet(json::find(c, probe));
  if (json::Value* lc = json::find(c, "lifecycle"); lc && lc->IsObject())
    for (const char* hook : {"postStart", "preStop"}) defaultHttpGet(json::find(*lc, hook));
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
      bool anySource = false;
      for (const char* src : kVolumeSources)
        if (const json::Value* s = json::find(v, src); s && !s->IsNull()) anySource = true;
      if (!anySource) json::set(v, "emptyDir", json::Value(rapidjson::kObjectType), a);
      if (json::Value* s = json::find(v, "downwardAPI"); s && s->IsObject())
        if (json::Value* items = json::find(*s, "items"); items && items->IsArray())
          for (auto& item : items->GetArray()) defaultFieldRef(&item, a);
      if (json::Value* s = json::find(v, "projected"); s && s->IsObject())
        if (json::Value* srcs = json::find(*s, "sources"); srcs && srcs->IsArray())
          for (auto& src : srcs->GetArray()) {
            if (json::Value* t = json::find(src, "serviceAccountToken"); t && t->IsObject())
              setIfMissing(*t, "expirationSeconds", json::Value(3600), a);
            if (json::Value* d = json::find(src, "downwardAPI"); d && d->IsObject())
              if (json::Value* items = json::find(*d, "items"); items && items->IsArray())
                for (auto& item : items->GetArray()) defaultFieldRef(&item, a);
          }
      if (json::Value* s = json::find(v, "downwardAPI"); s && s->IsObject())
        setIfMissing(*s, "defaultMode", json::Value(420), a);
      if (json::Value* s = json::find(v, "projected"); s && s->IsObject())
        setIfMissing(*s, "defaultMode", json::Value(420), a);
      if (json::Value* s = json::find(v, "hostPath"); s && s->IsObject())
        setIfMissing(*s, "type", json::str("", a), a);
    }
  }
}

void defaultPodOnly(json::Value& spec, json::Allocator& a) {
  if (!spec.IsObject()) return;
  // Pod defaults only (SetDefaults_Pod), not a template's: service links, and host
  // ports equal to container ports under hostNetwork.
  setIfMissing(spec, "enableServiceLinks", json::Value(true), a);
  if (json::getBool(spec, "hostNetwork"))
    for (const char* list : {"containers", "initContainers"})
      if (json::Value* cs = json::find(spec, list); cs && cs->IsArray())
        for (auto& c : cs->GetArray())
          if (json::Value* ports = json::find(c, "ports"); ports && ports->IsArray())
            for (auto& p : ports->GetArray())
              if (json::getInt(p, "hostPort").value_or(0) == 0)
                if (const json::Value* cp = json::find(p, "containerPort"))
                  json::set(p, "hostPort", json::Value(*cp, a), a);
}

void validatePodSpec(const json::Value& spec, const std::string& path, FieldErrors& errs, bool is_pod) {
  using meta::validation::quote;
  if (!spec.IsObject()) {
    errs.required(path + ".containers");
    return;
  }
  PodSpecScope scope;
  scope.path = path;
  scope.is_pod = is_pod;
  scope.grace_period = json::getInt(spec, "terminationGracePeriodSeconds");
  scope.restart_policy = json::getString(spec, "restartPolicy");
  scope.host_network = json::getBool(spec, "hostNetwork");
  scope.volumes = validateVolumes(json::find(spec, "volumes"), path + ".volumes", errs);
  validateContainers(spec, scope, errs);
  if (scope.host_network)
    if (const json::Value* cs = json::find(spec, "containers"); cs && cs->IsArray())
      for (rapidjson::SizeType i = 0; i < cs->Size(); ++i)
        if (const json::Value* ports = json::find((*cs)[i], "ports"); ports && ports->IsArray())
          for (rapidjson::SizeType j = 0; j < ports->Size(); ++j) {
            // Templates may leave hostPort 0: the pod's defaults fill it in.
            int64_t hp = json::getInt((*ports)[j], "hostPort").value_or(0);
            int64_t cp = json::getInt((*ports)[j], "containerPort").value_or(0);
            if ((is_pod || hp != 0) && hp != cp)
              errs.invalid(indexed(indexed(path + ".containers", i) + ".ports", j) + ".hostPort",
                           std::to_string(hp), "must match `containerPort` when `hostNetwork` is true");
          }
  std::string_view rp = scope.restart_policy;
  if (rp.empty())
    errs.required(path + ".restartPolicy");
  else if (rp != "Always" && rp != "OnFailure" && rp != "Never")
    errs.notSupported(path + ".restartPolicy", std::string(rp), {"Always", "OnFailure", "Never"});
  std::string_view dns = json::getString(spec, "dnsPolicy");
  if (dns.empty())
    errs.required(path + ".dnsPolicy");
  else if (dns != "ClusterFirstWithHostNet" && dns != "ClusterFirst" && dns != "Default" && dns != "None")
    errs.notSupported(path + ".dnsPolicy", std::string(dns),
                      {"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"});
  validateLabelMap(json::find(spec, "nodeSelector"), path + ".nodeSelector", errs);
  validatePodSecurityContext(spec, path, errs);
  if (const json::Value* aff = json::find(spec, "affinity"); aff && aff->IsObject())
    validateAffinity(*aff, path + ".affinity", errs);
  validateDNSConfig(spec, path, errs);
  if (const json::Value* gates = json::find(spec, "readinessGates"); gates && gates->IsArray())
    for (rapidjson::SizeType i = 0; i < gates->Size(); ++i) {
      std::string_view t = json::getString((*gates)[i], "conditionType");
      for (auto& e : meta::validation::qualifiedName(t))
        errs.invalid(indexed(path + ".readinessGates", i) + ".conditionType", quote(t), e);
    }
  if (const json::Value* gates = json::find(spec, "schedulingGates"); gates && gates->IsArray()) {
    std::set<std::string> seen;
    for (rapidjson::SizeType i = 0; i < gates->Size(); ++i) {
      std::string_view n = json::getString((*gates)[i], "name");
      for (auto& e : meta::validation::qualifiedName(n))
        errs.invalid(indexed(path + ".schedulingGates", i), quote(n), e);
      if (!seen.insert(std::string(n)).second)
        errs.duplicate(indexed(path + ".schedulingGates", i), quote(n));
    }
  }
  if (const json::Value* tsc = json::find(spec, "topologySpreadConstraints"))
    validateTopologySpreadConstraints(*tsc, path + ".topologySpreadConstraints", errs);
  for (const char* f : {"serviceAccountName", "nodeName"}) {
    std::string_view v = json::getString(spec, f);
    if (!v.empty())
      for (auto& e : meta::validation::dns1123Subdomain(v)) errs.invalid(path + "." + f, quote(v), e);
  }
  if (auto d = json::getInt(spec, "activeDeadlineSeconds"); d && (*d < 1 || *d > 2147483647))
    errs.invalid(path + ".activeDeadlineSeconds", std::to_string(*d),
                 meta::validation::inclusiveRange(1, 2147483647));
  for (const char* f : {"hostname", "subdomain"}) {
    std::string_view v = json::getString(spec, f);
    if (!v.empty())
      for (auto& e : meta::validation::dns1123Label(v)) errs.invalid(path + "." + f, quote(v), e);
  }
  if (const json::Value* ts = json::find(spec, "tolerations"); ts && ts->IsArray() && ts->Size())
    validateTolerations(*ts, path + ".tolerations", errs);
  if (const json::Value* aliases = json::find(spec, "hostAliases"); aliases && aliases->IsArray())
    for (rapidjson::SizeType i = 0; i < aliases->Size(); ++i) {
      std::string ap = indexed(path + ".hostAliases", i);
      std::string_view ip = json::getString((*aliases)[i], "ip");
      if (!meta::validation::ipFamily(ip)) errs.invalid(ap + ".ip", quote(ip), meta::validation::kInvalidIP);
      if (const json::Value* hosts = json::find((*aliases)[i], "hostnames"); hosts && hosts->IsArray())
        for (rapidjson::SizeType j = 0; j < hosts->Size(); ++j) {
          std::string_view h = (*hosts)[j].IsString() ? json::view((*hosts)[j]) : "";
          for (auto& e : meta::validation::dns1123Subdomain(h))
            errs.invalid(indexed(ap + ".hostnames", j), quote(h), e);
        }
    }
  for (const char* f : {"priorityClassName", "runtimeClassName"}) {
    const json::Value* v = json::find(spec, f);
    if (!v || !v->IsString() || (std::string_view(f) == "priorityClassName" && v->GetStringLength() == 0))
      continue;
    for (auto& e : meta::validation::dns1123Subdomain(json::view(*v)))
      errs.invalid(path + "." + f, quote(json::view(*v)), e);
  }
  if (const json::Value* pp = json::find(spec, "preemptionPolicy"); pp && pp->IsString()) {
    std::string_view v = json::view(*pp);
    if (v.empty())
      errs.required(path + ".preemptionPolicy");
    else if (v != "PreemptLowerPriority" && v != "Never")
      errs.notSupported(path + ".preemptionPolicy", std::string(v), {"PreemptLowerPriority", "Never"});
  }
  if (const json::Value* os = json::find(spec, "os"); os && os->IsObject()) {
    std::string_view name = json::getString(*os, "name");
    if (name.empty())
      errs.required(path + ".os.name", "cannot be empty");
    else if (name != "linux" && name != "windows")
      errs.notSupported(path + ".os", std::string(name), {"linux", "windows"});
  }
  if (is_pod) {
    for (const char* list : {"containers", "initContainers"})
      if (const json::Value* cs = json::find(spec, list); cs && cs->IsArray())
        for (rapidjson::SizeType i = 0; i < cs->Size(); ++i) {
          std::string_view image = json::getString((*cs)[i], "image");
          size_t b = image.find_first_not_of(" \t\n\v\f\r"), e = image.find_last_not_of(" \t\n\v\f\r");
          if (!image.empty() && (b != 0 || e != image.size() - 1))
            errs.invalid(indexed(path + "." + list, i) + ".image", quote(image),
                         "must not have leading or trailing whitespace");
        }
  }
}

void validatePodAnnotations(const json::Value* annotations, const json::Value& spec, const std::string& path,
                            FieldErrors& errs) {
  using meta::validation::quote;
  if (!annotations || !annotations->IsObject()) return;
  if (const json::Value* v = json::find(*annotations, "kubernetes.io/config.mirror"); v && v->IsString())
    if (json::getString(spec, "nodeName").empty())
      errs.invalid(path + "[kubernetes.io/config.mirror]", quote(json::view(*v)),
                   "must set spec.nodeName if mirror pod annotation is set");
  if (const json::Value* v = json::find(*annotations, "controller.kubernetes.io/pod-deletion-cost");
      v && v->IsString()) {
    std::string_view text = json::view(*v);
    // strconv.ParseInt(text, 10, 32)
    bool ok = !text.empty();
    size_t i = text[0] == '+' || text[0] == '-' ? 1 : 0;
    if (i == text.size()) ok = false;
    long long n = 0;
    for (; ok && i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9' || n > 3000000000LL)
        ok = false;
      else
        n = n * 10 + (text[i] - '0');
    }
    if (ok && !text.empty() && text[0] == '-') n = -n;
    if (!ok || n > 2147483647LL || n < -2147483648LL)
      errs.invalid(path + "[controller.kubernetes.io/pod-deletion-cost]", quote(text),
                   "must be a 32bit integer");
  }
}

void validatePodTemplate(const json::Value& tmpl, const std::string& path, FieldErrors& errs) {
  const json::Value* meta = json::find(tmpl, "metadata");
  const json::Value* spec = json::find(tmpl, "spec");
  static const json::Value empty(rapidjson::kObjectType);
  if (meta) {
    validateLabelMap(json::find(*meta, "labels"), path + ".labels", errs);
    validateAnnotations(json::find(*meta, "annotations"), path + ".annotations", errs);
    validatePodAnnotations(json::find(*meta, "annotations"), spec ? *spec : empty, path + ".annotations",
                           errs);
  }
  validatePodSpec(spec ? *spec : empty, path + ".spec", errs);
  if (const json::Value* ec = spec ? json::find(*spec, "ephemeralContainers") : nullptr;
      ec && ec->IsArray() && ec->Size())
    errs.forbidden(path + ".spec.ephemeralContainers", "ephemeral containers not allowed in pod template");
}

void validateAnnotations(const json::Value* annotations, const std::string& path, FieldErrors& errs) {
  if (!annotations || !annotations->IsObject()) return;
  size_t total = 0;
  for (auto& m : annotations->GetObject()) {
    std::string_view k = json::view(m.name);
    total += k.size() + (m.value.IsString() ? m.value.GetStringLength() : 0);
    // Case does not matter in annotation keys: upstream checks the lowercased key.
    std::string lower(k);
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (auto& e : meta::validation::qualifiedName(lower)) errs.invalid(path, meta::validation::quote(k), e);
  }
  if (total > 256 * 1024) errs.add({"FieldValueTooLong", "Too long: must have at most 262144 bytes", path});
}

void validateObjectLabels(const json::Value& meta, const std::string& path, FieldErrors& errs) {
  validateLabelMap(json::find(meta, "labels"), path + ".labels", errs);
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

std::string labelMapRepr(const json::Value* labels) {
  using meta::validation::quote;
  if (!labels || !labels->IsObject()) return "map[string]string(nil)";
  std::vector<std::string> kv;
  for (auto& m : labels->GetObject())
    kv.push_back(quote(json::view(m.name)) + ":" + quote(m.value.IsString() ? json::view(m.value) : ""));
  std::sort(kv.begin(), kv.end());
  std::string out = "map[string]string{";
  for (size_t i = 0; i < kv.size(); ++i) out += (i ? ", " : "") + kv[i];
  return out + "}";
}

std::string labelSelectorRepr(const json::Value* selector) {
  // The generated String() of *metav1.LabelSelector.
  std::vector<std::pair<std::string, std::string>> labels;
  if (const json::Value* ml = selector ? json::find(*selector, "matchLabels") : nullptr; ml && ml->IsObject())
    for (auto& m : ml->GetObject())
      labels.emplace_back(json::view(m.name), m.value.IsString() ? json::view(m.value) : "");
  std::sort(labels.begin(), labels.end());
  std::string out = "&LabelSelector{MatchLabels:map[string]string{";
  for (auto& [k, v] : labels) out += k + ": " + v + ",";
  out += "},MatchExpressions:[]LabelSelectorRequirement{";
  if (const json::Value* me = selector ? json::find(*selector, "matchExpressions") : nullptr;
      me && me->IsArray())
    for (auto& r : me->GetArray()) {
      std::string values;
      if (const json::Value* vs = json::find(r, "values"); vs && vs->IsArray())
        for (rapidjson::SizeType i = 0; i < vs->Size(); ++i)
          values += (i ? " " : "") + std::string((*vs)[i].IsString() ? json::view((*vs)[i]) : "");
      out += "LabelSelectorRequirement{Key:" + std::string(json::getString(r, "key")) +
             ",Operator:" + std::string(json::getString(r, "operator")) + ",Values:[" + values + "],},";
    }
  return out + "},}";
}

bool selectorConverts(const json::Value& selector) {
  FieldErrors syntax;
  validateLabelSelector(selector, "", syntax);
  return syntax.empty();
}

bool selectorMatches(const json::Value& selector, const json::Value* labels) {
  auto labelOf = [&](std::string_view k) -> const json::Value* {
    return labels && labels->IsObject() ? json::find(*labels, k) : nullptr;
  };
  if (const json::Value* ml = json::find(selector, "matchLabels"); ml && ml->IsObject())
    for (auto& m : ml->GetObject()) {
      const json::Value* v = labelOf(json::view(m.name));
      if (!v || !v->IsString() || !m.value.IsString() || json::view(*v) != json::view(m.value)) return false;
    }
  if (const json::Value* me = json::find(selector, "matchExpressions"); me && me->IsArray())
    for (auto& e : me->GetArray()) {
      std::string_view op = json::getString(e, "operator");
      const json::Value* v = labelOf(json::getString(e, "key"));
      bool in = false;
      if (const json::Value* vs = json::find(e, "values"); v && v->IsString() && vs && vs->IsArray())
        for (auto& x : vs->GetArray())
          if (x.IsString() && json::view(x) == json::view(*v)) in = true;
      if ((op == "In" && !in) || (op == "NotIn" && in) || (op == "Exists" && !v) ||
          (op == "DoesNotExist" && v))
        return false;
    }
  return true;
}

void validateSelectorAndTemplate(const json::Value& spec, const std::string& kind, FieldErrors& errs) {
  const json::Value* selector = json::find(spec, "selector");
  if (selector && !selector->IsObject()) selector = nullptr;
  const json::Value* tmpl = json::find(spec, "template");
  static const json::Value empty(rapidjson::kObjectType);
  if (!selector) {
    errs.required("spec.selector");
  } else {
    validateLabelSelector(*selector, "spec.selector", errs);
    const json::Value* ml = json::find(*selector, "matchLabels");
    const json::Value* me = json::find(*selector, "matchExpressions");
    size_t n = (ml && ml->IsObject() ? ml->MemberCount() : 0) + (me && me->IsArray() ? me->Size() : 0);
    if (n == 0)
      errs.invalid("spec.selector", labelSelectorRepr(selector), "empty selector is invalid for deployment");
    // A selector that does not convert stops here: upstream skips the template.
    if (!selectorConverts(*selector)) {
      errs.invalid("spec.selector", labelSelectorRepr(selector), "invalid label selector");
      return;
    }
  }
  const json::Value& t = tmpl && tmpl->IsObject() ? *tmpl : empty;
  const json::Value* labels = json::findPath(t, {"metadata", "labels"});
  // No selector selects nothing; an empty one selects everything.
  bool emptySelector = selector && selectorMatches(*selector, nullptr) && [&] {
    const json::Value* ml = json::find(*selector, "matchLabels");
    const json::Value* me = json::find(*selector, "matchExpressions");
    return (!ml || !ml->IsObject() || ml->MemberCount() == 0) && (!me || !me->IsArray() || me->Size() == 0);
  }();
  if (!emptySelector && (!selector || !selectorMatches(*selector, labels)))
    errs.invalid("spec.template.metadata.labels", labelMapRepr(labels),
                 "`selector` does not match template `labels`");
  validatePodTemplate(t, "spec.template", errs);
  const json::Value* ps = json::find(t, "spec");
  std::string_view rp = ps ? json::getString(*ps, "restartPolicy") : "";
  if (rp != "Always") errs.notSupported("spec.template.spec.restartPolicy", std::string(rp), {"Always"});
  if (ps && json::find(*ps, "activeDeadlineSeconds"))
    errs.forbidden("spec.template.spec.activeDeadlineSeconds",
                   "activeDeadlineSeconds in " + kind + " is not Supported");
}

}  // namespace shepherd::apis::kinds
