"""Raw HTTP tests of the Shepherd API (no kubectl)."""

import ipaddress
import json
import re
import socket
import threading
import uuid

import pytest
import yaml

# Behaviour that depends on the store: scripts/test.sh runs this module again with the
# API server on etcd.
pytestmark = pytest.mark.storage

NS = "e2e-api"
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io"
SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")


def uniq(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


def cm_body(name, data=None, ns=None, **meta):
    md = {"name": name}
    if ns:
        md["namespace"] = ns
    md.update(meta)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data or {"k": "v"}}


def pod_body(name, containers=None, **spec):
    s = {"containers": containers or [{"name": "c", "image": "busybox:1.36"}]}
    s.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": s}


def deployment_body(name, replicas=1, image="nginx:1.25"):
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "app", "image": image}]}},
        },
    }


def svc_body(name, cluster_ip=None):
    spec = {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080}]}
    if cluster_ip:
        spec["clusterIP"] = cluster_ip
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


CM = "/api/v1/namespaces/%s/configmaps" % NS
PODS = "/api/v1/namespaces/%s/pods" % NS
SVCS = "/api/v1/namespaces/%s/services" % NS
DEPLOYS = "/apis/apps/v1/namespaces/%s/deployments" % NS


def assert_status(obj, code, reason):
    """A metav1.Status failure body."""
    assert isinstance(obj, dict), obj
    assert obj.get("kind") == "Status", obj
    assert obj.get("apiVersion") == "v1", obj
    assert obj.get("status") == "Failure", obj
    assert obj.get("code") == code, obj
    assert obj.get("reason") == reason, obj
    assert obj.get("message"), obj


@pytest.fixture(scope="module", autouse=True)
def namespace(api):
    st, _, obj = api.post("/api/v1/namespaces",
                          {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    assert st == 201, obj
    return NS


def create(api, path, body, expect=201):
    st, hdrs, obj = api.post(path, body)
    assert st == expect, obj
    return obj


# --------------------------------------------------------------------------- errors


def test_get_missing_404(api):
    st, hdrs, obj = api.get(CM + "/does-not-exist")
    assert st == 404
    assert hdrs.get("Content-Type", "").startswith("application/json")
    assert_status(obj, 404, "NotFound")
    assert obj["message"] == 'configmaps "does-not-exist" not found'
    assert obj["details"]["name"] == "does-not-exist"
    assert obj["details"]["kind"] == "configmaps"


def test_get_missing_namespace_scoped_list_is_empty_not_error(api):
    st, _, obj = api.get("/api/v1/namespaces/no-such-ns/configmaps")
    assert st == 200
    assert obj["kind"] == "ConfigMapList"
    assert obj["items"] == []


def test_unknown_resource_404(api):
    st, _, obj = api.get("/api/v1/namespaces/%s/frobnicators" % NS)
    assert st == 404
    assert obj["kind"] == "Status" and obj["reason"] == "NotFound"


def test_create_duplicate_409(api):
    name = uniq("dup")
    create(api, CM, cm_body(name))
    st, _, obj = api.post(CM, cm_body(name))
    assert st == 409
    assert_status(obj, 409, "AlreadyExists")
    assert obj["message"] == 'configmaps "%s" already exists' % name
    assert obj["details"] == {"name": name, "kind": "configmaps"}


def test_update_stale_resource_version_409(api):
    name = uniq("stale")
    first = create(api, CM, cm_body(name, {"a": "1"}))
    second = dict(first, data={"a": "2"})
    st, _, upd = api.put(CM + "/" + name, second)
    assert st == 200, upd
    stale = dict(first, data={"a": "3"})  # still carries the first resourceVersion
    st, _, obj = api.put(CM + "/" + name, stale)
    assert st == 409
    assert_status(obj, 409, "Conflict")
    assert "the object has been modified" in obj["message"]
    st, _, cur = api.get(CM + "/" + name)
    assert cur["data"] == {"a": "2"}


def test_put_without_resource_version_succeeds(api):
    name = uniq("norv")
    create(api, CM, cm_body(name, {"a": "1"}))
    st, _, obj = api.put(CM + "/" + name, cm_body(name, {"a": "unconditional"}))
    assert st == 200, obj
    assert obj["data"] == {"a": "unconditional"}
    st, _, cur = api.get(CM + "/" + name)
    assert cur["data"] == {"a": "unconditional"}


def test_put_missing_object_404(api):
    name = uniq("ghost")
    st, _, obj = api.put(CM + "/" + name, cm_body(name))
    assert st == 404
    assert_status(obj, 404, "NotFound")


def test_put_name_mismatch_400(api):
    name = uniq("mm")
    create(api, CM, cm_body(name))
    st, _, obj = api.put(CM + "/" + name, cm_body("other-name"))
    assert st == 400
    assert_status(obj, 400, "BadRequest")


def test_malformed_json_400(api):
    st, hdrs, obj = api.json("POST", CM, b'{"apiVersion": "v1", "kind": "ConfigMap", ',
                             content_type="application/json")
    assert st == 400
    assert_status(obj, 400, "BadRequest")


def test_malformed_yaml_400(api):
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n  data: {\n"
    st, hdrs, obj = api.json("POST", CM, body, content_type="application/yaml")
    assert st == 400
    assert hdrs.get("Content-Type", "").startswith("application/json")
    assert_status(obj, 400, "BadRequest")


def test_unsupported_media_type_415(api):
    st, _, obj = api.json("POST", CM, b"hello", content_type="text/plain")
    assert st == 415
    assert_status(obj, 415, "UnsupportedMediaType")


def raw_post(server, path, body, content_type="application/json", timeout=30):
    """POST over a raw socket so the response is read even if the server stops reading the
    body early. Returns (status, headers dict, body bytes)."""
    s = socket.create_connection(("127.0.0.1", server.port), timeout=timeout)
    if server.ssl_context:
        s = server.ssl_context.wrap_socket(s, server_hostname="127.0.0.1")
    try:
        s.sendall(("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\n"
                   "Accept: application/json\r\nContent-Length: %d\r\n\r\n"
                   % (path, content_type, len(body))).encode())
        try:
            view = memoryview(body)
            while view:
                n = s.send(view[:65536])
                view = view[n:]
        except OSError:
            pass  # the server answered early and closed; read what it sent
        data = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
                head, sep, rest = data.partition(b"\r\n\r\n")
                if sep:
                    m = re.search(rb"content-length:\s*(\d+)", head, re.I)
                    if m and len(rest) >= int(m.group(1)):
                        break
        except OSError:
            pass
    finally:
        s.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode(errors="replace").split("\r\n")
    assert lines and lines[0].startswith("HTTP/1."), data[:200]
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, rest


def test_body_over_3mib_413(api, server):
    name = uniq("huge")
    body = json.dumps(cm_body(name, {"blob": "x" * (3 * 1024 * 1024 + 1024)})).encode()
    status, headers, payload = raw_post(server, CM, body)
    assert status == 413, payload[:300]
    assert_status(json.loads(payload), 413, "RequestEntityTooLarge")
    st, _, _ = api.get(CM + "/" + name)
    assert st == 404
    assert api.request("GET", "/healthz")[0] == 200


def test_deeply_nested_json_400_and_server_survives(api):
    depth = 5000
    body = ('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":{"k":'
            + "[" * depth + "]" * depth + "}}").encode()
    st, _, obj = api.json("POST", CM, body, content_type="application/json")
    assert st == 400
    assert_status(obj, 400, "BadRequest")
    # bare nested array too
    st, _, obj = api.json("POST", CM, b"[" * depth + b"]" * depth,
                          content_type="application/json")
    assert st == 400
    st, _, obj = api.json("POST", CM, b"[" * depth, content_type="application/json")
    assert st == 400
    st, _, body = api.request("GET", "/healthz")
    assert (st, body) == (200, b"ok")


def test_deeply_nested_yaml_400_and_server_survives(api):
    depth = 5000
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deepy\ndata:\n  k: " \
        + b"[" * depth + b"]" * depth + b"\n"
    st, _, obj = api.json("POST", CM, body, content_type="application/yaml")
    assert st == 400
    assert_status(obj, 400, "BadRequest")
    assert api.request("GET", "/healthz")[0] == 200


def test_namespace_mismatch_400(api):
    st, _, obj = api.post(CM, cm_body(uniq("wrongns"), ns="kube-system"))
    assert st == 400
    assert_status(obj, 400, "BadRequest")
    assert "does not match the namespace" in obj["message"]


def test_body_namespace_matching_url_ok(api):
    obj = create(api, CM, cm_body(uniq("rightns"), ns=NS))
    assert obj["metadata"]["namespace"] == NS


def test_invalid_name_422(api):
    st, _, obj = api.post(CM, cm_body("Not_A_Valid_Name"))
    assert st == 422
    assert_status(obj, 422, "Invalid")
    assert obj["details"]["name"] == "Not_A_Valid_Name"
    assert obj["details"]["kind"] == "ConfigMap"
    causes = obj["details"]["causes"]
    assert any(c["field"] == "metadata.name" and c["reason"] == "FieldValueInvalid"
               for c in causes), causes
    assert obj["message"].startswith('ConfigMap "Not_A_Valid_Name" is invalid')


def test_invalid_pod_multiple_causes_422(api):
    body = pod_body(uniq("badpod"), containers=[{"name": "c"}], restartPolicy="Sometimes")
    st, _, obj = api.post(PODS, body)
    assert st == 422
    assert_status(obj, 422, "Invalid")
    fields = {c["field"] for c in obj["details"]["causes"]}
    assert "spec.containers[0].image" in fields
    assert "spec.restartPolicy" in fields


def test_field_validation_warn(api):
    name = uniq("warn")
    body = pod_body(name, containers=[{"name": "c", "image": "busybox", "imagee": "x"}])
    body["spec"]["bogusField"] = True
    st, hdrs, obj = api.post(PODS + "?fieldValidation=Warn", body)
    assert st == 201, obj
    warnings = hdrs.get_all("Warning") or []
    joined = "\n".join(warnings)
    assert 'unknown field \\"spec.containers[0].imagee\\"' in joined, warnings
    assert 'unknown field \\"spec.bogusField\\"' in joined, warnings
    for w in warnings:
        assert w.startswith('299 - "'), w
    assert "imagee" not in obj["spec"]["containers"][0]


def test_field_validation_ignore(api):
    body = pod_body(uniq("ign"), containers=[{"name": "c", "image": "busybox", "imagee": "x"}])
    st, hdrs, obj = api.post(PODS + "?fieldValidation=Ignore", body)
    assert st == 201, obj
    assert not hdrs.get_all("Warning")


def test_field_validation_strict(api):
    name = uniq("strict")
    body = pod_body(name, containers=[{"name": "c", "image": "busybox", "imagee": "x"}])
    st, _, obj = api.post(PODS + "?fieldValidation=Strict", body)
    assert st == 400
    assert_status(obj, 400, "BadRequest")
    assert 'unknown field "spec.containers[0].imagee"' in obj["message"]
    assert api.get(PODS + "/" + name)[0] == 404


def test_field_validation_strict_duplicate_field(api):
    name = uniq("dupfield")
    body = ('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"},'
            '"data":{"a":"1"},"data":{"b":"2"}}' % name).encode()
    st, _, obj = api.json("POST", CM + "?fieldValidation=Strict", body,
                          content_type="application/json")
    assert st == 400
    assert 'duplicate field "data"' in obj["message"]


def test_generate_name(api):
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"},
            "data": {"a": "b"}}
    a = create(api, CM, body)
    b = create(api, CM, body)
    for obj in (a, b):
        assert obj["metadata"]["generateName"] == "gen-"
        assert re.fullmatch(r"gen-[a-z0-9]{5}", obj["metadata"]["name"]), obj["metadata"]
        assert api.get(CM + "/" + obj["metadata"]["name"])[0] == 200
    assert a["metadata"]["name"] != b["metadata"]["name"]


# --------------------------------------------------------------------------- metadata


def test_resource_version_increases_on_every_write(api):
    name = uniq("rv")
    rvs = []
    obj = create(api, CM, cm_body(name, {"n": "0"}))
    rvs.append(obj["metadata"]["resourceVersion"])
    for i in range(1, 4):
        obj["data"] = {"n": str(i)}
        st, _, obj = api.put(CM + "/" + name, obj)
        assert st == 200, obj
        rvs.append(obj["metadata"]["resourceVersion"])
    st, _, obj = api.patch(CM + "/" + name, {"metadata": {"labels": {"x": "y"}}})
    assert st == 200, obj
    rvs.append(obj["metadata"]["resourceVersion"])
    # a write to another object also advances the global resourceVersion
    other = create(api, CM, cm_body(uniq("rv-other")))
    rvs.append(other["metadata"]["resourceVersion"])
    st, _, obj = api.get(CM + "/" + name)
    assert obj["metadata"]["resourceVersion"] == rvs[-2]
    for rv in rvs:
        assert isinstance(rv, str) and re.fullmatch(r"[1-9][0-9]*", rv), rvs
    ints = [int(rv) for rv in rvs]
    assert ints == sorted(ints) and len(set(ints)) == len(ints), rvs
    # the list's resourceVersion is at least the newest object's
    st, _, lst = api.get(CM)
    assert int(lst["metadata"]["resourceVersion"]) >= ints[-1]


def test_no_op_update_keeps_resource_version(api):
    """Upstream skips the storage write when an update changes nothing (etcd3 store
    GuaranteedUpdate compares the encoded bytes), so the resourceVersion stays and no
    MODIFIED watch event is sent."""
    name = uniq("noop")
    obj = create(api, CM, cm_body(name, {"a": "1"}))
    rv = obj["metadata"]["resourceVersion"]
    st, _, again = api.put(CM + "/" + name, obj)
    assert st == 200
    assert again["metadata"]["resourceVersion"] == rv, "PUT of an unchanged object"
    st, _, again = api.patch(CM + "/" + name, {"data": {"a": "1"}})
    assert st == 200
    assert again["metadata"]["resourceVersion"] == rv, "merge patch that changes nothing"


def test_server_sets_uid_and_creation_timestamp(api):
    obj = create(api, CM, cm_body(uniq("meta"), uid="client-uid",
                                  creationTimestamp="2001-01-01T00:00:00Z"))
    md = obj["metadata"]
    assert md["uid"] != "client-uid"
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", md["uid"])
    assert md["creationTimestamp"] != "2001-01-01T00:00:00Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", md["creationTimestamp"])


def test_generation_bumps_on_spec_change_only(api):
    name = uniq("gen")
    obj = create(api, DEPLOYS, deployment_body(name))
    assert obj["metadata"]["generation"] == 1
    path = DEPLOYS + "/" + name
    st, _, obj = api.patch(path, {"metadata": {"labels": {"extra": "label"}}})
    assert st == 200 and obj["metadata"]["generation"] == 1, obj
    st, _, obj = api.patch(path, {"metadata": {"annotations": {"a": "b"}}})
    assert st == 200 and obj["metadata"]["generation"] == 1
    st, _, obj = api.patch(path, {"spec": {"replicas": 5}})
    assert st == 200 and obj["metadata"]["generation"] == 2
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    st, _, obj = api.put(path, obj)
    assert st == 200 and obj["metadata"]["generation"] == 3
    # status writes never bump generation
    obj["status"] = {"replicas": 1, "observedGeneration": 3}
    st, _, obj = api.put(path + "/status", obj)
    assert st == 200, obj
    assert obj["metadata"]["generation"] == 3
    # client-supplied generation is ignored
    obj["metadata"]["generation"] = 42
    st, _, obj = api.put(path, obj)
    assert st == 200 and obj["metadata"]["generation"] == 3


def test_deployment_defaults(api):
    obj = create(api, DEPLOYS, deployment_body(uniq("ddef")))
    spec = obj["spec"]
    assert spec["strategy"] == {"type": "RollingUpdate",
                                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["progressDeadlineSeconds"] == 600
    pod_spec = spec["template"]["spec"]
    assert pod_spec["restartPolicy"] == "Always"
    assert pod_spec["dnsPolicy"] == "ClusterFirst"


# --------------------------------------------------------------------------- status


def test_deployment_status_subresource(api):
    name = uniq("dstat")
    obj = create(api, DEPLOYS, deployment_body(name, replicas=2))
    path = DEPLOYS + "/" + name
    # PUT /status: status changes, spec changes in the same body are ignored
    obj["status"] = {"replicas": 2, "updatedReplicas": 2, "readyReplicas": 1,
                     "availableReplicas": 1, "observedGeneration": 1}
    obj["spec"]["replicas"] = 7
    st, _, out = api.put(path + "/status", obj)
    assert st == 200, out
    assert out["status"]["readyReplicas"] == 1
    assert out["spec"]["replicas"] == 2
    st, _, cur = api.get(path)
    assert cur["status"]["readyReplicas"] == 1 and cur["spec"]["replicas"] == 2
    # PUT to the main resource: spec changes, status changes are ignored
    cur["spec"]["replicas"] = 3
    cur["status"] = {"replicas": 99, "readyReplicas": 0}
    st, _, out = api.put(path, cur)
    assert st == 200, out
    assert out["spec"]["replicas"] == 3
    assert out["status"]["replicas"] == 2 and out["status"]["readyReplicas"] == 1
    # PATCH to the main resource cannot change status either
    st, _, out = api.patch(path, {"status": {"readyReplicas": 0}})
    assert st == 200
    assert out["status"]["readyReplicas"] == 1
    # and GET /status returns the object
    st, _, out = api.get(path + "/status")
    assert st == 200 and out["kind"] == "Deployment" and out["status"]["readyReplicas"] == 1


def test_pod_status_subresource(api):
    name = uniq("pstat")
    obj = create(api, PODS, pod_body(name))
    path = PODS + "/" + name
    assert obj["status"]["phase"] == "Pending"
    obj["status"] = {"phase": "Running", "podIP": "10.244.0.7",
                     "podIPs": [{"ip": "10.244.0.7"}], "hostIP": "192.168.1.10"}
    obj["spec"]["containers"][0]["image"] = "busybox:9.9"
    obj["spec"]["activeDeadlineSeconds"] = 60
    st, _, out = api.put(path + "/status", obj)
    assert st == 200, out
    assert out["status"]["phase"] == "Running"
    assert out["status"]["podIP"] == "10.244.0.7"
    assert out["spec"]["containers"][0]["image"] == "busybox:1.36"
    assert "activeDeadlineSeconds" not in out["spec"]
    # main resource: image is mutable, status is not
    out["spec"]["containers"][0]["image"] = "busybox:1.37"
    out["status"] = {"phase": "Failed"}
    st, _, out2 = api.put(path, out)
    assert st == 200, out2
    assert out2["spec"]["containers"][0]["image"] == "busybox:1.37"
    assert out2["status"]["phase"] == "Running"
    assert out2["status"]["podIP"] == "10.244.0.7"
    st, _, cur = api.get(path)
    assert cur["status"]["phase"] == "Running"
    assert cur["spec"]["containers"][0]["image"] == "busybox:1.37"


def test_status_patch(api):
    name = uniq("spatch")
    create(api, DEPLOYS, deployment_body(name))
    st, _, out = api.patch(DEPLOYS + "/" + name + "/status",
                           {"status": {"replicas": 1, "observedGeneration": 1},
                            "spec": {"replicas": 9}})
    assert st == 200, out
    assert out["status"]["replicas"] == 1
    assert out["spec"]["replicas"] == 1


# --------------------------------------------------------------------------- pods


def test_pod_defaults(api):
    name = uniq("pdef")
    obj = create(api, PODS, pod_body(name, containers=[
        {"name": "latest", "image": "nginx:latest"},
        {"name": "notag", "image": "nginx"},
        {"name": "tagged", "image": "nginx:1.25"},
        {"name": "digest", "image": "nginx@sha256:" + "a" * 64},
        {"name": "explicit", "image": "nginx", "imagePullPolicy": "Never"},
    ]))
    spec = obj["spec"]
    assert spec["restartPolicy"] == "Always"
    assert spec["dnsPolicy"] == "ClusterFirst"
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["securityContext"] == {}
    policies = {c["name"]: c["imagePullPolicy"] for c in spec["containers"]}
    assert policies == {"latest": "Always", "notag": "Always", "tagged": "IfNotPresent",
                        "digest": "IfNotPresent", "explicit": "Never"}
    for c in spec["containers"]:
        assert c["terminationMessagePath"] == "/dev/termination-log"
        assert c["terminationMessagePolicy"] == "File"
    assert obj["status"]["phase"] == "Pending"
    assert obj["status"]["qosClass"] == "BestEffort"
    # and the defaults were stored
    st, _, cur = api.get(PODS + "/" + name)
    assert cur["spec"]["schedulerName"] == "default-scheduler"
    assert cur["status"]["phase"] == "Pending"


def test_pod_port_protocol_default(api):
    obj = create(api, PODS, pod_body(uniq("pport"), containers=[
        {"name": "c", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]))
    assert obj["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]


@pytest.mark.parametrize("resources,qos", [
    ({"requests": {"cpu": "100m", "memory": "64Mi"},
      "limits": {"cpu": "100m", "memory": "64Mi"}}, "Guaranteed"),
    ({"limits": {"cpu": "200m", "memory": "128Mi"}}, "Guaranteed"),  # requests default to limits
    ({"requests": {"cpu": "100m"}}, "Burstable"),
    ({"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m"}}, "Burstable"),
    ({}, "BestEffort"),
], ids=["guaranteed", "guaranteed-limits-only", "burstable", "burstable-partial", "besteffort"])
def test_pod_qos_class(api, resources, qos):
    container = {"name": "c", "image": "busybox:1.36"}
    if resources:
        container["resources"] = resources
    obj = create(api, PODS, pod_body(uniq("qos"), containers=[container]))
    assert obj["status"]["qosClass"] == qos
    if "limits" in resources and "requests" not in resources:
        assert obj["spec"]["containers"][0]["resources"]["requests"] == resources["limits"]


def test_pod_qos_mixed_containers_burstable(api):
    obj = create(api, PODS, pod_body(uniq("qosmix"), containers=[
        {"name": "a", "image": "busybox:1.36",
         "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
        {"name": "b", "image": "busybox:1.36"},
    ]))
    assert obj["status"]["qosClass"] == "Burstable"


def test_delete_unbound_pod_is_immediate(api):
    name = uniq("unbound")
    create(api, PODS, pod_body(name))
    st, _, obj = api.delete(PODS + "/" + name)
    assert st == 200, obj
    assert obj["metadata"]["name"] == name
    st, _, obj = api.get(PODS + "/" + name)
    assert st == 404
    assert_status(obj, 404, "NotFound")


def test_delete_bound_pod_is_graceful(api):
    name = uniq("bound")
    create(api, PODS, pod_body(name, nodeName="node-1"))
    st, _, obj = api.delete(PODS + "/" + name)
    # Upstream kube-apiserver answers 200 here: 202 only when the object was not deleted
    # immediately AND DeleteOptions.orphanDependents=false (apiserver handlers/delete.go).
    assert st == 200, (st, obj)
    assert obj["kind"] == "Pod"
    assert obj["metadata"]["deletionTimestamp"]
    assert obj["metadata"]["deletionGracePeriodSeconds"] == 30
    st, _, cur = api.get(PODS + "/" + name)
    assert st == 200
    assert cur["metadata"]["deletionTimestamp"] == obj["metadata"]["deletionTimestamp"]
    # deleting again with a grace period of 0 removes it
    st, _, obj = api.delete(PODS + "/" + name, {"apiVersion": "v1", "kind": "DeleteOptions",
                                                "gracePeriodSeconds": 0})
    assert st == 200, obj
    assert api.get(PODS + "/" + name)[0] == 404


def test_delete_with_finalizer(api):
    name = uniq("fin")
    create(api, CM, cm_body(name, finalizers=["example.com/hold"]))
    st, _, obj = api.delete(CM + "/" + name)
    assert st == 200, (st, obj)  # upstream: 200 (see test_delete_bound_pod_is_graceful)
    assert obj["metadata"]["deletionTimestamp"]
    st, _, cur = api.get(CM + "/" + name)
    assert st == 200 and cur["metadata"]["finalizers"] == ["example.com/hold"]
    # removing the last finalizer completes the deletion
    st, _, out = api.patch(CM + "/" + name, {"metadata": {"finalizers": None}})
    assert st == 200, out
    assert api.get(CM + "/" + name)[0] == 404


def test_delete_with_precondition(api):
    name = uniq("precond")
    obj = create(api, CM, cm_body(name))
    st, _, out = api.delete(CM + "/" + name, {"preconditions": {"uid": "wrong-uid"}})
    assert st == 409, out
    assert_status(out, 409, "Conflict")
    st, _, out = api.delete(CM + "/" + name, {"preconditions": {"uid": obj["metadata"]["uid"]}})
    assert st == 200, out
    assert api.get(CM + "/" + name)[0] == 404


# --------------------------------------------------------------------------- bootstrap


def test_system_namespaces_exist(api):
    for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
        st, _, obj = api.get("/api/v1/namespaces/" + ns)
        assert st == 200, ns
        assert obj["status"]["phase"] == "Active"
        assert obj["metadata"]["labels"]["kubernetes.io/metadata.name"] == ns


def test_kubernetes_service_exists(api):
    st, _, obj = api.get("/api/v1/namespaces/default/services/kubernetes")
    assert st == 200
    ip = obj["spec"]["clusterIP"]
    assert ipaddress.ip_address(ip) in SERVICE_CIDR
    assert ip == "10.96.0.1"
    assert obj["spec"]["ports"][0]["port"] == 443


# --------------------------------------------------------------------------- services


def test_service_cluster_ip_allocation(api):
    a = create(api, SVCS, svc_body(uniq("svca")))
    b = create(api, SVCS, svc_body(uniq("svcb")))
    ips = []
    for svc in (a, b):
        ip = svc["spec"]["clusterIP"]
        assert ipaddress.ip_address(ip) in SERVICE_CIDR
        assert svc["spec"]["clusterIPs"] == [ip]
        assert svc["spec"]["type"] == "ClusterIP"
        assert svc["spec"]["sessionAffinity"] == "None"
        assert svc["spec"]["ports"][0]["protocol"] == "TCP"
        ips.append(ip)
    assert ips[0] != ips[1]
    assert "10.96.0.1" not in ips

    # asking for an IP that is already in use
    st, _, obj = api.post(SVCS, svc_body(uniq("svcc"), cluster_ip=ips[0]))
    assert st == 422, obj
    assert_status(obj, 422, "Invalid")
    assert any(c["field"].startswith("spec.clusterIP") for c in obj["details"]["causes"])

    # asking for a free IP in range gets exactly that IP
    wanted = "10.96.200.200"
    c = create(api, SVCS, svc_body(uniq("svcd"), cluster_ip=wanted))
    assert c["spec"]["clusterIP"] == wanted


def test_service_cluster_ip_out_of_range_422(api):
    st, _, obj = api.post(SVCS, svc_body(uniq("svcr"), cluster_ip="192.168.0.10"))
    assert st == 422, obj
    assert_status(obj, 422, "Invalid")


def test_service_cluster_ip_released_on_delete(api):
    name = uniq("svcrel")
    ip = create(api, SVCS, svc_body(name))["spec"]["clusterIP"]
    st, _, _ = api.delete(SVCS + "/" + name)
    assert st == 200
    again = create(api, SVCS, svc_body(uniq("svcre2"), cluster_ip=ip))
    assert again["spec"]["clusterIP"] == ip


def test_service_headless(api):
    obj = create(api, SVCS, svc_body(uniq("headless"), cluster_ip="None"))
    assert obj["spec"]["clusterIP"] == "None"


# --------------------------------------------------------------------------- cluster scoped


def test_cluster_scoped_ignore_namespace(api):
    node = uniq("node")
    st, _, obj = api.post("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                            "metadata": {"name": node, "namespace": "foo"}})
    assert st == 201, obj
    assert "namespace" not in obj["metadata"] or obj["metadata"]["namespace"] == ""
    st, _, obj = api.get("/api/v1/nodes/" + node)
    assert st == 200
    assert not obj["metadata"].get("namespace")

    ns = uniq("nsx")
    st, _, obj = api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": ns, "namespace": "foo"}})
    assert st == 201, obj
    assert not obj["metadata"].get("namespace")
    assert obj["status"]["phase"] == "Active"
    assert obj["spec"]["finalizers"] == ["kubernetes"]


def test_delete_namespace_goes_terminating(api):
    ns = uniq("nsdel")
    create(api, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                       "metadata": {"name": ns}})
    st, _, obj = api.delete("/api/v1/namespaces/" + ns)
    assert st == 200, (st, obj)  # upstream: 200 (see test_delete_bound_pod_is_graceful)
    assert obj["status"]["phase"] == "Terminating"
    assert obj["metadata"]["deletionTimestamp"]
    st, _, obj = api.get("/api/v1/namespaces/" + ns)
    assert st == 200 and obj["status"]["phase"] == "Terminating"
    # no new objects in a terminating namespace
    st, _, obj = api.post("/api/v1/namespaces/%s/configmaps" % ns, cm_body("late"))
    assert st == 403, obj
    assert_status(obj, 403, "Forbidden")


def test_create_in_missing_namespace_404(api):
    st, _, obj = api.post("/api/v1/namespaces/%s/configmaps" % uniq("nons"), cm_body("x"))
    assert st == 404
    assert_status(obj, 404, "NotFound")


# --------------------------------------------------------------------------- encodings


def test_yaml_request_body(api):
    name = uniq("yamlin")
    body = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  labels:\n"
            "    from: yaml\ndata:\n  number: \"42\"\n  multi: |\n    line1\n    line2\n"
            % name).encode()
    st, _, obj = api.json("POST", CM, body, content_type="application/yaml")
    assert st == 201, obj
    assert obj["data"] == {"number": "42", "multi": "line1\nline2\n"}
    assert obj["metadata"]["labels"] == {"from": "yaml"}


def test_accept_yaml(api):
    name = uniq("yamlout")
    create(api, CM, cm_body(name, {"a": "1", "multi": "x\ny\n"}))
    st, hdrs, body = api.request("GET", CM + "/" + name, headers={"Accept": "application/yaml"})
    assert st == 200
    assert hdrs.get("Content-Type").startswith("application/yaml")
    obj = yaml.safe_load(body)
    assert obj["kind"] == "ConfigMap" and obj["metadata"]["name"] == name
    assert obj["data"] == {"a": "1", "multi": "x\ny\n"}
    assert isinstance(obj["metadata"]["resourceVersion"], str)
    # errors are YAML too when YAML is asked for
    st, hdrs, body = api.request("GET", CM + "/missing-" + name,
                                 headers={"Accept": "application/yaml"})
    assert st == 404
    err = yaml.safe_load(body)
    assert err["kind"] == "Status" and err["code"] == 404


def test_accept_unsupported_406(api):
    st, _, body = api.request("GET", CM, headers={"Accept": "text/csv"})
    assert st == 406


def test_table_response(api):
    name = uniq("tblpod")
    create(api, PODS, pod_body(name))
    st, hdrs, obj = api.get(PODS, headers={"Accept": TABLE_ACCEPT})
    assert st == 200
    assert obj["kind"] == "Table"
    assert obj["apiVersion"] == "meta.k8s.io/v1"
    assert obj["metadata"]["resourceVersion"].isdigit()
    cols = obj["columnDefinitions"]
    assert cols[0]["name"] == "Name"
    assert cols[0]["type"] == "string"
    assert cols[0]["format"] == "name"
    assert [c["name"] for c in cols if c.get("priority", 0) == 0] == [
        "Name", "Ready", "Status", "Restarts", "Age"]
    row = [r for r in obj["rows"] if r["cells"][0] == name]
    assert len(row) == 1
    assert len(row[0]["cells"]) == len(cols)
    assert row[0]["cells"][1:4] == ["0/1", "Pending", 0] or \
        row[0]["cells"][1:4] == ["0/1", "Pending", "0"]
    ob = row[0]["object"]
    assert ob["kind"] == "PartialObjectMetadata"
    assert ob["apiVersion"] == "meta.k8s.io/v1"
    assert ob["metadata"]["name"] == name and ob["metadata"]["namespace"] == NS
    assert "spec" not in ob


def test_table_single_object_and_include_object(api):
    name = uniq("tblobj")
    create(api, CM, cm_body(name, {"a": "1", "b": "2"}))
    st, _, obj = api.get(CM + "/" + name, headers={"Accept": TABLE_ACCEPT})
    assert st == 200 and obj["kind"] == "Table"
    assert [c["name"] for c in obj["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert len(obj["rows"]) == 1 and obj["rows"][0]["cells"][:2] == [name, 2]

    st, _, obj = api.get(CM + "?includeObject=Object", headers={"Accept": TABLE_ACCEPT})
    assert st == 200
    row = [r for r in obj["rows"] if r["cells"][0] == name][0]
    assert row["object"]["kind"] == "ConfigMap"
    assert row["object"]["apiVersion"] == "v1"
    assert row["object"]["data"] == {"a": "1", "b": "2"}

    st, _, obj = api.get(CM + "?includeObject=None", headers={"Accept": TABLE_ACCEPT})
    assert st == 200
    row = [r for r in obj["rows"] if r["cells"][0] == name][0]
    assert "object" not in row or row["object"] is None


def test_list_label_and_field_selectors(api):
    tag = uniq("sel")
    for i in range(3):
        create(api, CM, cm_body("%s-%d" % (tag, i), labels={"sel": tag, "i": str(i)}))
    st, _, lst = api.get(CM + "?labelSelector=sel%3D" + tag)
    assert sorted(o["metadata"]["name"] for o in lst["items"]) == [
        "%s-%d" % (tag, i) for i in range(3)]
    st, _, lst = api.get(CM + "?labelSelector=sel%3D" + tag + ",i+in+(0,2)")
    assert sorted(o["metadata"]["name"] for o in lst["items"]) == [tag + "-0", tag + "-2"]
    st, _, lst = api.get(CM + "?fieldSelector=metadata.name%3D" + tag + "-1")
    assert [o["metadata"]["name"] for o in lst["items"]] == [tag + "-1"]



def test_watch_by_name_across_namespaces(api, server):
    """A cluster-wide watch with fieldSelector=metadata.name sees that name in every
    namespace (the root CA publisher and ServiceAccounts controllers watch this way)."""
    import urllib.request
    name = uniq("byname")
    other_ns = uniq("byname-ns")
    create(api, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other_ns}})
    _, _, lst = api.get("/api/v1/configmaps?limit=1")
    rv = lst["metadata"]["resourceVersion"]
    url = "%s/api/v1/configmaps?watch=true&resourceVersion=%s&fieldSelector=metadata.name%%3D%s" % (
        server.base_url, rv, name)
    with urllib.request.urlopen(url, timeout=10, context=server.ssl_context) as resp:
        create(api, CM, cm_body(name))
        create(api, CM, cm_body(name + "-not"))
        create(api, "/api/v1/namespaces/%s/configmaps" % other_ns, cm_body(name, ns=other_ns))
        seen = []
        while len(seen) < 2:
            ev = json.loads(resp.readline())
            seen.append((ev["type"], ev["object"]["metadata"]["namespace"], ev["object"]["metadata"]["name"]))
    assert seen == [("ADDED", NS, name), ("ADDED", other_ns, name)], seen
    api.delete("/api/v1/namespaces/" + other_ns)

def test_list_pagination(api):
    tag = uniq("page")
    for i in range(5):
        create(api, CM, cm_body("%s-%d" % (tag, i), labels={"page": tag}))
    names, cont = [], None
    for _ in range(10):
        q = "?labelSelector=page%3D" + tag + "&limit=2"
        if cont:
            q += "&continue=" + cont
        st, _, lst = api.get(CM + q)
        assert st == 200
        assert len(lst["items"]) <= 2
        names += [o["metadata"]["name"] for o in lst["items"]]
        cont = lst["metadata"].get("continue")
        if not cont:
            break
    assert sorted(names) == ["%s-%d" % (tag, i) for i in range(5)]


# --------------------------------------------------------------------------- discovery


def test_discovery_api(api):
    st, hdrs, obj = api.get("/api")
    assert st == 200
    assert obj["kind"] == "APIVersions"
    assert obj["versions"] == ["v1"]


def test_discovery_apis(api):
    st, _, obj = api.get("/apis")
    assert st == 200
    assert obj["kind"] == "APIGroupList"
    groups = {g["name"]: g for g in obj["groups"]}
    for name in ("apps", "coordination.k8s.io", "events.k8s.io"):
        g = groups[name]
        assert g["preferredVersion"] == {"groupVersion": name + "/v1", "version": "v1"}
        assert {"groupVersion": name + "/v1", "version": "v1"} in g["versions"]
    # Each group once, each of its versions once (authorization.k8s.io used to be three).
    names = [g["name"] for g in obj["groups"]]
    assert len(names) == len(set(names)), names
    for g in obj["groups"]:
        assert len(g["versions"]) == len({v["version"] for v in g["versions"]}), g


def test_discovery_api_v1(api):
    st, _, obj = api.get("/api/v1")
    assert st == 200
    assert obj["kind"] == "APIResourceList"
    assert obj["groupVersion"] == "v1"
    res = {r["name"]: r for r in obj["resources"]}
    pods = res["pods"]
    assert pods["kind"] == "Pod"
    assert pods["namespaced"] is True
    assert pods["singularName"] == "pod"
    assert pods["shortNames"] == ["po"]
    assert pods["categories"] == ["all"]
    assert set(pods["verbs"]) >= {"create", "delete", "deletecollection", "get", "list",
                                  "patch", "update", "watch"}
    assert "pods/status" in res
    assert res["services"]["shortNames"] == ["svc"]
    assert res["services"]["categories"] == ["all"]
    assert res["namespaces"]["namespaced"] is False
    assert res["nodes"]["namespaced"] is False
    assert res["configmaps"]["shortNames"] == ["cm"]
    assert "categories" not in res["configmaps"] or "all" not in res["configmaps"]["categories"]
    for r in ("configmaps", "secrets", "serviceaccounts", "events", "podtemplates",
              "endpoints"):
        assert r in res, r


def test_discovery_apps_v1(api):
    st, _, obj = api.get("/apis/apps/v1")
    assert st == 200
    assert obj["kind"] == "APIResourceList"
    assert obj["groupVersion"] == "apps/v1"
    res = {r["name"]: r for r in obj["resources"]}
    d = res["deployments"]
    assert d["kind"] == "Deployment" and d["namespaced"] is True
    assert d["shortNames"] == ["deploy"]
    assert d["categories"] == ["all"]
    assert "deployments/status" in res
    assert res["replicasets"]["shortNames"] == ["rs"]


def test_discovery_other_groups(api):
    st, _, obj = api.get("/apis/coordination.k8s.io/v1")
    assert st == 200 and "leases" in {r["name"] for r in obj["resources"]}
    st, _, obj = api.get("/apis/events.k8s.io/v1")
    assert st == 200
    ev = [r for r in obj["resources"] if r["name"] == "events"][0]
    assert ev["kind"] == "Event"
    st, _, obj = api.get("/apis/nonexistent.example.com/v1")
    assert st == 404


def test_openapi_v3(api):
    st, _, root = api.get("/openapi/v3")
    assert st == 200
    paths = root["paths"]
    for gv in ("api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1", "apis/events.k8s.io/v1"):
        assert gv in paths, gv
        assert paths[gv]["serverRelativeURL"].startswith("/openapi/v3/" + gv)

    for gv in ("api/v1", "apis/apps/v1"):
        st, _, doc = api.get(paths[gv]["serverRelativeURL"])
        assert st == 200, gv
        assert doc["openapi"].startswith("3.")
        patches = 0
        for path, item in doc["paths"].items():
            if "patch" not in item:
                continue
            patches += 1
            op = item["patch"]
            params = op.get("parameters", []) + item.get("parameters", [])
            names = set()
            for p in params:
                if "$ref" in p:
                    ref = p["$ref"].split("/")[-1]
                    p = doc["components"]["parameters"][ref]
                names.add(p["name"])
            assert "fieldValidation" in names, path
            gvk = op["x-kubernetes-group-version-kind"]
            assert gvk["version"] == "v1"
            assert gvk["group"] == ("" if gv == "api/v1" else "apps")
        assert patches >= 3, gv
        schemas = doc["components"]["schemas"]
        kinds = {(g["group"], g["kind"]) for s in schemas.values()
                 for g in s.get("x-kubernetes-group-version-kind", [])}
        if gv == "api/v1":
            assert ("", "Pod") in kinds and ("", "ConfigMap") in kinds
        else:
            assert ("apps", "Deployment") in kinds


def test_openapi_v2_answers(api):
    st, hdrs, body = api.request(
        "GET", "/openapi/v2",
        headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
    assert st == 200


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz"])
def test_health_endpoints(api, path):
    st, _, body = api.request("GET", path)
    assert st == 200
    assert body == b"ok"


def test_version_endpoint(api):
    st, hdrs, obj = api.get("/version")
    assert st == 200
    assert hdrs.get("Content-Type").startswith("application/json")
    assert re.fullmatch(r"v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                        r"(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?", obj["gitVersion"]), obj
    major, minor = obj["gitVersion"][1:].split(".")[:2]
    assert obj["major"] == major and obj["minor"] == minor


def test_concurrent_requests(api):
    """Many parallel clients; kubectl does discovery in parallel."""
    errors = []

    def worker(i):
        try:
            for path in ("/api/v1", "/apis/apps/v1", "/version", CM):
                st, _, _ = api.request("GET", path, timeout=10)
                if st != 200:
                    errors.append((path, st))
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
