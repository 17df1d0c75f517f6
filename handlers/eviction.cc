// pods/eviction (POST .../pods/{name}/eviction with a policy/v1 or v1beta1 Eviction): a
// pod deletion that honours the PodDisruptionBudget guarding the pod, as upstream's
// EvictionREST. A pod that is finished, Pending or already being deleted goes at once;
// otherwise its one budget must allow a disruption (429 when it does not), which the
// eviction takes by decrementing status.disruptionsAllowed and recording the pod in
// status.disruptedPods (the disruption controller forgets it once the pod is gone, or
// after two minutes). The pod gets DisruptionTarget=True before it is deleted.
#include <chrono>
#include <thread>

#include "apis/catalog.h"
#include "apis/kinds/pod_eviction.h"
#include "common/clock.h"
#include "handlers/negotiation.h"
#include "handlers/rest_handler.h"
#include "handlers/status.h"
#include "registry/managed_fields.h"

namespace shepherd::handlers {

namespace {

// EvictionsRetry: 20 attempts, 500 ms apart, on conflicts.
constexpr int kConflictAttempts = 20;
constexpr auto kConflictPause = std::chrono::milliseconds(500);

http::Response success() {
  http::Response r;
  r.status = 201;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"})";
  return r;
}

http::Response failureStatus(int code, const std::string& message) {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  d.AddMember("kind", "Status", a);
  d.AddMember("apiVersion", "v1", a);
  d.AddMember("metadata", json::Value(rapidjson::kObjectType), a);
  d.AddMember("status", "Failure", a);
  d.AddMember("message", json::str(message, a), a);
  d.AddMember("code", code, a);
  http::Response r;
  r.status = code;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = json::serialize(d);
  return r;
}

Result<json::Document> parsed(const registry::ObjectPtr& o) {
  json::Document d;
  if (auto st = json::parse(o->json, d); !st) return st.error();
  return d;
}

// addConditionAndDeletePod: DisruptionTarget=True on the latest pod (checking the
// preconditions there), then the delete; a resourceVersion precondition moves to the
// version that write made.
Status markAndDelete(registry::Store& pods, const std::string& ns, const std::string& name,
                     registry::DeleteOptions opts, const std::string& field_manager) {
  if (!opts.dry_run) {
    registry::WriteOptions wo;
    wo.field_manager = field_manager;
    std::string now = clock::rfc3339(clock::now());
    auto out = pods.modify(
        ns, name,
        [&](json::Document& pod) {
          return apis::kinds::markDisruptionTarget(pod, opts.precondition_uid,
                                                   opts.precondition_resource_version, now);
        },
        wo, registry::Subresource::Status);
    if (!out) return out.error();
    if (!opts.precondition_resource_version.empty())
      opts.precondition_resource_version = std::to_string(out.value().object->mod_revision);
  }
  auto del = pods.remove(ns, name, opts);
  if (!del) return del.error();
  return okStatus();
}

}  // namespace

void RestHandler::evict(http::Request& req, const std::shared_ptr<http::Responder>& resp,
                        const RequestScope& s) {
  json::Document eviction;
  if (auto st = decodeBody(req, eviction); !st) return resp->send(errorResponse(st.error()));
  if (auto st = apis::kinds::validateEviction(eviction, s.name, s.ns); !st)
    return resp->send(errorResponse(st.error()));
  std::string_view dry = req.queryValue("dryRun");
  if (!dry.empty() && dry != "All")
    return resp->send(errorResponse(
        ApiError::badRequest("Invalid dry run value: " + std::string(dry) + ": supported values: \"All\"")));
  std::string manager(req.queryValue("fieldManager"));
  if (manager.empty()) manager = registry::defaultManager(req.header("user-agent"));
  // propagateDryRun: the request's dryRun joins the Eviction's DeleteOptions.
  auto parsedOpts = registry::parseDeleteOptions(json::find(eviction, "deleteOptions"));
  if (!parsedOpts) return resp->send(errorResponse(parsedOpts.error()));
  registry::DeleteOptions opts = parsedOpts.value();
  if (dry == "All") opts.dry_run = true;
  const bool rv_given = !opts.precondition_resource_version.empty();

  registry::Store* pods = registry_.store("", "v1", "pods");
  registry::Store* budgets = registry_.store("policy", "v1", "poddisruptionbudgets");
  if (!pods || !budgets) return resp->send(errorResponse(ApiError::internal("no pod or budget store")));
  RequestScope evictionScope = s;
  evictionScope.subresource = "eviction";
  admission::Request adm = admissionFor(req, evictionScope, opts.dry_run);
  if (auto st = adm.admit(admission::Operation::Create, eviction, nullptr); !st)
    return resp->send(errorResponse(st.error()));
  if (auto st = adm.validate(admission::Operation::Create, eviction, nullptr); !st)
    return resp->send(errorResponse(st.error()));

  // A pod that may go without asking a budget; conflicts (it changed meanwhile) retry.
  json::Document pod;
  for (int attempt = 0;; ++attempt) {
    auto cur = pods->get(s.ns, s.name);
    if (!cur) return resp->send(errorResponse(cur.error()));
    auto doc = parsed(cur.value());
    if (!doc) return resp->send(errorResponse(doc.error()));
    pod.Swap(doc.value());
    if (!apis::kinds::evictionIgnoresBudgets(pod)) break;
    registry::DeleteOptions d = opts;
    if (apis::kinds::evictionEnforcesResourceVersion(pod) && !rv_given)
      d.precondition_resource_version = std::to_string(cur.value()->mod_revision);
    auto st = markAndDelete(*pods, s.ns, s.name, d, manager);
    if (st) return resp->send(success());
    if (st.error().code != 409 || rv_given || attempt + 1 >= kConflictAttempts)
      return resp->send(errorResponse(st.error()));
    std::this_thread::sleep_for(kConflictPause);
  }

  // The budget guarding the pod, if any.
  registry::ListOptions lo;
  lo.ns = s.ns;
  auto page = budgets->list(lo);
  if (!page) return resp->send(errorResponse(page.error()));
  std::vector<json::Document> docs;
  docs.reserve(page.value().items.size());
  for (const auto& o : page.value().items) {
    auto d = parsed(o);
    if (!d) return resp->send(errorResponse(d.error()));
    docs.push_back(std::move(d.value()));
  }
  std::vector<const json::Value*> all;
  for (const auto& d : docs) all.push_back(&d);
  auto guarding = apis::kinds::budgetsGuarding(pod, all);
  if (guarding.size() > 1)
    return resp->send(failureStatus(
        500,
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."));
  std::string budgetName;
  bool pinVersion = false;  // an unready pod goes only as it was when we looked
  if (guarding.size() == 1) {
    const json::Value& budget = *guarding.front();
    budgetName = json::getStringPath(budget, {"metadata", "name"});
    if (apis::kinds::unreadyPodMayGo(pod, budget)) {
      pinVersion = true;
    } else {
      std::string now = clock::rfc3339(clock::now());
      Status taken = okStatus();
      if (opts.dry_run) {
        json::Document copy;
        copy.CopyFrom(budget, copy.GetAllocator());
        taken = apis::kinds::takeDisruption(copy, s.name, now, true);
      } else {
        registry::WriteOptions wo;
        wo.field_manager = manager;
        auto out = budgets->modify(
            s.ns, budgetName,
            [&](json::Document& b) { return apis::kinds::takeDisruption(b, s.name, now, false); }, wo,
            registry::Subresource::Status);
        if (!out) taken = out.error();
      }
      if (!taken) {
        if (taken.error().code == 409) {
          ApiError e = ApiError::timeout("Timeout: couldn't update PodDisruptionBudget \"" + budgetName +
                                         "\" due to conflicts");
          e.retry_after_seconds = 10;
          return resp->send(errorResponse(e));
        }
        return resp->send(errorResponse(taken.error()));
      }
    }
  }

  registry::DeleteOptions d = opts;
  if (pinVersion) d.precondition_resource_version = json::getStringPath(pod, {"metadata", "resourceVersion"});
  if (auto st = markAndDelete(*pods, s.ns, s.name, d, manager); !st) {
    if (st.error().code == 409 && pinVersion && !rv_given)
      return resp->send(errorResponse(apis::kinds::budgetBusy(budgetName)));
    return resp->send(errorResponse(st.error()));
  }
  resp->send(success());
}

}  // namespace shepherd::handlers
