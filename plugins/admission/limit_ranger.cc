#include "plugins/admission/limit_ranger.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "meta/quantity.h"
#include "meta/quota.h"

namespace shepherd::plugins::admission {

using shepherd::admission::Attributes;
using shepherd::admission::Operation;

namespace {

enum class Kind { None, Pod, Claim };

Kind kindOf(const Attributes& a) {
  if (!a.resource || !a.resource->group.empty() || !a.subresource.empty()) return Kind::None;
  if (a.resource->plural == "pods") return a.operation == Operation::Create ? Kind::Pod : Kind::None;
  if (a.resource->plural == "persistentvolumeclaims" &&
      (a.operation == Operation::Create || a.operation == Operation::Update))
    return Kind::Claim;
  return Kind::None;
}

// name -> quantity value, and the text it was written as.
struct List {
  std::map<std::string, long double> value;
  std::map<std::string, std::string> text;
  void put(const std::string& k, const json::Value& q) {
    std::string t = meta::quantityText(q);
    value[k] = meta::parseQuantity(t).value_or(0);
    text[k] = meta::canonicalQuantity(t);
  }
};

List listOf(const json::Value* m) {
  List out;
  if (m && m->IsObject())
    for (const auto& kv : m->GetObject()) out.put(std::string(json::view(kv.name)), kv.value);
  return out;
}

std::string ratioText(long double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%f", static_cast<double>(v));
  return buf;
}

void minConstraint(const std::string& type, const std::string& res, long double enforced,
                   const std::string& enforced_text, const List& req, const List& lim,
                   std::vector<std::string>& errs) {
  auto r = req.value.find(res);
  auto l = lim.value.find(res);
  if (r == req.value.end()) {
    errs.push_back("minimum " + res + " usage per " + type + " is " + enforced_text +
                   ".  No request is specified");
    return;
  }
  if (r->second < enforced) {
    errs.push_back("minimum " + res + " usage per " + type + " is " + enforced_text + ", but request is " +
                   req.text.at(res));
    return;
  }
  if (l != lim.value.end() && l->second < enforced)
    errs.push_back("minimum " + res + " usage per " + type + " is " + enforced_text + ", but limit is " +
                   lim.text.at(res));
}

void maxConstraint(const std::string& type, const std::string& res, long double enforced,
                   const std::string& enforced_text, const List& req, const List& lim,
                   std::vector<std::string>& errs) {
  auto r = req.value.find(res);
  auto l = lim.value.find(res);
  if (l == lim.value.end()) {
    errs.push_back("maximum " + res + " usage per " + type + " is " + enforced_text +
                   ".  No limit is specified");
    return;
  }
  if (l->second > enforced) {
    errs.push_back("maximum " + res + " usage per " + type + " is " + enforced_text + ", but limit is " +
                   lim.text.at(res));
    return;
  }
  if (r != req.value.end() && r->second > enforced)
    errs.push_back("maximum " + res + " usage per " + type + " is " + enforced_text + ", but request is " +
                   req.text.at(res));
}

void ratioConstraint(const std::string& type, const std::string& res, long double enforced,
                     const std::string& enforced_text, const List& req, const List& lim,
                     std::vector<std::string>& errs) {
  auto r = req.value.find(res);
  auto l = lim.value.find(res);
  if (r == req.value.end() || r->second == 0) {
    errs.push_back(res + " max limit to request ratio per " + type + " is " + enforced_text +
                   ", but no request is specified or request is 0");
    return;
  }
  if (l == lim.value.end() || l->second == 0) {
    errs.push_back(res + " max limit to request ratio per " + type + " is " + enforced_text +
                   ", but no limit is specified or limit is 0");
    return;
  }
  long double observed = l->second / r->second;
  if (observed > enforced)
    errs.push_back(res + " max limit to request ratio per " + type + " is " + enforced_text +
                   ", but provided ratio is " + ratioText(observed));
}

// A container's requests and limits, requests defaulting to limits as the API's pod
// defaulting does before admission upstream.
std::pair<List, List> containerResources(const json::Value& c) {
  List req = listOf(json::findPath(c, {"resources", "requests"}));
  List lim = listOf(json::findPath(c, {"resources", "limits"}));
  for (const auto& [k, v] : lim.value)
    if (!req.value.count(k)) {
      req.value[k] = v;
      req.text[k] = lim.text[k];
    }
  return {req, lim};
}

List fromQuota(const meta::quota::ResourceList& l) {
  List out;
  for (const auto& [k, v] : l) {
    out.value[k] = v.value;
    out.text[k] = meta::quota::format(v);
  }
  return out;
}

ApiError forbidden(const Attributes& a, const json::Value& obj, const std::vector<std::string>& errs) {
  std::string name(json::getStringPath(obj, {"metadata", "name"}));
  std::string msg;
  if (errs.size() == 1) {
    msg = errs[0];
  } else {
    msg = "[";
    for (size_t i = 0; i < errs.size(); ++i) msg += (i ? ", " : "") + errs[i];
    msg += "]";
  }
  return ApiError::forbidden(a.resource->group, a.resource->plural, name.empty() ? "Unknown" : name, msg);
}

const json::Value* limitsOf(const json::Document& lr) {
  const json::Value* l = json::findPath(lr, {"spec", "limits"});
  return l && l->IsArray() ? l : nullptr;
}

}  // namespace

Result<std::vector<json::Document>> LimitRanger::limitRanges(const std::string& ns) const {
  std::vector<json::Document> out;
  registry::Store* s = registry_ ? registry_->store("", "v1", "limitranges") : nullptr;
  if (!s) return out;
  registry::ListOptions o;
  o.ns = ns;
  auto page = s->list(o);
  if (!page) return page.error();
  for (const auto& item : page.value().items) {
    json::Document d;
    if (auto st = json::parse(item->json, d); !st) return st.error();
    out.push_back(std::move(d));
  }
  return out;
}

Status LimitRanger::admit(const Attributes& a, json::Document& obj, const json::Value*) const {
  if (kindOf(a) != Kind::Pod) return okStatus();
  auto ranges = limitRanges(a.ns);
  if (!ranges)
    return ApiError::forbidden("", "pods", "Unknown",
                               "unable to list limit ranges: " + ranges.error().message);
  json::Allocator& al = obj.GetAllocator();
  std::vector<std::string> notes;
  for (const auto& lr : ranges.value()) {
    const json::Value* limits = limitsOf(lr);
    if (!limits) continue;
    // defaultContainerResourceRequirements: the Container items' defaults.
    json::Document requests(rapidjson::kObjectType), lims(rapidjson::kObjectType);
    for (const auto& item : limits->GetArray()) {
      if (json::getString(item, "type") != "Container") continue;
      for (auto [key, into] : {std::pair{"defaultRequest", &requests}, std::pair{"default", &lims}})
        if (const json::Value* m = json::find(item, key); m && m->IsObject())
          for (const auto& kv : m->GetObject())
            json::set(*into, json::view(kv.name), json::Value(kv.value, into->GetAllocator()),
                      into->GetAllocator());
    }
    if (requests.MemberCount() == 0 && lims.MemberCount() == 0) continue;
    for (auto [list, what] :
         {std::pair{"containers", "container"}, std::pair{"initContainers", "init container"}}) {
      json::Value* cs = json::findPath(obj, {"spec", list});
      if (!cs || !cs->IsArray()) continue;
      for (auto& c : cs->GetArray()) {
        if (!c.IsObject()) continue;
        json::Value& res = json::ensureObject(c, "resources", al);
        // Both made first: adding a member may move the others.
        json::ensureObject(res, "requests", al);
        json::ensureObject(res, "limits", al);
        json::Value& req = *json::find(res, "requests");
        json::Value& lim = *json::find(res, "limits");
        // The API's pod defaulting runs before admission upstream: requests from limits.
        for (const auto& kv : lim.GetObject())
          if (!json::find(req, json::view(kv.name)))
            json::set(req, json::view(kv.name), json::Value(kv.value, al), al);
        std::vector<std::string> setReq, setLim;
        for (const auto& kv : lims.GetObject())
          if (!json::find(lim, json::view(kv.name))) {
            json::set(lim, json::view(kv.name), json::Value(kv.value, al), al);
            setLim.emplace_back(json::view(kv.name));
          }
        for (const auto& kv : requests.GetObject())
          if (!json::find(req, json::view(kv.name))) {
            json::set(req, json::view(kv.name), json::Value(kv.value, al), al);
            setReq.emplace_back(json::view(kv.name));
          }
        if (req.MemberCount() == 0) json::remove(res, "requests");
        if (lim.MemberCount() == 0) json::remove(res, "limits");
        std::string cname(json::getString(c, "name"));
        for (auto [set, kind] : {std::pair{&setReq, " request for "}, std::pair{&setLim, " limit for "}}) {
          if (set->empty()) continue;
          std::sort(set->begin(), set->end());
          std::string joined;
          for (const auto& s : *set) joined += (joined.empty() ? "" : ", ") + s;
          notes.push_back(joined + kind + what + " " + cname);
        }
      }
    }
  }
  if (!notes.empty()) {
    std::string text = "LimitRanger plugin set: ";
    for (size_t i = 0; i < notes.size(); ++i) text += (i ? "; " : "") + notes[i];
    json::Value& meta = json::ensureObject(obj, "metadata", al);
    json::setString(json::ensureObject(meta, "annotations", al), "kubernetes.io/limit-ranger", text, al);
  }
  return okStatus();
}

Status LimitRanger::validate(const Attributes& a, const json::Value& obj, const json::Value*) const {
  Kind kind = kindOf(a);
  if (kind == Kind::None) return okStatus();
  auto ranges = limitRanges(a.ns);
  if (!ranges)
    return ApiError::forbidden("", a.resource->plural, "Unknown",
                               "unable to list limit ranges: " + ranges.error().message);
  std::vector<std::string> errs;
  for (const auto& lr : ranges.value()) {
    const json::Value* limits = limitsOf(lr);
    if (!limits) continue;
    for (const auto& item : limits->GetArray()) {
      std::string type(json::getString(item, "type"));
      List mins = listOf(json::find(item, "min")), maxs = listOf(json::find(item, "max"));
      List ratios = listOf(json::find(item, "maxLimitRequestRatio"));
      auto check = [&](const std::string& t, const List& req, const List& lim) {
        for (const auto& [k, v] : mins.value) minConstraint(t, k, v, mins.text[k], req, lim, errs);
        for (const auto& [k, v] : maxs.value) maxConstraint(t, k, v, maxs.text[k], req, lim, errs);
        for (const auto& [k, v] : ratios.value) ratioConstraint(t, k, v, ratios.text[k], req, lim, errs);
      };
      if (kind == Kind::Claim) {
        if (type != "PersistentVolumeClaim") continue;
        List req = listOf(json::findPath(obj, {"spec", "resources", "requests"}));
        for (const auto& [k, v] : mins.value) minConstraint(type, k, v, mins.text[k], req, List{}, errs);
        for (const auto& [k, v] : maxs.value) {
          auto r = req.value.find(k);
          if (r == req.value.end())
            errs.push_back("maximum " + k + " usage per " + type + " is " + maxs.text[k] +
                           ".  No request is specified");
          else if (r->second > v)
            errs.push_back("maximum " + k + " usage per " + type + " is " + maxs.text[k] +
                           ", but request is " + req.text[k]);
        }
        continue;
      }
      if (type == "Container") {
        for (const char* list : {"containers", "initContainers"}) {
          const json::Value* cs = json::findPath(obj, {"spec", list});
          if (!cs || !cs->IsArray()) continue;
          for (const auto& c : cs->GetArray()) {
            auto [req, lim] = containerResources(c);
            check(type, req, lim);
          }
        }
      } else if (type == "Pod") {
        // The pod's effective requests and limits, without the overhead (as upstream).
        auto [preq, plim] = meta::quota::podRequestsAndLimits(obj, false);
        List req = fromQuota(preq), lim = fromQuota(plim);
        check(type, req, lim);
      }
    }
  }
  if (errs.empty()) return okStatus();
  return forbidden(a, obj, errs);
}

}  // namespace shepherd::plugins::admission
