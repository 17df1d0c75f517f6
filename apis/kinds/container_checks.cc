// Container validation shared by every pod spec: upstream's validateContainers,
// validateInitContainers and validateContainerCommon, with their messages and paths.
#include <cmath>

#include "apis/kinds/podspec_checks.h"
#include "apis/kinds/resource_names.h"
#include "meta/quantity.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

using meta::validation::quote;

const json::Value* arrayAt(const json::Value& obj, std::string_view key) {
  const json::Value* v = json::find(obj, key);
  return v && v->IsArray() ? v : nullptr;
}

void validatePorts(const json::Value& c, const std::string& path, FieldErrors& errs) {
  const json::Value* ports = arrayAt(c, "ports");
  if (!ports) return;
  std::set<std::string> names;
  for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
    const json::Value& p = (*ports)[i];
    std::string pp = indexed(path, i);
    std::string_view name = json::getString(p, "name");
    if (!name.empty()) {
      auto problems = meta::validation::portName(name);
      for (auto& e : problems) errs.invalid(pp + ".name", quote(name), e);
      if (problems.empty() && !names.insert(std::string(name)).second)
        errs.duplicate(pp + ".name", quote(name));
    }
    int64_t port = json::getInt(p, "containerPort").value_or(0);
    if (port == 0)
      errs.required(pp + ".containerPort");
    else if (port < 1 || port > 65535)
      errs.invalid(pp + ".containerPort", std::to_string(port), meta::validation::inclusiveRange(1, 65535));
    if (int64_t hp = json::getInt(p, "hostPort").value_or(0); hp != 0 && (hp < 1 || hp > 65535))
      errs.invalid(pp + ".hostPort", std::to_string(hp), meta::validation::inclusiveRange(1, 65535));
    std::string_view proto = json::getString(p, "protocol");
    if (proto.empty())
      errs.required(pp + ".protocol");
    else if (proto != "TCP" && proto != "UDP" && proto != "SCTP")
      errs.notSupported(pp + ".protocol", std::string(proto), {"SCTP", "TCP", "UDP"});
  }
}

void validateKeySelector(const json::Value& ref, const std::string& path, FieldErrors& errs) {
  std::string_view name = json::getString(ref, "name");
  for (auto& e : meta::validation::dns1123Subdomain(name)) errs.invalid(path + ".name", quote(name), e);
  std::string_view key = json::getString(ref, "key");
  if (key.empty()) {
    errs.required(path + ".key");
  } else {
    for (auto& e : meta::validation::configMapKey(key)) errs.invalid(path + ".key", quote(key), e);
  }
}

void validateEnv(const json::Value& c, const std::string& path, FieldErrors& errs) {
  const json::Value* env = arrayAt(c, "env");
  if (!env) return;
  for (rapidjson::SizeType i = 0; i < env->Size(); ++i) {
    const json::Value& ev = (*env)[i];
    std::string ep = indexed(path, i);
    std::string_view name = json::getString(ev, "name");
    if (name.empty()) {
      errs.required(ep + ".name");
    } else {
      for (auto& e : meta::validation::envVarName(name)) errs.invalid(ep + ".name", quote(name), e);
    }
    const json::Value* from = json::find(ev, "valueFrom");
    if (!from || !from->IsObject()) continue;
    std::string fp = ep + ".valueFrom";
    int sources = 0;
    if (const json::Value* r = json::find(*from, "fieldRef"); r && r->IsObject()) {
      ++sources;
      validateObjectFieldSelector(*r, fp + ".fieldRef", false, errs);
    }
    if (const json::Value* r = json::find(*from, "resourceFieldRef"); r && r->IsObject()) {
      ++sources;
      validateResourceFieldSelector(*r, fp + ".resourceFieldRef", false, errs);
    }
    if (const json::Value* r = json::find(*from, "configMapKeyRef"); r && r->IsObject()) {
      ++sources;
      validateKeySelector(*r, fp + ".configMapKeyRef", errs);
    }
    if (const json::Value* r = json::find(*from, "secretKeyRef"); r && r->IsObject()) {
      ++sources;
      validateKeySelector(*r, fp + ".secretKeyRef", errs);
    }
    if (sources == 0)
      errs.invalid(
          fp, "\"\"",
          "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`");
    else if (!json::getString(ev, "value").empty())
      errs.invalid(fp, "\"\"", "may not be specified when `value` is not empty");
    else if (sources > 1)
      errs.invalid(fp, "\"\"", "may not have more than one field specified at a time");
  }
}

void validateEnvFrom(const json::Value& c, const std::string& path, FieldErrors& errs) {
  const json::Value* list = arrayAt(c, "envFrom");
  if (!list) return;
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const json::Value& ef = (*list)[i];
    std::string ip = indexed(path, i);
    std::string_view prefix = json::getString(ef, "prefix");
    if (!prefix.empty())
      for (auto& e : meta::validation::envVarName(prefix)) errs.invalid(ip + ".prefix", quote(prefix), e);
    int sources = 0;
    for (const char* src : {"configMapRef", "secretRef"}) {
      const json::Value* ref = json::find(ef, src);
      if (!ref || !ref->IsObject()) continue;
      ++sources;
      std::string_view name = json::getString(*ref, "name");
      if (name.empty()) {
        errs.required(ip + "." + src + ".name");
        continue;
      }
      // A name prefix: a trailing '-' is allowed.
      std::string masked(name);
      if (masked.back() == '-') masked.back() = 'a';
      for (auto& e : meta::validation::dns1123Subdomain(masked))
        errs.invalid(ip + "." + src + ".name", quote(name), e);
    }
    if (sources == 0)
      errs.invalid(path, "\"\"", "must specify one of: `configMapRef` or `secretRef`");
    else if (sources > 1)
      errs.invalid(path, "\"\"", "may not have more than one field specified at a time");
  }
}

void validateVolumeMounts(const json::Value& c, const std::string& path, const PodSpecScope& scope,
                          FieldErrors& errs) {
  const json::Value* mounts = arrayAt(c, "volumeMounts");
  if (!mounts) return;
  bool privileged = json::findPath(c, {"securityContext", "privileged"}) &&
                    json::findPath(c, {"securityContext", "privileged"})->IsBool() &&
                    json::findPath(c, {"securityContext", "privileged"})->GetBool();
  std::set<std::string> mountPoints;
  for (rapidjson::SizeType i = 0; i < mounts->Size(); ++i) {
    const json::Value& m = (*mounts)[i];
    std::string mp = indexed(path, i);
    std::string_view name = json::getString(m, "name");
    if (name.empty()) errs.required(mp + ".name");
    if (!scope.volumes.count(std::string(name))) errs.notFound(mp + ".name", quote(name));
    std::string_view mountPath = json::getString(m, "mountPath");
    if (mountPath.empty()) errs.required(mp + ".mountPath");
    if (!mountPoints.insert(std::string(mountPath)).second)
      errs.invalid(mp + ".mountPath", quote(mountPath), "must be unique");
    // Upstream reports the subPath, mountPropagation and recursiveReadOnly problems
    // without the mount's index.
    std::string_view subPath = json::getString(m, "subPath");
    if (!subPath.empty()) validateLocalDescendingPath(subPath, path + ".subPath", errs);
    std::string_view expr = json::getString(m, "subPathExpr");
    if (!expr.empty()) {
      if (!subPath.empty())
        errs.invalid(mp + ".subPathExpr", quote(expr), "subPathExpr and subPath are mutually exclusive");
      validateLocalDescendingPath(expr, path + ".subPathExpr", errs);
    }
    const json::Value* prop = json::find(m, "mountPropagation");
    if (prop && prop->IsString()) {
      std::string_view v = json::view(*prop);
      if (v != "Bidirectional" && v != "HostToContainer" && v != "None")
        errs.notSupported(path + ".mountPropagation", std::string(v),
                          {"Bidirectional", "HostToContainer", "None"});
      if (v == "Bidirectional" && !privileged)
        errs.forbidden(path + ".mountPropagation",
                       "Bidirectional mount propagation is available only to privileged containers");
    }
    const json::Value* rro = json::find(m, "recursiveReadOnly");
    if (rro && rro->IsString()) {
      std::string_view v = json::view(*rro);
      if (v == "Enabled" || v == "IfPossible") {
        if (!json::getBool(m, "readOnly"))
          errs.forbidden(path + ".recursiveReadOnly", "may only be specified when readOnly is true");
        if (prop && prop->IsString() && json::view(*prop) != "None")
          errs.forbidden(path + ".recursiveReadOnly",
                         "may only be specified when mountPropagation is None or not specified");
      } else if (v != "Disabled") {
        errs.notSupported(path + ".recursiveReadOnly", std::string(v), {"Disabled", "Enabled", "IfPossible"});
      }
    }
  }
}

// ValidateResourceQuantityValue: not negative; whole numbers for extended resources.
void validateQuantityValue(std::string_view name, const json::Value& q, const std::string& field,
                           FieldErrors& errs) {
  std::string text = meta::quantityText(q);
  long double v = meta::parseQuantity(text).value_or(0);
  if (v < 0) errs.invalid(field, quote(meta::canonicalQuantity(text)), "must be greater than or equal to 0");
  // The Quantity prints through its String(), unquoted.
  if (isExtended(name) && v != static_cast<long double>(static_cast<int64_t>(v)))
    errs.invalid(field, meta::canonicalQuantity(text), "must be an integer");
}

void validateHugePageValue(std::string_view name, const json::Value& q, const std::string& field,
                           FieldErrors& errs) {
  std::string text = meta::quantityText(q);
  long double v = meta::parseQuantity(text).value_or(0);
  auto page = meta::parseQuantity(name.substr(10));
  bool divisible = page && *page > 0 && std::fmod(v, *page) == 0 && v == static_cast<int64_t>(v);
  if (!divisible)
    errs.invalid(field, quote(meta::canonicalQuantity(text)),
                 meta::canonicalQuantity(text) + " is not positive integer multiple of " + std::string(name));
}

void validateResources(const json::Value& c, const std::string& path, FieldErrors& errs) {
  const json::Value* res = json::find(c, "resources");
  if (!res || !res->IsObject()) return;
  const json::Value* limits = json::find(*res, "limits");
  const json::Value* requests = json::find(*res, "requests");
  if (limits && !limits->IsObject()) limits = nullptr;
  if (requests && !requests->IsObject()) requests = nullptr;
  bool cpuOrMemory = false, hugePages = false;
  std::string limPath = path + ".limits", reqPath = path + ".requests";
  if (limits)
    for (auto& m : limits->GetObject()) {
      std::string_view name = json::view(m.name);
      std::string field = limPath + "[" + std::string(name) + "]";
      validateContainerResourceName(name, field, errs);
      validateQuantityValue(name, m.value, field, errs);
      if (isHugePages(name)) {
        hugePages = true;
        validateHugePageValue(name, m.value, field, errs);
      }
      if (name == "cpu" || name == "memory") cpuOrMemory = true;
    }
  if (requests)
    for (auto& m : requests->GetObject()) {
      std::string_view name = json::view(m.name);
      std::string field = reqPath + "[" + std::string(name) + "]";
      validateContainerResourceName(name, field, errs);
      validateQuantityValue(name, m.value, field, errs);
      std::string text = meta::quantityText(m.value);
      const json::Value* limit = limits ? json::find(*limits, name) : nullptr;
      if (limit) {
        long double req = meta::parseQuantity(text).value_or(0);
        std::string limText = meta::quantityText(*limit);
        long double lim = meta::parseQuantity(limText).value_or(0);
        std::string reqRepr = quote(meta::canonicalQuantity(text));
        std::string limRepr = meta::canonicalQuantity(limText);
        // Resources that cannot be overcommitted need requests equal to limits.
        if (req != lim && !overcommitAllowed(name))
          errs.invalid(reqPath, reqRepr, "must be equal to " + std::string(name) + " limit of " + limRepr);
        else if (req > lim)
          errs.invalid(reqPath, reqRepr,
                       "must be less than or equal to " + std::string(name) + " limit of " + limRepr);
      } else if (!overcommitAllowed(name)) {
        errs.required(limPath, "Limit must be set for non overcommitable resources");
      }
      if (isHugePages(name)) {
        hugePages = true;
        validateHugePageValue(name, m.value, field, errs);
      }
      if (name == "cpu" || name == "memory") cpuOrMemory = true;
    }
  if (hugePages && !cpuOrMemory) errs.forbidden(path, "HugePages require cpu or memory");
}

void validateIdRange(const json::Value& obj, std::string_view key, const std::string& field,
                     FieldErrors& errs) {
  if (auto v = json::getInt(obj, key); v && (*v < 0 || *v > 4294967295LL))
    errs.invalid(field, std::to_string(*v), meta::validation::inclusiveRange(0, 4294967295LL));
}

void validateContainerSecurityContext(const json::Value& c, const std::string& path, FieldErrors& errs) {
  const json::Value* sc = json::find(c, "securityContext");
  if (!sc || !sc->IsObject()) return;
  validateIdRange(*sc, "runAsUser", path + ".runAsUser", errs);
  validateIdRange(*sc, "runAsGroup", path + ".runAsGroup", errs);
  if (const json::Value* sp = json::find(*sc, "seccompProfile"); sp && sp->IsObject())
    validateSeccompProfile(*sp, path + ".seccompProfile", errs);
}

// Probe and lifecycle handlers: exactly one action.
void validatePortNumOrName(const json::Value* port, const std::string& field, FieldErrors& errs) {
  if (port && port->IsString()) {
    std::string_view name = json::view(*port);
    for (auto& e : meta::validation::portName(name)) errs.invalid(field, quote(name), e);
    return;
  }
  int64_t n = port && port->IsInt64() ? port->GetInt64() : 0;
  if (n < 1 || n > 65535) errs.invalid(field, std::to_string(n), meta::validation::inclusiveRange(1, 65535));
}

void validateHandler(const json::Value& h, const std::string& path, bool lifecycle, const PodSpecScope& scope,
                     FieldErrors& errs) {
  int handlers = 0;
  for (const char* kind : {"exec", "httpGet", "tcpSocket", "grpc", "sleep"}) {
    std::string_view k(kind);
    if ((k == "grpc" && lifecycle) || (k == "sleep" && !lifecycle)) continue;
    const json::Value* a = json::find(h, kind);
    if (!a || !a->IsObject()) continue;
    std::string ap = path + "." + kind;
    if (handlers++ > 0) {
      errs.forbidden(ap, "may not specify more than 1 handler type");
      continue;
    }
    if (k == "exec") {
      const json::Value* cmd = json::find(*a, "command");
      if (!cmd || !cmd->IsArray() || cmd->Size() == 0) errs.required(ap + ".command");
    } else if (k == "httpGet") {
      if (json::getString(*a, "path").empty()) errs.required(ap + ".path");
      validatePortNumOrName(json::find(*a, "port"), ap + ".port", errs);
      std::string_view scheme = json::getString(*a, "scheme");
      if (scheme != "HTTP" && scheme != "HTTPS")
        errs.notSupported(ap + ".scheme", std::string(scheme), {"HTTP", "HTTPS"});
      if (const json::Value* hs = arrayAt(*a, "httpHeaders"))
        for (auto& hh : hs->GetArray()) {
          std::string_view n = json::getString(hh, "name");
          for (auto& e : meta::validation::httpHeaderName(n)) errs.invalid(ap + ".httpHeaders", quote(n), e);
        }
    } else if (k == "tcpSocket") {
      validatePortNumOrName(json::find(*a, "port"), ap + ".port", errs);
    } else if (k == "grpc") {
      int64_t port = json::getInt(*a, "port").value_or(0);
      if (port < 1 || port > 65535)
        errs.invalid(ap + ".port", std::to_string(port), meta::validation::inclusiveRange(1, 65535));
    } else if (k == "sleep" && scope.grace_period) {
      int64_t secs = json::getInt(*a, "seconds").value_or(0);
      if (secs <= 0 || secs > *scope.grace_period)
        errs.invalid(ap, std::to_string(secs),
                     "must be greater than 0 and less than terminationGracePeriodSeconds (" +
                         std::to_string(*scope.grace_period) + ")");
    }
  }
  if (handlers == 0) errs.required(path, "must specify a handler type");
}

enum class ProbeKind { Liveness, Readiness, Startup };

void validateProbe(const json::Value& c, const char* key, ProbeKind kind, const std::string& path,
                   const PodSpecScope& scope, FieldErrors& errs) {
  const json::Value* p = json::find(c, key);
  if (!p || !p->IsObject()) return;
  validateHandler(*p, path, false, scope, errs);
  for (const char* f :
       {"initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"})
    if (auto v = json::getInt(*p, f); v && *v < 0)
      errs.invalid(path + "." + f, std::to_string(*v), "must be greater than or equal to 0");
  auto tgps = json::getInt(*p, "terminationGracePeriodSeconds");
  if (tgps && *tgps <= 0)
    errs.invalid(path + ".terminationGracePeriodSeconds", std::to_string(*tgps), "must be greater than 0");
  if (kind == ProbeKind::Readiness && tgps)
    errs.invalid(path + ".terminationGracePeriodSeconds", std::to_string(*tgps),
                 "must not be set for readinessProbes");
  if (kind != ProbeKind::Readiness)
    if (int64_t st = json::getInt(*p, "successThreshold").value_or(0); st != 1)
      errs.invalid(path + ".successThreshold", std::to_string(st), "must be 1");
}

void validateLifecycleAndProbes(const json::Value& c, const std::string& path, const PodSpecScope& scope,
                                FieldErrors& errs) {
  if (const json::Value* lc = json::find(c, "lifecycle"); lc && lc->IsObject())
    for (const char* hook : {"postStart", "preStop"})
      if (const json::Value* h = json::find(*lc, hook); h && h->IsObject())
        validateHandler(*h, path + ".lifecycle." + hook, true, scope, errs);
  validateProbe(c, "livenessProbe", ProbeKind::Liveness, path + ".livenessProbe", scope, errs);
  validateProbe(c, "readinessProbe", ProbeKind::Readiness, path + ".readinessProbe", scope, errs);
  validateProbe(c, "startupProbe", ProbeKind::Startup, path + ".startupProbe", scope, errs);
}

// validateContainerCommon.
void validateContainer(const json::Value& c, const std::string& path, const PodSpecScope& scope,
                       FieldErrors& errs) {
  std::string_view name = json::getString(c, "name");
  if (name.empty()) {
    errs.required(path + ".name");
  } else {
    for (auto& e : meta::validation::dns1123Label(name)) errs.invalid(path + ".name", quote(name), e);
  }
  if (json::getString(c, "image").empty()) errs.required(path + ".image");
  std::string_view tmp = json::getString(c, "terminationMessagePolicy");
  if (tmp.empty())
    errs.required(path + ".terminationMessagePolicy");
  else if (tmp != "File" && tmp != "FallbackToLogsOnError")
    errs.notSupported(path + ".terminationMessagePolicy", std::string(tmp),
                      {"File", "FallbackToLogsOnError"});
  validatePorts(c, path + ".ports", errs);
  validateEnv(c, path + ".env", errs);
  validateEnvFrom(c, path + ".envFrom", errs);
  validateVolumeMounts(c, path + ".volumeMounts", scope, errs);
  std::string_view pull = json::getString(c, "imagePullPolicy");
  if (pull.empty())
    errs.required(path + ".imagePullPolicy");
  else if (pull != "Always" && pull != "IfNotPresent" && pull != "Never")
    errs.notSupported(path + ".imagePullPolicy", std::string(pull), {"Always", "IfNotPresent", "Never"});
  validateResources(c, path + ".resources", errs);
  validateContainerSecurityContext(c, path + ".securityContext", errs);
}

// checkHostPortConflicts: one protocol/hostIP/hostPort per pod (per init container).
void checkHostPorts(const json::Value& c, const std::string& path, std::set<std::string>& seen,
                    FieldErrors& errs) {
  const json::Value* ports = arrayAt(c, "ports");
  if (!ports) return;
  for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
    const json::Value& p = (*ports)[i];
    int64_t hp = json::getInt(p, "hostPort").value_or(0);
    if (hp == 0) continue;
    std::string key = std::string(json::getString(p, "protocol")) + "/" +
                      std::string(json::getString(p, "hostIP")) + "/" + std::to_string(hp);
    if (!seen.insert(key).second) errs.duplicate(indexed(path + ".ports", i) + ".hostPort", quote(key));
  }
}

}  // namespace

void validateContainers(const json::Value& spec, const PodSpecScope& scope, FieldErrors& errs) {
  const json::Value* cs = arrayAt(spec, "containers");
  std::string csPath = scope.path + ".containers";
  std::set<std::string> names;
  if (!cs || cs->Size() == 0) {
    errs.required(csPath);
  } else {
    std::set<std::string> hostPorts;
    for (rapidjson::SizeType i = 0; i < cs->Size(); ++i) {
      const json::Value& c = (*cs)[i];
      std::string path = indexed(csPath, i);
      validateContainer(c, path, scope, errs);
      std::string name(json::getString(c, "name"));
      if (!names.insert(name).second) errs.duplicate(path + ".name", quote(name));
      validateLifecycleAndProbes(c, path, scope, errs);
      if (json::find(c, "restartPolicy"))
        errs.forbidden(path + ".restartPolicy", "may not be set for non-init containers");
    }
    for (rapidjson::SizeType i = 0; i < cs->Size(); ++i)
      checkHostPorts((*cs)[i], indexed(csPath, i), hostPorts, errs);
  }
  const json::Value* ics = arrayAt(spec, "initContainers");
  if (!ics) return;
  std::string icsPath = scope.path + ".initContainers";
  for (rapidjson::SizeType i = 0; i < ics->Size(); ++i) {
    const json::Value& c = (*ics)[i];
    std::string path = indexed(icsPath, i);
    validateContainer(c, path, scope, errs);
    bool restartAlways = false;
    if (const json::Value* rp = json::find(c, "restartPolicy"); rp && rp->IsString()) {
      restartAlways = json::view(*rp) == "Always";
      if (!restartAlways)
        errs.notSupported(path + ".restartPolicy", std::string(json::view(*rp)), {"Always"});
    }
    std::string name(json::getString(c, "name"));
    if (names.count(name))
      errs.duplicate(path + ".name", quote(name));
    else if (!name.empty())
      names.insert(name);
    // Init containers run one at a time: their host ports are checked one by one.
    std::set<std::string> hostPorts;
    checkHostPorts(c, path, hostPorts, errs);
    if (restartAlways) {
      validateLifecycleAndProbes(c, path, scope, errs);
    } else {
      for (const char* f : {"lifecycle", "livenessProbe", "readinessProbe", "startupProbe"})
        if (json::find(c, f))
          errs.forbidden(path + "." + f, "may not be set for init containers without restartPolicy=Always");
    }
  }
}

}  // namespace shepherd::apis::kinds
