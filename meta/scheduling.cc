#include "meta/scheduling.h"

#include <cstdlib>

namespace shepherd::meta {

namespace {

bool requirementMatches(const json::Value& r, const json::Value& node, bool field) {
  std::string_view key = json::getString(r, "key");
  std::string_view op = json::getString(r, "operator");
  std::string_view value;
  bool has = false;
  if (field) {
    if (key == "metadata.name") {
      value = json::getStringPath(node, {"metadata", "name"});
      has = true;
    }
  } else if (const json::Value* l = json::findPath(node, {"metadata", "labels"}); l && l->IsObject()) {
    if (const json::Value* v = json::find(*l, key); v && v->IsString()) {
      value = json::view(*v);
      has = true;
    }
  }
  const json::Value* values = json::find(r, "values");
  auto in = [&] {
    if (!values || !values->IsArray()) return false;
    for (auto& x : values->GetArray())
      if (x.IsString() && json::view(x) == value) return true;
    return false;
  };
  if (op == "In") return has && in();
  if (op == "NotIn") return !has || !in();
  if (op == "Exists") return has;
  if (op == "DoesNotExist") return !has;
  if (op == "Gt" || op == "Lt") {
    if (!has || !values || !values->IsArray() || values->Size() != 1 || !(*values)[0].IsString())
      return false;
    std::string a(value), b(json::view((*values)[0]));
    char* e1 = nullptr;
    char* e2 = nullptr;
    long long have = std::strtoll(a.c_str(), &e1, 10), want = std::strtoll(b.c_str(), &e2, 10);
    if (a.empty() || b.empty() || *e1 || *e2) return false;
    return op == "Gt" ? have > want : have < want;
  }
  return false;
}

// A term's requirements are ANDed; a term with none matches nothing.
bool termMatches(const json::Value& term, const json::Value& node) {
  bool any = false;
  for (auto [list, field] : {std::pair{"matchExpressions", false}, std::pair{"matchFields", true}})
    if (const json::Value* rs = json::find(term, list); rs && rs->IsArray())
      for (auto& r : rs->GetArray()) {
        any = true;
        if (!requirementMatches(r, node, field)) return false;
      }
  return any;
}

}  // namespace

bool toleratesTaint(const json::Value& tol, const json::Value& taint) {
  std::string_view effect = json::getString(tol, "effect");
  if (!effect.empty() && effect != json::getString(taint, "effect")) return false;
  std::string_view key = json::getString(tol, "key");
  std::string_view op = json::getString(tol, "operator");
  if (op.empty()) op = "Equal";
  if (key.empty()) return op == "Exists";
  if (key != json::getString(taint, "key")) return false;
  if (op == "Exists") return true;
  return json::getString(tol, "value") == json::getString(taint, "value");
}

const json::Value* untoleratedTaint(const json::Value* taints, const json::Value* tolerations,
                                    const std::function<bool(const json::Value&)>& keep) {
  if (!taints || !taints->IsArray()) return nullptr;
  for (auto& t : taints->GetArray()) {
    if (!keep(t)) continue;
    bool tolerated = false;
    if (tolerations && tolerations->IsArray())
      for (auto& tol : tolerations->GetArray()) tolerated = tolerated || toleratesTaint(tol, t);
    if (!tolerated) return &t;
  }
  return nullptr;
}

bool requiredNodeAffinityMatches(const json::Value& spec, const json::Value& node) {
  if (const json::Value* sel = json::find(spec, "nodeSelector"); sel && sel->IsObject()) {
    const json::Value* labels = json::findPath(node, {"metadata", "labels"});
    for (auto& m : sel->GetObject()) {
      const json::Value* v = labels && labels->IsObject() ? json::find(*labels, json::view(m.name)) : nullptr;
      if (!v || *v != m.value) return false;
    }
  }
  const json::Value* req =
      json::findPath(spec, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"});
  if (!req || !req->IsObject()) return true;
  const json::Value* terms = json::find(*req, "nodeSelectorTerms");
  if (!terms || !terms->IsArray()) return false;
  for (auto& t : terms->GetArray())
    if (termMatches(t, node)) return true;  // terms are ORed
  return false;
}

}  // namespace shepherd::meta
