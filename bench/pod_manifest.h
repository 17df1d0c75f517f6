// A realistic pod for the API benchmarks: what `kubectl create -f` sends for a typical
// web workload (labels, annotations, two containers with ports, env, resources, probes,
// volume mounts), about 1.5 KB of compact JSON.
#pragma once

#include <string>

namespace shepherd::bench {

// node_name empty = unscheduled. app_label groups pods for label-selector reads.
inline std::string podManifest(const std::string& name, const std::string& ns, const std::string& app_label,
                               const std::string& node_name = "") {
  std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":")" + ns +
                    R"(","labels":{"app":")" + app_label +
                    R"(","tier":"frontend","release":"stable","team":"payments"},)"
                    R"("annotations":{"prometheus.io/scrape":"true","prometheus.io/port":"9102",)"
                    R"("example.com/owner":"payments-oncall@example.com"}},"spec":{)";
  if (!node_name.empty()) pod += R"("nodeName":")" + node_name + R"(",)";
  pod +=
      R"("containers":[{"name":"web","image":"registry.example.com/payments/web:1.24.3",)"
      R"("args":["--listen=:8080","--metrics=:9102","--log-level=info"],)"
      R"("ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},{"name":"metrics","containerPort":9102,"protocol":"TCP"}],)"
      R"("env":[{"name":"APP_ENV","value":"production"},{"name":"DB_HOST","value":"payments-db.payments.svc"},)"
      R"({"name":"POD_NAME","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],)"
      R"("resources":{"requests":{"cpu":"250m","memory":"256Mi"},"limits":{"cpu":"1","memory":"512Mi"}},)"
      R"("readinessProbe":{"httpGet":{"path":"/healthz","port":8080},"periodSeconds":5},)"
      R"("livenessProbe":{"httpGet":{"path":"/livez","port":8080},"initialDelaySeconds":10,"periodSeconds":10},)"
      R"("volumeMounts":[{"name":"config","mountPath":"/etc/web","readOnly":true}]},)"
      R"({"name":"log-shipper","image":"registry.example.com/infra/log-shipper:2.4.0",)"
      R"("resources":{"requests":{"cpu":"50m","memory":"64Mi"},"limits":{"memory":"128Mi"}},)"
      R"("volumeMounts":[{"name":"logs","mountPath":"/var/log/web"}]}],)"
      R"("volumes":[{"name":"config","configMap":{"name":"web-config"}},{"name":"logs","emptyDir":{}}],)"
      R"("terminationGracePeriodSeconds":30,"restartPolicy":"Always"}})";
  return pod;
}

}  // namespace shepherd::bench
