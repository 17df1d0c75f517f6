// Pod-level fields that steer scheduling and the pod's sandbox: affinity, topology
// spread, DNS config and the pod security context, as upstream validates them.
#include "apis/kinds/podspec.h"
#include "apis/kinds/podspec_checks.h"
#include "meta/validation.h"

namespace shepherd::apis::kinds {

namespace {

using meta::validation::quote;

const json::Value* arrayAt(const json::Value& obj, std::string_view key) {
  const json::Value* v = json::find(obj, key);
  return v && v->IsArray() ? v : nullptr;
}

void validateNodeSelectorRequirement(const json::Value& r, const std::string& path, bool check_values,
                                     FieldErrors& errs) {
  std::string_view op = json::getString(r, "operator");
  const json::Value* values = arrayAt(r, "values");
  size_t n = values ? values->Size() : 0;
  if (op == "In" || op == "NotIn") {
    if (n == 0) errs.required(path + ".values", "must be specified when `operator` is 'In' or 'NotIn'");
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (n > 0)
      errs.forbidden(path + ".values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
  } else if (op == "Gt" || op == "Lt") {
    if (n != 1)
      errs.required(path + ".values", "must be specified single value when `operator` is 'Lt' or 'Gt'");
  } else {
    errs.invalid(path + ".operator", quote(op), "not a valid selector operator");
  }
  std::string_view key = json::getString(r, "key");
  for (auto& e : meta::validation::qualifiedName(key)) errs.invalid(path + ".key", quote(key), e);
  if (check_values && values)
    for (rapidjson::SizeType i = 0; i < values->Size(); ++i) {
      std::string_view v = (*values)[i].IsString() ? json::view((*values)[i]) : "";
      for (auto& e : meta::validation::labelValue(v)) errs.invalid(indexed(path + ".values", i), quote(v), e);
    }
}

void validateNodeFieldSelectorRequirement(const json::Value& r, const std::string& path, FieldErrors& errs) {
  std::string_view op = json::getString(r, "operator");
  const json::Value* values = arrayAt(r, "values");
  if (op == "In" || op == "NotIn") {
    if (!values || values->Size() != 1)
      errs.required(path + ".values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector");
  } else {
    errs.invalid(path + ".operator", quote(op), "not a valid selector operator");
  }
  std::string_view key = json::getString(r, "key");
  if (key != "metadata.name") {
    errs.invalid(path + ".key", quote(key), "not a valid field selector key");
  } else if (values) {
    for (rapidjson::SizeType i = 0; i < values->Size(); ++i) {
      std::string_view v = (*values)[i].IsString() ? json::view((*values)[i]) : "";
      for (auto& e : meta::validation::dns1123Subdomain(v))
        errs.invalid(indexed(path + ".values", i), quote(v), e);
    }
  }
}

void validateNodeSelectorTerm(const json::Value& term, const std::string& path, bool check_values,
                              FieldErrors& errs) {
  if (const json::Value* me = arrayAt(term, "matchExpressions"))
    for (rapidjson::SizeType j = 0; j < me->Size(); ++j)
      validateNodeSelectorRequirement((*me)[j], indexed(path + ".matchExpressions", j), check_values, errs);
  if (const json::Value* mf = arrayAt(term, "matchFields"))
    for (rapidjson::SizeType j = 0; j < mf->Size(); ++j)
      validateNodeFieldSelectorRequirement((*mf)[j], indexed(path + ".matchFields", j), errs);
}

void validateWeight(const json::Value& term, const std::string& path, FieldErrors& errs) {
  int64_t w = json::getInt(term, "weight").value_or(0);
  if (w <= 0 || w > 100) errs.invalid(path + ".weight", std::to_string(w), "must be in the range 1-100");
}

void validatePodAffinityTerm(const json::Value& term, const std::string& path, FieldErrors& errs) {
  for (const char* sel : {"labelSelector", "namespaceSelector"})
    if (const json::Value* s = json::find(term, sel); s && s->IsObject())
      validateLabelSelector(*s, path + "." + sel, errs);
  if (const json::Value* nss = arrayAt(term, "namespaces"))
    for (auto& ns : nss->GetArray()) {
      std::string_view n = ns.IsString() ? json::view(ns) : "";
      for (auto& e : meta::validation::dns1123Label(n)) errs.invalid(path + ".namespace", quote(n), e);
    }
  std::string_view key = json::getString(term, "topologyKey");
  if (key.empty()) errs.required(path + ".topologyKey", "can not be empty");
  for (auto& e : meta::validation::qualifiedName(key)) errs.invalid(path + ".topologyKey", quote(key), e);
}

void validatePodAffinity(const json::Value& a, const std::string& path, FieldErrors& errs) {
  std::string req = path + ".requiredDuringSchedulingIgnoredDuringExecution";
  if (const json::Value* terms = arrayAt(a, "requiredDuringSchedulingIgnoredDuringExecution"))
    for (rapidjson::SizeType i = 0; i < terms->Size(); ++i)
      validatePodAffinityTerm((*terms)[i], indexed(req, i), errs);
  std::string pref = path + ".preferredDuringSchedulingIgnoredDuringExecution";
  if (const json::Value* terms = arrayAt(a, "preferredDuringSchedulingIgnoredDuringExecution"))
    for (rapidjson::SizeType i = 0; i < terms->Size(); ++i) {
      validateWeight((*terms)[i], indexed(pref, i), errs);
      if (const json::Value* t = json::find((*terms)[i], "podAffinityTerm"))
        validatePodAffinityTerm(*t, indexed(pref, i) + ".podAffinityTerm", errs);
      else
        validatePodAffinityTerm(json::Value(rapidjson::kObjectType), indexed(pref, i) + ".podAffinityTerm",
                                errs);
    }
}

void validateProfileType(const json::Value& profile, const std::string& path, const char* what,
                         FieldErrors& errs) {
  std::string_view type = json::getString(profile, "type");
  const json::Value* local = json::find(profile, "localhostProfile");
  if (type == "Localhost") {
    if (!local || !local->IsString()) {
      errs.required(path + ".localhostProfile",
                    std::string("must be set when ") + what + " type is Localhost");
    } else if (std::string_view(what) == "seccomp") {
      validateLocalDescendingPath(json::view(*local), path + ".localhostProfile", errs);
    }
  } else if (type.empty()) {
    errs.required(path + ".type",
                  std::string("type is required when ") +
                      (std::string_view(what) == "seccomp" ? "seccompProfile" : "appArmorProfile") +
                      " is set");
  } else if (type != "RuntimeDefault" && type != "Unconfined") {
    errs.notSupported(path + ".type", std::string(type), {"Localhost", "RuntimeDefault", "Unconfined"});
  }
}

}  // namespace

void validateLabelMap(const json::Value* labels, const std::string& path, FieldErrors& errs) {
  if (!labels || !labels->IsObject()) return;
  for (auto& m : labels->GetObject()) {
    std::string_view k = json::view(m.name);
    for (auto& e : meta::validation::qualifiedName(k)) errs.invalid(path, quote(k), e);
    std::string_view v = m.value.IsString() ? json::view(m.value) : "";
    for (auto& e : meta::validation::labelValue(v)) errs.invalid(path, quote(v), e);
  }
}

void validateLabelSelector(const json::Value& selector, const std::string& path, FieldErrors& errs) {
  validateLabelMap(json::find(selector, "matchLabels"), path + ".matchLabels", errs);
  const json::Value* me = arrayAt(selector, "matchExpressions");
  if (!me) return;
  for (rapidjson::SizeType i = 0; i < me->Size(); ++i) {
    const json::Value& r = (*me)[i];
    std::string rp = indexed(path + ".matchExpressions", i);
    std::string_view op = json::getString(r, "operator");
    const json::Value* values = arrayAt(r, "values");
    size_t n = values ? values->Size() : 0;
    if (op == "In" || op == "NotIn") {
      if (n == 0) errs.required(rp + ".values", "must be specified when `operator` is 'In' or 'NotIn'");
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (n > 0)
        errs.forbidden(rp + ".values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    } else {
      errs.invalid(rp + ".operator", quote(op), "not a valid selector operator");
    }
    std::string_view key = json::getString(r, "key");
    for (auto& e : meta::validation::qualifiedName(key)) errs.invalid(rp + ".key", quote(key), e);
    if (values)
      for (rapidjson::SizeType j = 0; j < values->Size(); ++j) {
        std::string_view v = (*values)[j].IsString() ? json::view((*values)[j]) : "";
        for (auto& e : meta::validation::labelValue(v)) errs.invalid(indexed(rp + ".values", j), quote(v), e);
      }
  }
}

void validateAffinity(const json::Value& affinity, const std::string& path, FieldErrors& errs) {
  if (const json::Value* na = json::find(affinity, "nodeAffinity"); na && na->IsObject()) {
    std::string np = path + ".nodeAffinity";
    if (const json::Value* req = json::find(*na, "requiredDuringSchedulingIgnoredDuringExecution");
        req && req->IsObject()) {
      std::string tp = np + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
      const json::Value* terms = arrayAt(*req, "nodeSelectorTerms");
      if (!terms || terms->Size() == 0) {
        errs.required(tp, "must have at least one node selector term");
      } else {
        for (rapidjson::SizeType i = 0; i < terms->Size(); ++i)
          validateNodeSelectorTerm((*terms)[i], indexed(tp, i), true, errs);
      }
    }
    std::string pp = np + ".preferredDuringSchedulingIgnoredDuringExecution";
    if (const json::Value* pref = arrayAt(*na, "preferredDuringSchedulingIgnoredDuringExecution"))
      for (rapidjson::SizeType i = 0; i < pref->Size(); ++i) {
        validateWeight((*pref)[i], indexed(pp, i), errs);
        // Preferred terms may name label values that are not valid labels.
        if (const json::Value* t = json::find((*pref)[i], "preference"))
          validateNodeSelectorTerm(*t, indexed(pp, i) + ".preference", false, errs);
      }
  }
  for (const char* kind : {"podAffinity", "podAntiAffinity"})
    if (const json::Value* pa = json::find(affinity, kind); pa && pa->IsObject())
      validatePodAffinity(*pa, path + "." + kind, errs);
}

void validateTopologySpreadConstraints(const json::Value& list, const std::string& path, FieldErrors& errs) {
  if (!list.IsArray()) return;
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
    const json::Value& c = list[i];
    std::string cp = indexed(path, i);
    int64_t skew = json::getInt(c, "maxSkew").value_or(0);
    if (skew <= 0) errs.invalid(cp + ".maxSkew", std::to_string(skew), "must be greater than zero");
    std::string_view key = json::getString(c, "topologyKey");
    if (key.empty()) errs.required(cp + ".topologyKey", "can not be empty");
    std::string_view when = json::getString(c, "whenUnsatisfiable");
    if (when != "DoNotSchedule" && when != "ScheduleAnyway")
      errs.notSupported(cp + ".whenUnsatisfiable", std::string(when), {"DoNotSchedule", "ScheduleAnyway"});
    for (rapidjson::SizeType j = i + 1; j < list.Size(); ++j)
      if (json::getString(list[j], "topologyKey") == key &&
          json::getString(list[j], "whenUnsatisfiable") == when) {
        errs.duplicate(cp + ".{topologyKey, whenUnsatisfiable}",
                       quote("{" + std::string(key) + ", " + std::string(when) + "}"));
        break;
      }
    if (auto md = json::getInt(c, "minDomains")) {
      if (*md <= 0) errs.invalid(cp + ".minDomains", std::to_string(*md), "must be greater than zero");
      if (when != "DoNotSchedule")
        errs.invalid(cp + ".minDomains", std::to_string(*md),
                     "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not " + std::string(when));
    }
    for (const char* policy : {"nodeAffinityPolicy", "nodeTaintsPolicy"})
      if (const json::Value* p = json::find(c, policy);
          p && p->IsString() && json::view(*p) != "Honor" && json::view(*p) != "Ignore")
        errs.notSupported(cp + "." + policy, std::string(json::view(*p)), {"Honor", "Ignore"});
    if (const json::Value* sel = json::find(c, "labelSelector"); sel && sel->IsObject())
      validateLabelSelector(*sel, cp + ".labelSelector", errs);
  }
}

void validateDNSConfig(const json::Value& spec, const std::string& path, FieldErrors& errs) {
  const json::Value* cfg = json::find(spec, "dnsConfig");
  if (cfg && !cfg->IsObject()) cfg = nullptr;
  std::string cp = path + ".dnsConfig";
  const json::Value* ns = cfg ? arrayAt(*cfg, "nameservers") : nullptr;
  if (json::getString(spec, "dnsPolicy") == "None") {
    if (!cfg) return errs.required(cp, "must provide `dnsConfig` when `dnsPolicy` is None");
    if (!ns || ns->Size() == 0)
      return errs.required(cp + ".nameservers",
                           "must provide at least one DNS nameserver when `dnsPolicy` is None");
  }
  if (!cfg) return;
  auto goList = [](const json::Value& list) {
    std::string out = "[]string{";
    for (rapidjson::SizeType i = 0; i < list.Size(); ++i)
      out += (i ? ", " : "") + quote(list[i].IsString() ? json::view(list[i]) : "");
    return out + "}";
  };
  if (ns) {
    if (ns->Size() > 3)
      errs.invalid(cp + ".nameservers", goList(*ns), "must not have more than 3 nameservers");
    for (rapidjson::SizeType i = 0; i < ns->Size(); ++i) {
      std::string_view ip = (*ns)[i].IsString() ? json::view((*ns)[i]) : "";
      if (!meta::validation::ipFamily(ip))
        errs.invalid(indexed(cp + ".nameservers", i), quote(ip), meta::validation::kInvalidIP);
    }
  }
  if (const json::Value* searches = arrayAt(*cfg, "searches")) {
    if (searches->Size() > 32)
      errs.invalid(cp + ".searches", goList(*searches), "must not have more than 32 search paths");
    size_t chars = 0;
    for (rapidjson::SizeType i = 0; i < searches->Size(); ++i)
      chars += (i ? 1 : 0) + ((*searches)[i].IsString() ? (*searches)[i].GetStringLength() : 0);
    if (chars > 2048)
      errs.invalid(cp + ".searches", goList(*searches),
                   "must not have more than 2048 characters (including spaces) in the search list");
    for (rapidjson::SizeType i = 0; i < searches->Size(); ++i) {
      std::string_view s = (*searches)[i].IsString() ? json::view((*searches)[i]) : "";
      if (!s.empty() && s.back() == '.') s.remove_suffix(1);
      for (auto& e : meta::validation::dns1123Subdomain(s))
        errs.invalid(indexed(cp + ".searches", i), quote(s), e);
    }
  }
  if (const json::Value* opts = arrayAt(*cfg, "options"))
    for (rapidjson::SizeType i = 0; i < opts->Size(); ++i)
      if (json::getString((*opts)[i], "name").empty())
        errs.required(indexed(cp + ".options", i), "must not be empty");
}

void validateSeccompProfile(const json::Value& profile, const std::string& path, FieldErrors& errs) {
  validateProfileType(profile, path, "seccomp", errs);
}

void validatePodSecurityContext(const json::Value& spec, const std::string& path, FieldErrors& errs) {
  const json::Value* sc = json::find(spec, "securityContext");
  if (!sc || !sc->IsObject()) return;
  std::string sp = path + ".securityContext";
  auto idRange = [&](const json::Value& obj, const char* key, const std::string& field) {
    if (auto v = json::getInt(obj, key); v && (*v < 0 || *v > 4294967295LL))
      errs.invalid(field, std::to_string(*v), meta::validation::inclusiveRange(0, 4294967295LL));
  };
  idRange(*sc, "fsGroup", sp + ".fsGroup");
  idRange(*sc, "runAsUser", sp + ".runAsUser");
  idRange(*sc, "runAsGroup", sp + ".runAsGroup");
  if (const json::Value* groups = arrayAt(*sc, "supplementalGroups"))
    for (rapidjson::SizeType i = 0; i < groups->Size(); ++i) {
      const json::Value& g = (*groups)[i];
      int64_t v = g.IsInt64() ? g.GetInt64() : 0;
      if (v < 0 || v > 4294967295LL)
        errs.invalid(indexed(sp + ".supplementalGroups", i), std::to_string(v),
                     meta::validation::inclusiveRange(0, 4294967295LL));
    }
  // In v1 these two sit in the pod spec; upstream checks them with the security context.
  if (json::getBool(spec, "shareProcessNamespace") && json::getBool(spec, "hostPID"))
    errs.invalid(sp + ".shareProcessNamespace", "true",
                 "ShareProcessNamespace and HostPID cannot both be enabled");
  if (const json::Value* sysctls = arrayAt(*sc, "sysctls")) {
    std::set<std::string> names;
    for (rapidjson::SizeType i = 0; i < sysctls->Size(); ++i) {
      std::string np = indexed(sp + ".sysctls", i) + ".name";
      std::string name(json::getString((*sysctls)[i], "name"));
      if (name.empty()) {
        errs.required(np);
      } else {
        // (segment[./])*segment, each segment [a-z0-9]([-_a-z0-9]*[a-z0-9])?
        bool ok = name.size() <= 253;
        size_t start = 0;
        while (ok) {
          size_t sep = name.find_first_of("./", start);
          std::string_view seg = std::string_view(name).substr(
              start, sep == std::string::npos ? std::string::npos : sep - start);
          auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
          if (seg.empty() || !alnum(seg.front()) || !alnum(seg.back())) ok = false;
          for (char c : seg)
            if (!alnum(c) && c != '-' && c != '_') ok = false;
          if (sep == std::string::npos) break;
          start = sep + 1;
        }
        if (!ok)
          errs.invalid(np, quote(name),
                       "must have at most 253 characters and match regex "
                       "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$");
        else if (!names.insert(name).second)
          errs.duplicate(np, quote(name));
      }
      // Namespaced sysctls of a namespace the pod shares with the host.
      bool net = name.starts_with("net.");
      bool ipc = name == "kernel.sem" || name.starts_with("kernel.shm") || name.starts_with("kernel.msg") ||
                 name.starts_with("fs.mqueue.");
      if (json::getBool(spec, "hostNetwork") && net)
        errs.invalid(np, quote(name), "may not be specified when 'hostNetwork' is true");
      else if (json::getBool(spec, "hostIPC") && ipc)
        errs.invalid(np, quote(name), "may not be specified when 'hostIPC' is true");
    }
  }
  if (const json::Value* p = json::find(*sc, "fsGroupChangePolicy"); p && p->IsString()) {
    std::string_view v = json::view(*p);
    if (v != "Always" && v != "OnRootMismatch")
      errs.notSupported(sp + ".fsGroupChangePolicy", std::string(v), {"Always", "OnRootMismatch"});
  }
  if (const json::Value* p = json::find(*sc, "seccompProfile"); p && p->IsObject())
    validateSeccompProfile(*p, sp + ".seccompProfile", errs);
  if (const json::Value* p = json::find(*sc, "appArmorProfile"); p && p->IsObject())
    validateProfileType(*p, sp + ".appArmorProfile", "AppArmor", errs);
}

}  // namespace shepherd::apis::kinds
