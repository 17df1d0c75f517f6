#include "controllers/endpointslice/endpointslice_reconciler.h"

#include <algorithm>
#include <map>
#include <set>

#include "controllers/endpoint/service_pods.h"
#include "controllers/manager/controller_ref.h"
#include "controllers/manager/object_meta.h"
#include "controllers/manager/pod_state.h"

namespace shepherd::controllers {

namespace {

// Slices are grouped by address type and port set; the key compares ports by value,
// whatever the member order in a stored slice.
std::string portKey(const json::Value* ports) {
  std::string key;
  if (!ports || !ports->IsArray()) return key;
  for (auto& p : ports->GetArray()) {
    key += std::string(json::getString(p, "name")) + "/" +
           std::to_string(json::getInt(p, "port").value_or(-1)) + "/" +
           std::string(json::getString(p, "protocol", "TCP")) + "/" +
           std::string(json::getString(p, "appProtocol")) + ";";
  }
  return key;
}

// An endpoint's identity across syncs: the pod's uid, or its first address.
std::string endpointId(const json::Value& ep) {
  std::string_view uid = json::getStringPath(ep, {"targetRef", "uid"});
  if (!uid.empty()) return std::string(uid);
  const json::Value* addrs = json::find(ep, "addresses");
  return addrs && addrs->IsArray() && !addrs->Empty() && (*addrs)[0].IsString()
             ? std::string(json::view((*addrs)[0]))
             : std::string();
}

struct Group {
  std::string address_type;
  json::Document ports;                                        // array
  std::vector<std::pair<std::string, std::string>> endpoints;  // (id, serialized endpoint), by IP
};

// The pod's endpoint and ports, or false when the pod is not one of the Service's.
bool podEndpoint(const json::Value& service, const json::Value& pod, Group& out_group_shape,
                 json::Document& ep) {
  std::string ip(json::getStringPath(pod, {"status", "podIP"}));
  std::string_view phase = json::getStringPath(pod, {"status", "phase"});
  if (ip.empty() || phase == "Succeeded" || phase == "Failed") return false;
  const json::Value* spec = json::find(service, "spec");
  bool publish_not_ready = spec && json::getBool(*spec, "publishNotReadyAddresses");
  bool terminating = json::findPath(pod, {"metadata", "deletionTimestamp"}) != nullptr;
  bool serving = publish_not_ready || podReady(pod);
  // Ready is never true while terminating, unless not-ready addresses are published.
  bool ready = publish_not_ready || (serving && !terminating);

  auto& a = ep.GetAllocator();
  ep.SetObject();
  json::Value addrs(rapidjson::kArrayType);
  addrs.PushBack(json::str(ip, a), a);
  json::set(ep, "addresses", std::move(addrs), a);
  json::Value& cond = json::ensureObject(ep, "conditions", a);
  json::set(cond, "ready", json::Value(ready), a);
  json::set(cond, "serving", json::Value(serving), a);
  json::set(cond, "terminating", json::Value(terminating), a);
  std::string_view hostname = json::getStringPath(pod, {"spec", "hostname"});
  if (!hostname.empty() && json::getStringPath(pod, {"spec", "subdomain"}) == nameOf(service))
    json::setString(ep, "hostname", hostname, a);
  if (std::string_view node = json::getStringPath(pod, {"spec", "nodeName"}); !node.empty())
    json::setString(ep, "nodeName", node, a);
  json::set(ep, "targetRef", podReference(pod, a), a);

  out_group_shape.address_type = ip.find(':') == std::string::npos ? "IPv4" : "IPv6";
  // A named port this pod lacks is left out; the others still count.
  json::Value ports = endpointPorts(service, pod, true, out_group_shape.ports.GetAllocator());
  static_cast<json::Value&>(out_group_shape.ports).Swap(ports);
  return true;
}

// Labels of a managed slice: the Service's own labels, then ours.
json::Value sliceLabels(const json::Value& service, json::Allocator& a) {
  json::Value labels(rapidjson::kObjectType);
  if (const json::Value* l = json::findPath(service, {"metadata", "labels"}); l && l->IsObject())
    for (auto& kv : l->GetObject()) {
      std::string_view k = json::view(kv.name);
      if (k == kServiceNameLabel || k == kManagedByLabel || k == "service.kubernetes.io/headless") continue;
      json::set(labels, k, json::Value(kv.value, a), a);
    }
  json::setString(labels, kServiceNameLabel, nameOf(service), a);
  json::setString(labels, kManagedByLabel, kManagedByValue, a);
  if (json::getStringPath(service, {"spec", "clusterIP"}) == "None")
    json::setString(labels, "service.kubernetes.io/headless", "", a);
  return labels;
}

// A slice body: metadata (new: generateName; existing: name and resourceVersion), type,
// ports and endpoints.
json::Document sliceObject(const json::Value& service, const json::Value* existing,
                           const std::string& address_type, const json::Value& ports,
                           const std::vector<const std::string*>& endpoints) {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  json::setString(d, "apiVersion", "discovery.k8s.io/v1", a);
  json::setString(d, "kind", "EndpointSlice", a);
  json::Value& md = json::ensureObject(d, "metadata", a);
  if (existing) {
    json::setString(md, "name", nameOf(*existing), a);
    json::setString(md, "resourceVersion", json::getStringPath(*existing, {"metadata", "resourceVersion"}),
                    a);
    if (const json::Value* ann = json::findPath(*existing, {"metadata", "annotations"}))
      json::set(md, "annotations", json::Value(*ann, a), a);
  } else {
    // Upstream keeps the generated name a valid label-length name.
    std::string prefix = nameOf(service) + "-";
    if (prefix.size() > 58) prefix = prefix.substr(0, 57) + "-";
    json::setString(md, "generateName", prefix, a);
  }
  json::setString(md, "namespace", namespaceOf(service), a);
  json::set(md, "labels", sliceLabels(service, a), a);
  json::Value refs(rapidjson::kArrayType);
  refs.PushBack(controllerReference(Owner{&service, "v1", "Service", "", ""}, a), a);
  json::set(md, "ownerReferences", std::move(refs), a);
  json::setString(d, "addressType", address_type, a);
  json::Value eps(rapidjson::kArrayType);
  for (const std::string* text : endpoints) {
    json::Document e;
    e.Parse(text->data(), text->size());
    eps.PushBack(json::Value(e, a), a);
  }
  json::set(d, "endpoints", std::move(eps), a);
  json::set(d, "ports", json::Value(ports, a), a);
  return d;
}

// Whether the stored slice already says what `want` says (labels, owner, type, ports,
// endpoints); the API server's defaults make stored ports carry name and protocol.
bool sameSlice(const json::Value& have, const json::Value& want) {
  auto eq = [](const json::Value* x, const json::Value* y) {
    bool xe = !x || x->IsNull() || ((x->IsArray() && x->Empty()) || (x->IsObject() && x->ObjectEmpty()));
    bool ye = !y || y->IsNull() || ((y->IsArray() && y->Empty()) || (y->IsObject() && y->ObjectEmpty()));
    if (xe || ye) return xe == ye;
    return *x == *y;
  };
  return json::getString(have, "addressType") == json::getString(want, "addressType") &&
         portKey(json::find(have, "ports")) == portKey(json::find(want, "ports")) &&
         eq(json::find(have, "endpoints"), json::find(want, "endpoints")) &&
         eq(json::findPath(have, {"metadata", "labels"}), json::findPath(want, {"metadata", "labels"})) &&
         eq(json::findPath(have, {"metadata", "ownerReferences"}),
            json::findPath(want, {"metadata", "ownerReferences"}));
}

}  // namespace

SlicePlan planEndpointSlices(const json::Value& service, const std::vector<client::Object>& pods,
                             const std::vector<client::Object>& existing, size_t max_per_slice) {
  max_per_slice = std::max<size_t>(1, max_per_slice);
  SlicePlan plan;
  const json::Value* selector = json::findPath(service, {"spec", "selector"});

  // Desired endpoints by group, sorted by address for a stable layout.
  std::map<std::string, Group> groups;
  for (auto& p : pods) {
    if (!selector || !serviceSelects(*selector, json::findPath(*p, {"metadata", "labels"}))) continue;
    Group shape;
    json::Document ep;
    if (!podEndpoint(service, *p, shape, ep)) continue;
    std::string key = shape.address_type + "|" + portKey(&shape.ports);
    Group& g = groups[key];
    if (g.address_type.empty()) {
      g.address_type = shape.address_type;
      g.ports.CopyFrom(shape.ports, g.ports.GetAllocator());
    }
    g.endpoints.emplace_back(endpointId(ep), json::serialize(ep));
  }
  for (auto& [key, g] : groups)
    std::sort(g.endpoints.begin(), g.endpoints.end(), [](auto& x, auto& y) { return x.second < y.second; });

  // Existing slices by group; endpoints keep their slice when still wanted.
  struct Slot {
    const json::Value* slice;
    std::vector<const std::string*> endpoints;
    bool changed = false;
  };
  std::map<std::string, std::vector<Slot>> slots;
  std::vector<const json::Value*> placeholders;
  for (auto& s : existing) {
    const json::Value* eps = json::find(*s, "endpoints");
    std::string key =
        std::string(json::getString(*s, "addressType")) + "|" + portKey(json::find(*s, "ports"));
    if (!eps || !eps->IsArray() || eps->Empty()) {
      placeholders.push_back(s.get());
      continue;
    }
    auto git = groups.find(key);
    if (git == groups.end()) {
      plan.remove.push_back(nameOf(*s));
      continue;
    }
    slots[key].push_back(Slot{s.get(), {}, false});
  }

  for (auto& [key, g] : groups) {
    std::map<std::string, const std::string*> wanted;  // id -> endpoint text
    for (auto& [id, text] : g.endpoints) wanted.emplace(id, &text);
    std::set<std::string> placed;
    auto& group_slots = slots[key];
    for (auto& slot : group_slots) {
      for (auto& ep : json::find(*slot.slice, "endpoints")->GetArray()) {
        std::string id = endpointId(ep);
        auto w = wanted.find(id);
        if (w == wanted.end() || placed.count(id) || slot.endpoints.size() >= max_per_slice) {
          slot.changed = true;  // gone, duplicated, or over the limit
          continue;
        }
        placed.insert(id);
        slot.endpoints.push_back(w->second);
      }
    }
    // New endpoints: first into slices that are written anyway, then into other slices
    // with room, then into new slices.
    std::vector<const std::string*> pending;
    for (auto& [id, text] : g.endpoints)
      if (!placed.count(id)) pending.push_back(&text);
    size_t next = 0;
    for (int pass = 0; pass < 2 && next < pending.size(); ++pass)
      for (auto& slot : group_slots) {
        if ((pass == 0) != slot.changed) continue;
        while (next < pending.size() && slot.endpoints.size() < max_per_slice) {
          slot.endpoints.push_back(pending[next++]);
          slot.changed = true;
        }
      }
    for (auto& slot : group_slots) {
      if (slot.endpoints.empty()) {
        plan.remove.push_back(nameOf(*slot.slice));
        continue;
      }
      json::Document want = sliceObject(service, slot.slice, g.address_type, g.ports, slot.endpoints);
      if (slot.changed || !sameSlice(*slot.slice, want)) plan.update.push_back(std::move(want));
    }
    while (next < pending.size()) {
      std::vector<const std::string*> chunk;
      while (next < pending.size() && chunk.size() < max_per_slice) chunk.push_back(pending[next++]);
      plan.create.push_back(sliceObject(service, nullptr, g.address_type, g.ports, chunk));
    }
  }

  // A Service without endpoints keeps exactly one empty slice (upstream's placeholder).
  if (groups.empty()) {
    std::string family = "IPv4";
    if (const json::Value* fams = json::findPath(service, {"spec", "ipFamilies"});
        fams && fams->IsArray() && !fams->Empty() && (*fams)[0].IsString() &&
        json::view((*fams)[0]) == "IPv6")
      family = "IPv6";
    json::Document no_ports;
    no_ports.SetArray();
    // addressType is immutable: a placeholder of the other family is replaced.
    const json::Value* keep = nullptr;
    for (auto* p : placeholders)
      if (!keep && json::getString(*p, "addressType") == family) keep = p;
    json::Document want = sliceObject(service, keep, family, no_ports, {});
    if (!keep)
      plan.create.push_back(std::move(want));
    else if (!sameSlice(*keep, want))
      plan.update.push_back(std::move(want));
    for (auto* p : placeholders)
      if (p != keep) plan.remove.push_back(nameOf(*p));
  } else {
    for (auto* p : placeholders) plan.remove.push_back(nameOf(*p));
  }
  return plan;
}

}  // namespace shepherd::controllers
